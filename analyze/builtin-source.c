/*
 * builtin-source.c - "analyze source": parse the options, load, print the
 * per-line costs of one source file or of the costliest ones
 * (render_source.c, source.h), or with --asm the per-instruction costs of
 * functions (render_asm.c, disasm.h).
 */
#include <string.h>

#include "builtin.h"
#include "options.h"
#include "report.h"

enum { OPT_FILES = OPTION_COMMAND_FIRST, OPT_TOP, OPT_CONTEXT, OPT_FORMAT, OPT_ASM };

static const struct option source_long_options[] = {
	{"files", required_argument, NULL, OPT_FILES},
	{"top", required_argument, NULL, OPT_TOP},
	{"context", required_argument, NULL, OPT_CONTEXT},
	{"format", required_argument, NULL, OPT_FORMAT},
	{"asm", required_argument, NULL, OPT_ASM},
	{NULL, 0, NULL, 0},
};

struct source_args {
	const struct analyze_command *cmd;
	struct source_options so;
};

static int count_option(const struct source_args *a, const char *name, const char *arg, uint32_t *out)
{
	uint64_t v;
	if (parse_u64(arg, &v) || v > 100000) {
		usage_error(a->cmd, "--%s wants a number up to 100000, not '%s'", name, arg);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

static int source_handle(int opt, const char *arg, void *ctx)
{
	struct source_args *a = ctx;
	switch (opt) {
	case OPT_FILES:
		return count_option(a, "files", arg, &a->so.files);
	case OPT_TOP:
		return count_option(a, "top", arg, &a->so.top);
	case OPT_CONTEXT:
		return count_option(a, "context", arg, &a->so.context);
	case OPT_ASM:
		a->so.asm_function = arg;
		return 0;
	case OPT_FORMAT:
		if (!strcmp(arg, "text"))
			a->so.format = SOURCE_FORMAT_TEXT;
		else if (!strcmp(arg, "tsv"))
			a->so.format = SOURCE_FORMAT_TSV;
		else {
			usage_error(a->cmd, "--format wants text or tsv, not '%s'", arg);
			return -1;
		}
		return 0;
	}
	usage_error(a->cmd, "unknown option");
	return -1;
}

int cmd_source(int argc, char **argv)
{
	struct source_args a = {.so = {.files = 5, .top = 5, .context = 2}};
	const struct analyze_command cmd = {
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
		.help = "      --asm FUNCTION      instructions of the functions matching FUNCTION\n"
			"                          (no FILE), the --top hottest marked =>\n"
			"      --files N           without FILE: the N costliest files (default 5)\n"
			"      --top N             without FILE: each file's N costliest lines\n"
			"                          (default 5), the hottest first; with --asm, the N\n"
			"                          instructions marked\n"
			"      --context N         lines of code around each top line (default 2)\n"
			"      --format FORMAT     text (default) or tsv: a header line, then file, line\n"
			"                          and every value type per charged line (line 0:\n"
			"                          unknown), raw integers, fields escaped (\\t \\n \\\\);\n"
			"                          with --asm: function, address, every value type,\n"
			"                          line and instruction per instruction\n",
		.groups = OPTGROUP_LOAD | OPTGROUP_PROGRAMS | OPTGROUP_FILTER | OPTGROUP_COMBINE | OPTGROUP_DISPLAY | OPTGROUP_PAGER,
		.operands = "TRACE FILE",
		.optional_operands = 1,
		.options = source_long_options,
		.handle = source_handle,
		.ctx = &a,
	};
	a.cmd = &cmd;
	struct analyze_options o;
	int rc = analyze_options_parse(argc, argv, &cmd, &o);
	if (rc >= 0)
		return rc;
	a.so.file = o.noperands > 1 ? o.operands[1] : NULL;
	if (a.so.file && a.so.asm_function) {
		rc = usage_error(&cmd, "--asm shows functions, not a FILE: give one or the other");
		analyze_options_free(&o);
		return rc;
	}
	struct profile *p = report_profile(&o);
	uint32_t value = 0;
	if (!p)
		rc = 1; /* report_profile has said what went wrong */
	else if ((rc = options_resolve_value(&cmd, &o, p, &value)) == 0 && !o.value_name)
		value = profile_display_value(p, value); /* time, not timer periods */
	if (rc == 0) {
		struct report r;
		char err[2048];
		report_init(&r, stdout, p, &o, value);
		options_start_pager(&o);
		if ((a.so.asm_function ? asm_report : source_report)(&r, &a.so, err, sizeof(err)) < 0)
			rc = usage_error(&cmd, "%s", err);
		else
			rc = finish_output(&cmd);
	}
	profile_free(p);
	analyze_options_free(&o);
	return rc;
}
