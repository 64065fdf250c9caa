/*
 * builtin-tree.c - "analyze tree": parse the options, load, print the call
 * tree (render_tree.c) with counts of the chosen value type.
 */
#include <string.h>

#include "builtin.h"
#include "options.h"
#include "report.h"

enum { OPT_NOISEFLOOR = OPTION_COMMAND_FIRST, OPT_MAXDEPTH, OPT_THREADS };

static const struct option tree_long_options[] = {
	{"noisefloor", required_argument, NULL, OPT_NOISEFLOOR},
	{"maxdepth", required_argument, NULL, OPT_MAXDEPTH},
	{"threads", no_argument, NULL, OPT_THREADS},
	{NULL, 0, NULL, 0},
};

static int tree_handle(int opt, const char *arg, void *ctx);

struct tree_args {
	const struct analyze_command *cmd;
	struct tree_options to;
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
	tree_report(r, &a->to);
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
			   "timer periods); the left column is self count. Indentation stops at half the\n"
			   "width (128 columns when there is none); +N says how many levels deeper.",
		.help = "      --noisefloor X      hide a child (and its subtree) whose count is below\n"
			"                          floor(X * sqrt(parent count)); try 2\n"

			"      --maxdepth N        print at most N levels\n"
			"      --threads           one tree per thread\n",
		.groups = OPTGROUP_LOAD | OPTGROUP_PROGRAMS | OPTGROUP_FILTER | OPTGROUP_SELECT | OPTGROUP_MINCOUNT | OPTGROUP_COMBINE |
			  OPTGROUP_DISPLAY,
		.options = tree_long_options,
		.handle = tree_handle,
		.ctx = &a,
	};
	a.cmd = &cmd;
	return report_command(argc, argv, &cmd, print_tree, &a);
}
