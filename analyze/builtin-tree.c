/*
 * builtin-tree.c - "analyze tree": parse the options, load, print the call
 * tree (render_tree.c) with counts of the chosen value type.
 */
#include <string.h>

#include "builtin.h"
#include "options.h"
#include "report.h"

enum { OPT_NOISEFLOOR = OPTION_COMMAND_FIRST, OPT_NODEFRACTION, OPT_MAXDEPTH, OPT_THREADS };

static const struct option tree_long_options[] = {
	{"noisefloor", required_argument, NULL, OPT_NOISEFLOOR},
	{"nodefraction", required_argument, NULL, OPT_NODEFRACTION},
	{"maxdepth", required_argument, NULL, OPT_MAXDEPTH},
	{"threads", no_argument, NULL, OPT_THREADS},
	{NULL, 0, NULL, 0},
};

static int tree_handle(int opt, const char *arg, void *ctx);

struct tree_args {
	const struct analyze_command *cmd;
	struct tree_options to;
	int nodefraction_given;
};

static int tree_handle(int opt, const char *arg, void *ctx)
{
	struct tree_args *a = ctx;
	switch (opt) {
	case OPT_NOISEFLOOR:
		if (parse_double(arg, &a->to.noisefloor) || a->to.noisefloor < 0) {
			usage_error(a->cmd, "--noisefloor wants a number >= 0, not '%s'", arg);
			return -1;
		}
		return 0;
	case OPT_NODEFRACTION: {
		/* A fraction (0.005, as pprof's -nodefraction) or a percentage (0.5%). */
		char number[64];
		size_t len = strlen(arg);
		int percent = len > 0 && arg[len - 1] == '%';
		snprintf(number, sizeof(number), "%.*s", (int)(len - (size_t)percent), arg);
		double f;
		if (len >= sizeof(number) || parse_double(number, &f) || f < 0 || (percent ? f > 100 : f > 1)) {
			usage_error(a->cmd, "--nodefraction wants a fraction from 0 to 1 or a percentage, not '%s'", arg);
			return -1;
		}
		a->to.nodefraction = percent ? f / 100 : f;
		a->nodefraction_given = 1;
		return 0;
	}
	case OPT_MAXDEPTH:
		if (parse_u64(arg, &a->to.maxdepth) || a->to.maxdepth == 0) {
			usage_error(a->cmd, "--maxdepth wants a depth >= 1, not '%s'", arg);
			return -1;
		}
		return 0;
	case OPT_THREADS:
		a->to.threads = 1;
		return 0;
	}
	usage_error(a->cmd, "unknown option");
	return -1;
}

static void print_tree(const struct report *r, void *ctx)
{
	const struct tree_args *a = ctx;
	struct tree_options to = a->to;
	/* Julia's filters asked for: Julia's output, without pprof's default on top. */
	if (!a->nodefraction_given)
		to.nodefraction = to.noisefloor > 0 || r->o->mincount ? 0 : TREE_DEFAULT_NODEFRACTION;
	tree_report(r, &to);
}

int cmd_tree(int argc, char **argv)
{
	struct tree_args a;
	memset(&a, 0, sizeof(a));
	const struct analyze_command cmd = {
		.name = "tree",
		.synopsis = "analyze tree [options] TRACE",
		.summary = "Print the call tree with counts per node, as Julia's Profile.print does.\n"
			   "Counts are of the chosen value type (--value; by default sample weights in\n"
			   "timer periods); the left column is self count, the next the node's share of\n"
			   "the total. Indentation stops at half the width (128 columns when there is\n"
			   "none); +N says how many levels deeper. By default nodes below 0.5% of the\n"
			   "total are hidden, as pprof does, and a line says how many and how much.",
		.help = "      --nodefraction F    hide a node (and its subtree) below F of the total: a\n"
			"                          fraction or a percentage (default 0.5%, none when\n"
			"                          --noisefloor or --mincount is given); 0 shows all\n"
			"      --noisefloor X      hide a child (and its subtree) whose count is below\n"
			"                          floor(X * sqrt(parent count)); try 2 (Julia's)\n"
			"      --maxdepth N        print at most N levels\n"
			"      --threads           one tree per thread\n",
		.groups = OPTGROUP_LOAD | OPTGROUP_PROGRAMS | OPTGROUP_FILTER | OPTGROUP_SELECT | OPTGROUP_MINCOUNT | OPTGROUP_COMBINE |
			  OPTGROUP_DISPLAY | OPTGROUP_PAGER,
		.options = tree_long_options,
		.handle = tree_handle,
		.ctx = &a,
	};
	a.cmd = &cmd;
	return report_command(argc, argv, &cmd, print_tree, &a);
}
