/*
 * builtin-diff.c - "analyze diff BASE NEW": load both traces with the same
 * filters as tree and flat, compare them (diff.c) and print the diff's tree
 * or flat rows (render_diff.c) or export the diff profile (whole:
 * --significant is refused there, see cmd_diff).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builtin.h"
#include "diff.h"
#include "export.h"
#include "file.h"
#include "options.h"
#include "output.h"
#include "report.h"

enum diff_format { FORMAT_TEXT, FORMAT_TSV, FORMAT_FOLDED, FORMAT_PPROF, FORMAT_SPEEDSCOPE };

/* In enum order: format_choices[f].name names f. */
static const struct option_choice format_choices[] = {
	{"text", FORMAT_TEXT}, {"tsv", FORMAT_TSV}, {"folded", FORMAT_FOLDED}, {"pprof", FORMAT_PPROF},
	{"speedscope", FORMAT_SPEEDSCOPE}, {NULL, 0}};

struct diff_args {
	struct diff_view view;
	int normalize;
	double confidence;
	int format; /* enum diff_format */
	const char *output;
	struct option_strings base; /* --base: a set of base runs; the operands are then the new ones */
};

static const struct option_row diff_rows[] = {
	OPT_FLAG(0, "flat", struct diff_args, view.flat, 1,
		 "one row per function (per line with --lines) instead\n"
		 "of the call tree"),
	OPT_DOUBLE(0, "noisefloor", "X", struct diff_args, view.noisefloor, 0, "a number >= 0",
		   "tree: as tree's, on each run's own counts"),
	OPT_U64(0, "maxdepth", "N", struct diff_args, view.maxdepth, 1, 0, "a depth >= 1",
		"tree: print at most N levels"),
	OPT_U64(0, "limit", "N", struct diff_args, view.limit, 0, 0, "a number of rows",
		"flat: print the first N rows only"),
	OPT_FLAG(0, "no-normalize", struct diff_args, normalize, 0,
		 "compare raw values (e.g. to see that total CPU grew);\n"
		 "by default each new value is multiplied by base\n"
		 "total / new total first, so both runs weigh the same\n"
		 "and a change is a change of share"),
	OPT_CALLBACK(0, "confidence", "C", struct diff_args, confidence, option_confidence,
		     "of the noise test, between 0 and 1 (default 0.99)"),
	OPT_FLAG(0, "significant", struct diff_args, view.significant_only, 1,
		 "hide the rows whose change is within sampling noise\n"
		 "(text and tsv; the exports refuse it: a viewer adds\n"
		 "their stacks up into rows of its own)"),
	OPT_CHOICE('f', "format", "FORMAT", struct diff_args, format, format_choices,
		   "text (default); tsv: flat rows for scripts (base, new,\n"
		   "delta, delta_percent, p, p_adjusted, significant,\n"
		   "base_count, new_count, file, line, function, address,\n"
		   "inlined); folded: \"stack base new\" lines, the input\n"
		   "of flamegraph.pl's differential flame graphs (new\n"
		   "scaled as above); pprof: the profile go tool pprof\n"
		   "-normalize -diff_base=BASE NEW builds: new samples\n"
		   "scaled, base samples negated and labelled\n"
		   "pprof::base=true, so -top shows new - base and\n"
		   "percentages of base's total; speedscope: the new\n"
		   "run's threads, then the base run's as more profiles"),
	OPT_STRING('o', "output", "FILE", struct diff_args, output,
		   "write to FILE (default: standard output, '-')"),
	OPT_CALLBACK(0, "base", "TRACE", struct diff_args, base, option_add_string,
		     "a base run (repeatable): compare the set of --base\n"
		     "runs with the set of NEW runs the operands name;\n"
		     "with two or more runs on each side the noise test\n"
		     "is Welch's t-test over the runs as replicates"),
	OPT_END(),
};

static const struct analyze_command diff_command = {
	.name = "diff",
	.synopsis = "analyze diff [options] BASE NEW\n"
		    "       analyze diff [options] --base BASE [--base BASE...] NEW...",
	.summary = "Compare two traces: the call tree (or flat rows) of the changes from BASE to\n"
		   "NEW, largest first, each with base's value, new's, the change and the change\n"
		   "as a share of base's total, frames matched by module and function name (and\n"
		   "file:line with --lines), never by address. Each row says whether its change\n"
		   "is beyond sampling noise: a two-proportion z-test on the samples behind it\n"
		   "(Poisson counts with --no-normalize), Holm-Bonferroni-corrected over the rows\n"
		   "shown, so that two runs of one program mark no row at the stated confidence;\n"
		   "'*' beyond noise, '~' within it, '=' unchanged. Exact traces (no sampling)\n"
		   "have no noise: every change is marked. The filters apply to both runs first.\n"
		   "Sets of runs (--base) are each summed; with two or more on each side, a row's\n"
		   "noise is how much it varies from run to run (Welch's t-test on its share of\n"
		   "each run), which holds sampling noise and whatever else differs between runs.",
	.groups = OPTGROUP_LOAD | OPTGROUP_PROGRAMS | OPTGROUP_FILTER | OPTGROUP_SELECT | OPTGROUP_MINCOUNT |
		  OPTGROUP_LINES | OPTGROUP_COMBINE | OPTGROUP_DISPLAY | OPTGROUP_PAGER,
	.operands = "TRACE...",
	.options = diff_rows,
};

static int write_output(const struct diff_args *a, const struct analyze_options *o, const struct diff *d)
{
	struct output out;
	if (output_open(&out, a->output) < 0)
		return runtime_error(&diff_command, "%s: %s", a->output, output_error_text(errno));
	int ok = 1;
	if (a->format == FORMAT_TEXT || a->format == FORMAT_TSV) {
		struct report r;
		report_init(&r, out.file, d->p, o, DIFF_VALUE);
		if (out.path)
			palette_init(&r.pal, 0); /* colors only on a terminal */
		struct diff_view v = a->view;
		v.tsv = a->format == FORMAT_TSV;
		if (!out.path)
			options_start_pager(o);
		diff_report(&r, d, &v);
		ok = !ferror(out.file);
	} else {
		const struct export_options eo = {.value = DIFF_VALUE, .lines = o->lines, .mincount = o->mincount};
		int (*write)(const struct profile *, const struct export_options *, FILE *) =
			a->format == FORMAT_FOLDED ? export_folded
			: a->format == FORMAT_PPROF ? export_pprof
						    : export_speedscope;
		ok = write(d->p, &eo, out.file) == 0;
	}
	int saved = errno;
	if (!out.path) {
		if (!ok)
			runtime_error(&diff_command, "writing standard output: %s", strerror(saved));
		return finish_output(&diff_command) || !ok;
	}
	if (output_close(&out, ok) < 0 && ok) {
		ok = 0;
		saved = errno;
	}
	return ok ? 0 : runtime_error(&diff_command, "writing %s: %s", a->output, strerror(saved));
}

int cmd_diff(int argc, char **argv)
{
	struct diff_args a = {.normalize = 1, .confidence = DIFF_DEFAULT_CONFIDENCE};
	const struct analyze_command *cmd = &diff_command;
	struct analyze_options o;
	int rc = analyze_options_parse(argc, argv, cmd, &a, &o);
	if (rc >= 0)
		return rc;
	if (a.format == FORMAT_PPROF && (!a.output || !strcmp(a.output, "-")) && isatty(STDOUT_FILENO)) {
		rc = usage_error(cmd, "pprof output is binary; use -o FILE or a pipe");
		analyze_options_free(&o);
		return rc;
	}
	/* A row's test is of the rows shown together (Holm over them): a stack
	 * is no such row, and a viewer that sums kept stacks into its own rows
	 * (pprof -top by function, a flame graph's frames) would show sums of
	 * the significant part of each, figures no test stands behind. */
	if (a.view.significant_only && a.format != FORMAT_TEXT && a.format != FORMAT_TSV) {
		rc = usage_error(cmd, "--significant hides rows of the text and tsv reports; %s keeps every stack",
				 format_choices[a.format].name);
		analyze_options_free(&o);
		return rc;
	}
	struct diff d;
	struct diff_options dopt = {.value_name = o.value_name, .lines = o.lines, .normalize = a.normalize,
				    .confidence = a.confidence, .diag = diag_stderr_sink()};
	char err[1024];
	if (!a.base.n && o.noperands != 2) {
		rc = usage_error(cmd, o.noperands < 2 ? "missing NEW operand" : "unexpected operand '%s' (sets of runs: --base BASE... NEW...)",
				 o.noperands < 2 ? "" : o.operands[2]);
		free(a.base.items);
		analyze_options_free(&o);
		return rc;
	}
	/* Without --base: BASE NEW; with it, every operand is a new run. */
	const char *const *base = a.base.n ? a.base.items : o.operands;
	int nbase = a.base.n ? (int)a.base.n : 1;
	rc = diff_load_sets(&d, base, nbase, o.operands + (a.base.n ? 0 : 1), o.noperands - (a.base.n ? 0 : 1),
			    &o.load, &o.filter, &dopt, err, sizeof(err));
	if (rc == DIFF_INCOMPARABLE) /* a usage error when --value named the type */
		rc = o.value_name ? usage_error(cmd, "%s", err) : runtime_error(cmd, "%s", err);
	else if (rc == DIFF_UNREADABLE)
		rc = 1; /* the load said why */
	else
		rc = write_output(&a, &o, &d);
	diff_free(&d);
	free(a.base.items);
	analyze_options_free(&o);
	return rc;
}
