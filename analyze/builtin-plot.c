/*
 * builtin-plot.c - "analyze plot KIND TRACE [NEW]": load the trace (two
 * for diff) with the same filters as tree and flat, and draw it with
 * gnuplot (plot.h: the data in C, the templates in plots/).
 */
#include <string.h>
#include <unistd.h>

#include "builtin.h"
#include "diff.h"
#include "options.h"
#include "plot.h"
#include "report.h"
#include "terminal.h"

struct plot_args {
	const char *output, *keep;
	uint64_t top, bins;
	int normalize;
	double confidence;
};

static const struct option_row plot_rows[] = {
	OPT_STRING('o', "output", "FILE", struct plot_args, output,
		   "draw into FILE, its type from its extension: .png,\n"
		   ".svg, .pdf, or .txt for text (default: text on\n"
		   "standard output, sized to the terminal)"),
	OPT_STRING(0, "keep-data", "DIR", struct plot_args, keep,
		   "keep the data files and the gnuplot script KIND.gp in\n"
		   "DIR, to edit and rerun (cd DIR && gnuplot KIND.gp)"),
	OPT_U64(0, "top", "N", struct plot_args, top, 1, 1000, "a number of functions from 1 to 1000",
		"functions shown: top's bars, timeline's colours,\n"
		"diff's bars (default 20; timeline 8)"),
	OPT_U64(0, "bins", "N", struct plot_args, bins, 2, 100000, "a number from 2 to 100000",
		"time bins of timeline, heap and rate (default 300;\n"
		"text: the width)"),
	OPT_FLAG(0, "no-normalize", struct plot_args, normalize, 0, "diff: compare raw values (as analyze diff)"),
	OPT_CALLBACK(0, "confidence", "C", struct plot_args, confidence, option_confidence,
		     "diff: of the noise test and its error bars (0.99)"),
	OPT_END(),
};

static const struct analyze_command plot_command = {
	.name = "plot",
	.synopsis = "analyze plot [options] timeline|top|heap|rate TRACE\n"
		    "       analyze plot [options] diff BASE NEW",
	.summary = "Draw a trace with gnuplot: timeline (the value per second over the run,\n"
		   "stacked by thread and by the top functions, phases marked), top (bars of the\n"
		   "top functions, self and inclusive), diff (the biggest increases and decreases\n"
		   "from BASE to NEW, sampling noise as error bars), and for allocation traces heap\n"
		   "(live bytes over time, the peak and what is still live at the end) and rate\n"
		   "(allocations or bytes per second). Big traces are binned before plotting.",
	.groups = OPTGROUP_LOAD | OPTGROUP_PROGRAMS | OPTGROUP_FILTER | OPTGROUP_SELECT | OPTGROUP_MINCOUNT |
		  OPTGROUP_LINES | OPTGROUP_COMBINE | OPTGROUP_DISPLAY,
	.operands = "KIND TRACE NEW",
	.optional_operands = 1,
	.options = plot_rows,
};

int cmd_plot(int argc, char **argv)
{
	struct plot_args a = {.normalize = 1, .confidence = DIFF_DEFAULT_CONFIDENCE};
	const struct analyze_command *cmd = &plot_command;
	struct analyze_options o;
	int rc = analyze_options_parse(argc, argv, cmd, &a, &o);
	if (rc >= 0)
		return rc;
	enum plot_kind kind = plot_kind_named(o.operands[0]);
	int text = !a.output || !strcmp(a.output, "-");
	if (kind == PLOT_NKINDS)
		rc = usage_error(cmd, "unknown kind '%s': timeline, top, diff, heap or rate", o.operands[0]);
	else if (kind == PLOT_DIFF && o.noperands != 3)
		rc = usage_error(cmd, "plot diff compares two traces: BASE NEW");
	else if (kind != PLOT_DIFF && o.noperands != 2)
		rc = usage_error(cmd, "plot %s draws one trace, not '%s' too", o.operands[0], o.operands[2]);
	else if (!text && !plot_output_known(a.output))
		rc = usage_error(cmd, "-o %s: the extension says what to draw: .png, .svg, .pdf or .txt", a.output);
	if (rc >= 0) {
		analyze_options_free(&o);
		return rc;
	}
	struct plot_request rq = {
		.kind = kind,
		.o = &o,
		.value = PROFILE_NO_VALUE,
		.trace = o.operands[1],
		.top = (uint32_t)a.top,
		.bins = (uint32_t)a.bins,
		.output = text ? NULL : a.output,
		.text_width = o.width ? o.width : 100,
		.text_height = terminal_height(STDOUT_FILENO) > 2 ? terminal_height(STDOUT_FILENO) - 1 : 30,
		.color = text && o.color,
		.keep_dir = a.keep,
		.diag = diag_stderr_sink(),
	};
	struct profile *p = NULL;
	struct diff d = {0};
	char err[2048], title[4096];
	struct load_options lo = o.load;
	/* Allocations over time: rows per time bin (load_allocs.c). */
	if (kind == PLOT_HEAP || kind == PLOT_RATE || kind == PLOT_TIMELINE)
		lo.alloc_bins = 256;
	/* The plots of one run bin samples by their times: rows in time, binned past a bound. */
	lo.sample_times = kind != PLOT_DIFF ? LOAD_TIMES_BINNED : LOAD_TIMES_NONE;
	if (kind == PLOT_DIFF) {
		struct diff_options dopt = {.value_name = o.value_name, .lines = o.lines, .normalize = a.normalize,
					    .confidence = a.confidence, .diag = diag_stderr_sink()};
		rc = diff_load(&d, o.operands[1], o.operands[2], &lo, &o.filter, &dopt, err, sizeof(err));
		if (rc == DIFF_INCOMPARABLE) /* a usage error when --value named the type */
			rc = o.value_name ? usage_error(cmd, "%s", err) : runtime_error(cmd, "%s", err);
		else if (rc == DIFF_UNREADABLE)
			rc = 1; /* the load said why */
		snprintf(title, sizeof(title), "%s -> %s", o.operands[1], o.operands[2]);
		rq.trace = title;
		rq.diff = &d;
	} else {
		rq.p = p = report_profile(&o.operands[1], 1, &lo, &o.filter);
		rc = !p ? 1 : o.value_name ? options_resolve_value(cmd, &o, p, o.operands[1], &rq.value) : 0;
	}
	if (rc == 0 && plot_make(&rq, err, sizeof(err)) < 0)
		rc = runtime_error(cmd, "%s", err);
	else if (rc == 0 && text)
		rc = finish_output(cmd);
	diff_free(&d);
	profile_free(p);
	analyze_options_free(&o);
	return rc;
}
