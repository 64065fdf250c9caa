/*
 * builtin-tree.c - "analyze tree": parse the options, load, print the call
 * tree (render_tree.c) with counts of the chosen value type.
 */
#include <string.h>

#include "builtin.h"
#include "options.h"
#include "report.h"

struct tree_args {
	struct tree_options to; /* to.nodefraction < 0: not given */
};

/* --nodefraction: a fraction (0.005, as pprof's -nodefraction) or a percentage (0.5%). */
static int parse_nodefraction(const struct analyze_command *cmd, const struct option_row *row, void *target,
			      const char *arg)
{
	char number[64];
	size_t len = strlen(arg);
	int percent = len > 0 && arg[len - 1] == '%';
	snprintf(number, sizeof(number), "%.*s", (int)(len - (size_t)percent), arg);
	double f;
	if (len >= sizeof(number) || parse_double(number, &f) || f < 0 || (percent ? f > 100 : f > 1))
		return usage_error(cmd, "--%s wants a fraction from 0 to 1 or a percentage, not '%s'", row->name, arg);
	*(double *)target = percent ? f / 100 : f;
	return 0;
}

static const struct option_row tree_rows[] = {
	OPT_CALLBACK(0, "nodefraction", "F", struct tree_args, to.nodefraction, parse_nodefraction,
		     "hide a node (and its subtree) below F of the total: a\n"
		     "fraction or a percentage (default 0.5%, none when\n"
		     "--noisefloor or --mincount is given); 0 shows all"),
	OPT_DOUBLE(0, "noisefloor", "X", struct tree_args, to.noisefloor, 0, "a number >= 0",
		   "hide a child (and its subtree) whose count is below\n"
		   "floor(X * sqrt(parent count)); try 2 (Julia's)"),
	OPT_U64(0, "maxdepth", "N", struct tree_args, to.maxdepth, 1, 0, "a depth >= 1", "print at most N levels"),
	OPT_FLAG(0, "threads", struct tree_args, to.threads, 1, "one tree per thread"),
	OPT_END(),
};

static const struct analyze_command tree_command = {
	.name = "tree",
	.synopsis = "analyze tree [options] TRACE...",
	.operands = "TRACE...",
	.summary = "Print the call tree with counts per node, as Julia's Profile.print does.\n"
		   "Counts are of the chosen value type (--value; by default sample weights in\n"
		   "timer periods); the left column is self count, the next the node's share of\n"
		   "the total. Indentation stops at half the width (128 columns when there is\n"
		   "none); +N says how many levels deeper. By default nodes below 0.5% of the\n"
		   "total are hidden, as pprof does, and a line says how many and how much.",
	.groups = OPTGROUP_LOAD | OPTGROUP_PROGRAMS | OPTGROUP_FILTER | OPTGROUP_SELECT | OPTGROUP_MINCOUNT |
		  OPTGROUP_COMBINE | OPTGROUP_DISPLAY | OPTGROUP_PAGER,
	.options = tree_rows,
};

static void print_tree(const struct report *r, void *ctx)
{
	const struct tree_args *a = ctx;
	struct tree_options to = a->to;
	/* Julia's filters asked for: Julia's output, without pprof's default on top. */
	if (to.nodefraction < 0)
		to.nodefraction = to.noisefloor > 0 || r->o->mincount ? 0 : TREE_DEFAULT_NODEFRACTION;
	tree_report(r, &to);
}

int cmd_tree(int argc, char **argv)
{
	struct tree_args a = {.to = {.nodefraction = -1}};
	return report_command(argc, argv, &tree_command, print_tree, &a);
}
