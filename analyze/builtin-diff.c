/*
 * builtin-diff.c - "analyze diff BASE NEW": load both traces with the same
 * filters as tree and flat, compare them (diff.c) and print the diff's tree
 * or flat rows (render_diff.c) or export the diff profile (whole:
 * --significant is refused there, see cmd_diff).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "builtin.h"
#include "diff.h"
#include "export.h"
#include "options.h"
#include "output.h"
#include "report.h"

enum {
	OPT_FLAT = OPTION_COMMAND_FIRST,
	OPT_NOISEFLOOR,
	OPT_MAXDEPTH,
	OPT_LIMIT,
	OPT_NO_NORMALIZE,
	OPT_CONFIDENCE,
	OPT_SIGNIFICANT,
};

enum diff_format { FORMAT_TEXT, FORMAT_TSV, FORMAT_FOLDED, FORMAT_PPROF, FORMAT_SPEEDSCOPE };

static const char *const format_names[] = {"text", "tsv", "folded", "pprof", "speedscope"};

static const struct option diff_long_options[] = {
	{"flat", no_argument, NULL, OPT_FLAT},
	{"noisefloor", required_argument, NULL, OPT_NOISEFLOOR},
	{"maxdepth", required_argument, NULL, OPT_MAXDEPTH},
	{"limit", required_argument, NULL, OPT_LIMIT},
	{"no-normalize", no_argument, NULL, OPT_NO_NORMALIZE},
	{"confidence", required_argument, NULL, OPT_CONFIDENCE},
	{"significant", no_argument, NULL, OPT_SIGNIFICANT},
	{"format", required_argument, NULL, 'f'},
	{"output", required_argument, NULL, 'o'},
	{NULL, 0, NULL, 0},
};

static const char diff_help[] =
	"      --flat              one row per function (per line with --lines) instead\n"
	"                          of the call tree\n"
	"      --noisefloor X      tree: as tree's, on each run's own counts\n"
	"      --maxdepth N        tree: print at most N levels\n"
	"      --limit N           flat: print the first N rows only\n"
	"      --no-normalize      compare raw values (e.g. to see that total CPU grew);\n"
	"                          by default each new value is multiplied by base\n"
	"                          total / new total first, so both runs weigh the same\n"
	"                          and a change is a change of share\n"
	"      --confidence C      of the noise test, between 0 and 1 (default 0.99)\n"
	"      --significant       hide the rows whose change is within sampling noise\n"
	"                          (text and tsv; the exports refuse it: a viewer adds\n"
	"                          their stacks up into rows of its own)\n"
	"  -f, --format FORMAT     text (default); tsv: flat rows for scripts (base, new,\n"
	"                          delta, delta_percent, p, p_adjusted, significant,\n"
	"                          base_count, new_count, file, line, function, address,\n"
	"                          inlined); folded: \"stack base new\" lines, the input\n"
	"                          of flamegraph.pl's differential flame graphs (new\n"
	"                          scaled as above); pprof: the profile go tool pprof\n"
	"                          -normalize -diff_base=BASE NEW builds: new samples\n"
	"                          scaled, base samples negated and labelled\n"
	"                          pprof::base=true, so -top shows new - base and\n"
	"                          percentages of base's total; speedscope: the new\n"
	"                          run's threads, then the base run's as more profiles\n"
	"  -o, --output FILE       write to FILE (default: standard output, '-')\n";

struct diff_args {
	const struct analyze_command *cmd;
	struct diff_view view;
	int normalize;
	double confidence;
	enum diff_format format;
	const char *output;
};

static int diff_handle(int opt, const char *arg, void *ctx)
{
	struct diff_args *a = ctx;
	switch (opt) {
	case OPT_FLAT:
		a->view.flat = 1;
		return 0;
	case OPT_NOISEFLOOR:
		if (parse_double(arg, &a->view.noisefloor) || a->view.noisefloor < 0) {
			usage_error(a->cmd, "--noisefloor wants a number >= 0, not '%s'", arg);
			return -1;
		}
		return 0;
	case OPT_MAXDEPTH:
		if (parse_u64(arg, &a->view.maxdepth) || a->view.maxdepth == 0) {
			usage_error(a->cmd, "--maxdepth wants a depth >= 1, not '%s'", arg);
			return -1;
		}
		return 0;
	case OPT_LIMIT:
		if (parse_u64(arg, &a->view.limit)) {
			usage_error(a->cmd, "--limit wants a number of rows, not '%s'", arg);
			return -1;
		}
		return 0;
	case OPT_NO_NORMALIZE:
		a->normalize = 0;
		return 0;
	case OPT_CONFIDENCE:
		return parse_confidence(a->cmd, arg, &a->confidence);
	case OPT_SIGNIFICANT:
		a->view.significant_only = 1;
		return 0;
	case 'f':
		for (size_t i = 0; i < sizeof(format_names) / sizeof(format_names[0]); i++) {
			if (!strcmp(arg, format_names[i])) {
				a->format = (enum diff_format)i;
				return 0;
			}
		}
		usage_error(a->cmd, "--format wants text, tsv, folded, pprof or speedscope, not '%s'", arg);
		return -1;
	case 'o':
		a->output = arg;
		return 0;
	}
	usage_error(a->cmd, "unknown option");
	return -1;
}

/* Load messages say which run they are about: "new trace b.zst: ...". */
struct run_sink {
	struct diag_sink sink;
	const char *role;
};

static void run_message(void *ctx, enum diag_level level, const char *text)
{
	const struct run_sink *rs = ctx;
	diag(diag_stderr_sink(), level, "%s trace %s", rs->role, text);
}

static void run_progress(void *ctx, const char *text)
{
	(void)ctx;
	diag_progress(diag_stderr_sink(), "%s", text);
}

static struct profile *load_run(struct analyze_options *o, const char *path, const char *role)
{
	struct run_sink rs = {{run_message, run_progress, NULL}, role};
	rs.sink.ctx = &rs;
	o->trace = path;
	o->load.diag = &rs.sink;
	struct profile *p = load_trace(path, &o->load, NULL);
	o->load.diag = diag_stderr_sink();
	return p ? filter_profile_consume(p, &o->filter) : NULL;
}

static int write_output(const struct diff_args *a, struct analyze_options *o, const struct diff *d)
{
	struct output out;
	if (output_open(&out, a->output) < 0) {
		fprintf(stderr, "analyze diff: %s: %s\n", a->output, strerror(errno));
		return 1;
	}
	if (out.path)
		o->color = 0; /* colors only on a terminal */
	int ok = 1;
	if (a->format == FORMAT_TEXT || a->format == FORMAT_TSV) {
		struct report r;
		report_init(&r, out.file, d->p, o, DIFF_VALUE);
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
			fprintf(stderr, "analyze diff: writing standard output: %s\n", strerror(saved));
		return finish_output(a->cmd) || !ok;
	}
	if (output_close(&out, ok) < 0 && ok) {
		ok = 0;
		saved = errno;
	}
	if (!ok)
		fprintf(stderr, "analyze diff: writing %s: %s\n", a->output, strerror(saved));
	return ok ? 0 : 1;
}

int cmd_diff(int argc, char **argv)
{
	struct diff_args a = {.normalize = 1, .confidence = DIFF_DEFAULT_CONFIDENCE};
	const struct analyze_command cmd = {
		.name = "diff",
		.synopsis = "analyze diff [options] BASE NEW",
		.summary = "Compare two traces: the call tree (or flat rows) of the changes from BASE to\n"
			   "NEW, largest first, each with base's value, new's, the change and the change\n"
			   "as a share of base's total, frames matched by module and function name (and\n"
			   "file:line with --lines), never by address. Each row says whether its change\n"
			   "is beyond sampling noise: a two-proportion z-test on the samples behind it\n"
			   "(Poisson counts with --no-normalize), Holm-Bonferroni-corrected over the rows\n"
			   "shown, so that two runs of one program mark no row at the stated confidence;\n"
			   "'*' beyond noise, '~' within it, '=' unchanged. Exact traces (no sampling)\n"
			   "have no noise: every change is marked. The filters apply to both runs first.",
		.help = diff_help,
		.groups = OPTGROUP_LOAD | OPTGROUP_PROGRAMS | OPTGROUP_FILTER | OPTGROUP_SELECT | OPTGROUP_MINCOUNT | OPTGROUP_LINES |
			  OPTGROUP_COMBINE | OPTGROUP_DISPLAY | OPTGROUP_PAGER,
		.operands = "BASE NEW",
		.options = diff_long_options,
		.short_options = "f:o:",
		.handle = diff_handle,
		.ctx = &a,
	};
	a.cmd = &cmd;
	struct analyze_options o;
	int rc = analyze_options_parse(argc, argv, &cmd, &o);
	if (rc >= 0)
		return rc;
	if (a.format == FORMAT_PPROF && (!a.output || !strcmp(a.output, "-")) && isatty(STDOUT_FILENO)) {
		rc = usage_error(&cmd, "pprof output is binary; use -o FILE or a pipe");
		analyze_options_free(&o);
		return rc;
	}
	/* A row's test is of the rows shown together (Holm over them): a stack
	 * is no such row, and a viewer that sums kept stacks into its own rows
	 * (pprof -top by function, a flame graph's frames) would show sums of
	 * the significant part of each, figures no test stands behind. */
	if (a.view.significant_only && a.format != FORMAT_TEXT && a.format != FORMAT_TSV) {
		rc = usage_error(&cmd, "--significant hides rows of the text and tsv reports; %s keeps every stack",
				 format_names[a.format]);
		analyze_options_free(&o);
		return rc;
	}
	const char *base_path = o.operands[0], *new_path = o.operands[1];
	struct profile *base = load_run(&o, base_path, "base");
	struct profile *new = base ? load_run(&o, new_path, "new") : NULL;
	rc = 1;
	if (base && new) {
		struct diff d;
		struct diff_options dopt = {.value_name = o.value_name, .lines = o.lines, .normalize = a.normalize,
					    .confidence = a.confidence, .diag = diag_stderr_sink(),
					    .threads_filtered = o.filter.ntids > 0};
		char err[1024];
		if (diff_build(&d, base, base_path, new, new_path, &dopt, err, sizeof(err)) < 0) {
			if (o.value_name)
				rc = usage_error(&cmd, "%s", err);
			else
				fprintf(stderr, "analyze diff: %s\n", err);
		} else {
			rc = write_output(&a, &o, &d);
			diff_free(&d);
		}
	}
	profile_free(base);
	profile_free(new);
	analyze_options_free(&o);
	return rc;
}
