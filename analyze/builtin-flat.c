/*
 * builtin-flat.c - "analyze flat": parse the options, load, print one row
 * per function, line or address (render_flat.c) as text or TSV.
 */
#include <string.h>

#include "builtin.h"
#include "options.h"
#include "report.h"

enum { OPT_SORTEDBY = OPTION_COMMAND_FIRST, OPT_LIMIT, OPT_FORMAT };

static const struct option flat_long_options[] = {
	{"sortedby", required_argument, NULL, OPT_SORTEDBY},
	{"limit", required_argument, NULL, OPT_LIMIT},
	{"format", required_argument, NULL, OPT_FORMAT},
	{NULL, 0, NULL, 0},
};

struct flat_args {
	const struct analyze_command *cmd;
	struct flat_options fo;
};

static int flat_handle(int opt, const char *arg, void *ctx)
{
	struct flat_args *a = ctx;
	switch (opt) {
	case OPT_SORTEDBY:
		if (!strcmp(arg, "filefuncline"))
			a->fo.sort = FLAT_SORT_FILEFUNCLINE;
		else if (!strcmp(arg, "count"))
			a->fo.sort = FLAT_SORT_COUNT;
		else if (!strcmp(arg, "self") || !strcmp(arg, "overhead"))
			a->fo.sort = FLAT_SORT_SELF;
		else {
			usage_error(a->cmd, "--sortedby wants filefuncline, count or self, not '%s'", arg);
			return -1;
		}
		return 0;
	case OPT_LIMIT:
		if (parse_u64(arg, &a->fo.limit)) {
			usage_error(a->cmd, "--limit wants a number of rows, not '%s'", arg);
			return -1;
		}
		return 0;
	case OPT_FORMAT:
		if (!strcmp(arg, "text"))
			a->fo.format = FLAT_FORMAT_TEXT;
		else if (!strcmp(arg, "tsv"))
			a->fo.format = FLAT_FORMAT_TSV;
		else {
			usage_error(a->cmd, "--format wants text or tsv, not '%s'", arg);
			return -1;
		}
		return 0;
	}
	usage_error(a->cmd, "unknown option");
	return -1;
}

static void print_flat(const struct report *r, void *ctx)
{
	const struct flat_args *a = ctx;
	flat_report(r, &a->fo);
}

int cmd_flat(int argc, char **argv)
{
	struct flat_args a;
	memset(&a, 0, sizeof(a));
	a.fo.sort = FLAT_SORT_SELF; /* the answer first, as perf report and pprof -top */
	const struct analyze_command cmd = {
		.name = "flat",
		.synopsis = "analyze flat [options] TRACE",
		.summary = "Print one row per function with its inclusive count (each sample counted\n"
			   "once per row, even under recursion) and its self count.",
		.help = "      --sortedby KEY      self (the default: largest self cost first, then\n"
			"                          count), count (largest first), or filefuncline\n"
			"                          (Julia's order: file, function, line)\n"
			"      --limit N           print the first N rows only\n"
			"      --format FORMAT     text (default) or tsv: a header line, then per row\n"
			"                          count, self, file, line, function, address, inlined\n"
			"                          and TYPE, TYPE_self for every value type; raw\n"
			"                          integers, nothing cut, fields escaped (\\t \\n \\\\)\n",
		.groups = OPTGROUP_LOAD | OPTGROUP_PROGRAMS | OPTGROUP_FILTER | OPTGROUP_SELECT | OPTGROUP_MINCOUNT | OPTGROUP_LINES |
			  OPTGROUP_COMBINE | OPTGROUP_DISPLAY | OPTGROUP_PAGER,
		.options = flat_long_options,
		.handle = flat_handle,
		.ctx = &a,
	};
	a.cmd = &cmd;
	return report_command(argc, argv, &cmd, print_flat, &a);
}
