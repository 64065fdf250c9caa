/*
 * builtin-export.c - `analyze export`: load a trace, apply the same filters
 * as tree and flat, and write it for another tool: folded stacks
 * (flamegraph.pl, inferno), speedscope JSON or pprof (go tool pprof).
 *
 * The formats themselves live in formats/profile/export_*.c; this file is options
 * and loading; output.h says where the bytes go (a file given with -o appears
 * only once complete).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builtin.h"
#include "export.h"
#include "file.h"
#include "options.h"
#include "output.h"
#include "report.h"

typedef int (*exporter_fn)(const struct profile *, const struct export_options *, FILE *);

enum export_format { FORMAT_FOLDED, FORMAT_SPEEDSCOPE, FORMAT_PPROF };

static const struct {
	exporter_fn write;
	int binary; /* not for a terminal */
} formats[] = {
	[FORMAT_FOLDED] = {export_folded, 0},
	[FORMAT_SPEEDSCOPE] = {export_speedscope, 0},
	[FORMAT_PPROF] = {export_pprof, 1},
};

static const struct option_choice format_choices[] = {
	{"folded", FORMAT_FOLDED}, {"speedscope", FORMAT_SPEEDSCOPE}, {"pprof", FORMAT_PPROF}, {NULL, 0}};

struct export_args {
	int format; /* enum export_format, -1 until given */
	const char *output;
	int annotate_inline;
	int thread_roots;
};

static const struct option_row export_rows[] = {
	OPT_CHOICE('f', "format", "FORMAT", struct export_args, format, format_choices,
		   "folded: \"root;...;leaf count\" lines for flamegraph.pl\n"
		   "and inferno (counts of the --value type, as flat's);\n"
		   "speedscope: JSON, one profile per thread, samples in\n"
		   "time order, inline frames expanded;\n"
		   "pprof: gzipped profile.proto for go tool pprof, with\n"
		   "sample labels \"thread\" (name) and \"tid\" (number)\n"
		   "(speedscope and pprof show a count of timer periods,\n"
		   "--value samples, as the CPU time it stands for; pprof\n"
		   "holds every value type, the chosen one its default)"),
	OPT_STRING('o', "output", "FILE", struct export_args, output,
		   "write to FILE (default: standard output, '-')"),
	OPT_FLAG(0, "annotate-inline", struct export_args, annotate_inline, 1,
		 "folded: mark inlined frames with \"_[i]\""),
	OPT_FLAG(0, "thread-roots", struct export_args, thread_roots, 1, "folded: start each stack with its thread"),
	OPT_END(),
};

static const struct analyze_command export_command = {
	.name = "export",
	.synopsis = "analyze export --format folded|speedscope|pprof [-o FILE] [options] TRACE...",
	.operands = "TRACE...",
	.summary = "Write the profile for flamegraph.pl/inferno, speedscope or go tool pprof.",
	.groups = OPTGROUP_LOAD | OPTGROUP_PROGRAMS | OPTGROUP_FILTER | OPTGROUP_SELECT | OPTGROUP_MINCOUNT |
		  OPTGROUP_LINES,
	.options = export_rows,
};

int cmd_export(int argc, char **argv)
{
	struct export_args a = {.format = -1};
	const struct analyze_command *cmd = &export_command;
	struct analyze_options o;
	int rc = analyze_options_parse(argc, argv, cmd, &a, &o);
	if (rc >= 0)
		return rc;
	if (a.format < 0) {
		rc = usage_error(cmd, "--format is required: folded, speedscope or pprof");
		goto out;
	}
	int to_stdout = !a.output || !strcmp(a.output, "-");
	if (formats[a.format].binary && to_stdout && isatty(STDOUT_FILENO)) {
		rc = usage_error(cmd, "pprof output is binary; use -o FILE or a pipe");
		goto out;
	}

	const char *trace = o.operands[0];
	/* speedscope lists each thread's samples in time order: rows in time, binned past a bound. */
	o.load.sample_times = a.format == FORMAT_SPEEDSCOPE ? LOAD_TIMES_BINNED : LOAD_TIMES_NONE;
	struct profile *p = report_profile(o.operands, o.noperands, &o.load, &o.filter); /* loaded and filtered as tree and flat do */
	if (!p) {
		rc = 1;
		goto out;
	}
	uint32_t value;
	if ((rc = options_resolve_value(cmd, &o, p, trace, &value)) != 0) {
		profile_free(p);
		goto out;
	}
	const struct export_options eo = {
		.value = value,
		.lines = o.lines,
		.annotate_inline = a.annotate_inline,
		.thread_roots = a.thread_roots,
		.mincount = o.mincount,
	};
	struct output d;
	if (output_open(&d, a.output) < 0) {
		rc = runtime_error(cmd, "%s: %s", a.output, output_error_text(errno));
		profile_free(p);
		goto out;
	}
	/* Exports run to hundreds of megabytes; large writes are much cheaper. */
	setvbuf(d.file, NULL, _IOFBF, 1 << 20);
	int ok = formats[a.format].write(p, &eo, d.file) == 0;
	int saved = errno;
	if (output_close(&d, ok) < 0 && ok) {
		ok = 0;
		saved = errno;
	}
	rc = ok ? 0 : runtime_error(cmd, "writing %s: %s", output_name(&d), strerror(saved));
	profile_free(p);
out:
	analyze_options_free(&o);
	return rc;
}
