/*
 * builtin-source.c - "analyze source": parse the options, load, print the
 * per-line costs of one source file or of the costliest ones
 * (render_source.c, source.h), or with --asm the per-instruction costs of
 * functions (render_asm.c, disasm.h).
 */
#include "builtin.h"
#include "options.h"
#include "report.h"

static const struct option_choice format_choices[] = {
	{"text", SOURCE_FORMAT_TEXT}, {"tsv", SOURCE_FORMAT_TSV}, {NULL, 0}};

static const struct option_row source_rows[] = {
	OPT_STRING(0, "asm", "FUNCTION", struct source_options, asm_function,
		   "instructions of the functions matching FUNCTION\n"
		   "(no FILE), the --top hottest marked =>"),
	OPT_U32(0, "files", "N", struct source_options, files, 0, 100000, "a number up to 100000",
		"without FILE: the N costliest files (default 5)"),
	OPT_U32(0, "top", "N", struct source_options, top, 0, 100000, "a number up to 100000",
		"without FILE: each file's N costliest lines\n"
		"(default 5), the hottest first; with --asm, the N\n"
		"instructions marked"),
	OPT_U32(0, "context", "N", struct source_options, context, 0, 100000, "a number up to 100000",
		"lines of code around each top line (default 2)"),
	OPT_CHOICE(0, "format", "FORMAT", struct source_options, format, format_choices,
		   "text (default) or tsv: a header line, then file, line\n"
		   "and every value type per charged line (line 0:\n"
		   "unknown), raw integers, fields escaped (\\t \\n \\\\);\n"
		   "with --asm: function, address, every value type,\n"
		   "line and instruction per instruction"),
	OPT_END(),
};

static const struct analyze_command source_command = {
	.name = "source",
	.synopsis = "analyze source [options] TRACE [FILE]",
	.summary = "Print a source file with the cost of each line between its number and the\n"
		   "code (--value; by default time for CPU traces). Within a file each sample is\n"
		   "charged once, to its innermost frame in that file: callers' lines stay clean,\n"
		   "and a call into a library is charged at the line of the call; inlined code\n"
		   "counts in its own file. FILE matches the end of a recorded path (parser.c,\n"
		   "src/parser.c); without it, the costliest files and their top lines. A source\n"
		   "that is missing, newer than the binary or shorter than the costs need gets a\n"
		   "note, and the costs are still listed by line number.\n"
		   "\n"
		   "With --asm FUNCTION, for code without line info (or to see which\n"
		   "instruction): the disassembly of each function matching FUNCTION, costliest\n"
		   "first, with each instruction's self cost (the samples whose innermost frame\n"
		   "is that instruction; below a hidden system frame or an allocation, the call)\n"
		   "and its percentage of the function, as perf annotate. FUNCTION matches a\n"
		   "function where samples end, as a substring or a POSIX extended regular\n"
		   "expression (pprof -disasm); stripped code is named as the reports show it\n"
		   "(app+0x11a9) and its extent is the FDE of .eh_frame holding it. The module\n"
		   "file is found as for names (--search-dir, --debug-dir) and decoded with\n"
		   "libcapstone (AT&T syntax).",
	.groups = OPTGROUP_LOAD | OPTGROUP_PROGRAMS | OPTGROUP_FILTER | OPTGROUP_COMBINE | OPTGROUP_DISPLAY |
		  OPTGROUP_PAGER,
	.operands = "TRACE FILE",
	.optional_operands = 1,
	.options = source_rows,
};

int cmd_source(int argc, char **argv)
{
	struct source_options so = {.files = 5, .top = 5, .context = 2};
	const struct analyze_command *cmd = &source_command;
	struct analyze_options o;
	int rc = analyze_options_parse(argc, argv, cmd, &so, &o);
	if (rc >= 0)
		return rc;
	so.trace = o.operands[0];
	so.file = o.noperands > 1 ? o.operands[1] : NULL;
	if (so.file && so.asm_function) {
		rc = usage_error(cmd, "--asm shows functions, not a FILE: give one or the other");
		analyze_options_free(&o);
		return rc;
	}
	struct profile *p = report_profile(&so.trace, 1, &o.load, &o.filter);
	uint32_t value = 0;
	if (!p)
		rc = 1; /* report_profile has said what went wrong */
	else if ((rc = options_resolve_value(cmd, &o, p, so.trace, &value)) == 0 && !o.value_name)
		value = profile_display_value(p, value); /* time, not timer periods */
	if (rc == 0) {
		struct report r;
		char err[2048];
		report_init(&r, stdout, p, &o, value);
		options_start_pager(&o);
		if ((so.asm_function ? asm_report : source_report)(&r, &so, err, sizeof(err)) < 0)
			rc = usage_error(cmd, "%s", err);
		else
			rc = finish_output(cmd);
	}
	profile_free(p);
	analyze_options_free(&o);
	return rc;
}
