/*
 * builtin-flat.c - "analyze flat": parse the options, load, print one row
 * per function, line or address (render_flat.c) as text or TSV.
 */
#include "builtin.h"
#include "options.h"
#include "report.h"

static const struct option_choice sort_choices[] = {
	{"filefuncline", FLAT_SORT_FILEFUNCLINE}, {"count", FLAT_SORT_COUNT}, {"self", FLAT_SORT_SELF},
	{"overhead", FLAT_SORT_SELF}, {NULL, 0}};
static const struct option_choice format_choices[] = {
	{"text", FLAT_FORMAT_TEXT}, {"tsv", FLAT_FORMAT_TSV}, {NULL, 0}};

static const struct option_row flat_rows[] = {
	OPT_CHOICE(0, "sortedby", "KEY", struct flat_options, sort, sort_choices,
		   "self (the default: largest self cost first, then\n"
		   "count), count (largest first), or filefuncline\n"
		   "(Julia's order: file, function, line)"),
	OPT_U64(0, "limit", "N", struct flat_options, limit, 0, 0, "a number of rows", "print the first N rows only"),
	OPT_CHOICE(0, "format", "FORMAT", struct flat_options, format, format_choices,
		   "text (default) or tsv: a header line, then per row\n"
		   "count, self, file, line, function, address, inlined\n"
		   "and TYPE, TYPE_self for every value type; raw\n"
		   "integers, nothing cut, fields escaped (\\t \\n \\\\)"),
	OPT_END(),
};

static const struct analyze_command flat_command = {
	.name = "flat",
	.synopsis = "analyze flat [options] TRACE...",
	.operands = "TRACE...",
	.summary = "Print one row per function with its inclusive count (each sample counted\n"
		   "once per row, even under recursion) and its self count.",
	.groups = OPTGROUP_LOAD | OPTGROUP_PROGRAMS | OPTGROUP_FILTER | OPTGROUP_SELECT | OPTGROUP_MINCOUNT |
		  OPTGROUP_LINES | OPTGROUP_COMBINE | OPTGROUP_DISPLAY | OPTGROUP_PAGER,
	.options = flat_rows,
};

static void print_flat(const struct report *r, void *ctx)
{
	flat_report(r, ctx);
}

int cmd_flat(int argc, char **argv)
{
	/* The answer first, as perf report and pprof -top. */
	struct flat_options fo = {.sort = FLAT_SORT_SELF};
	return report_command(argc, argv, &flat_command, print_flat, &fo);
}
