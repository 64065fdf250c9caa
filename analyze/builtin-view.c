/*
 * builtin-view.c - "analyze view": parse the options, check the terminal,
 * load the trace (progress and errors on stderr, before the screen is taken
 * over; warnings kept for the viewer's w key), build the view (view.h) and
 * run it on the terminal (view_tui.h).
 */
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "builtin.h"
#include "diagnostics.h"
#include "filter.h"
#include "load.h"
#include "options.h"
#include "view.h"
#include "view_tui.h"

struct view_args {
	double noisefloor;
};

static const struct option_row view_rows[] = {
	OPT_DOUBLE(0, "noisefloor", "X", struct view_args, noisefloor, 0, "a number >= 0",
		   "start with tree's noisefloor X (f changes it)"),
	OPT_END(),
};

static const struct analyze_command view_command = {
	.name = "view",
	.synopsis = "analyze view [options] TRACE...",
	.operands = "TRACE...",
	.summary = "Explore a trace full-screen: the call tree ranked by the chosen value (time for\n"
		   "CPU traces, bytes for allocations) with costs, percentages and bars; u ranks by\n"
		   "the other unit, s shows the flat self cost per line, Enter or o the source with\n"
		   "a cost per line, a flame graph of the selection along the bottom; t picks a\n"
		   "thread, f sets a noisefloor or minimum, L the leaks, peak and temporary views\n"
		   "of allocation traces (--leaks, --peak, --temporary start there), / searches,\n"
		   "? lists the keys, q quits. Needs a terminal. Several traces are summed, as\n"
		   "tree sums them.",
	.groups = OPTGROUP_LOAD | OPTGROUP_PROGRAMS | OPTGROUP_FILTER | OPTGROUP_MINCOUNT | OPTGROUP_COMBINE |
		  OPTGROUP_LOOK,
	.options = view_rows,
};

/* Loading's messages: errors said on stderr now, warnings kept for the viewer. */
struct view_sink {
	struct diag_list warnings;
	struct diag_sink list;
};

static void view_message(void *ctx, enum diag_level level, const char *text)
{
	struct view_sink *vs = ctx;
	if (level == DIAG_ERROR)
		diag(diag_stderr_sink(), level, "%s", text);
	else
		vs->list.message(vs->list.ctx, level, text);
}

static void view_progress(void *ctx, const char *text)
{
	(void)ctx;
	diag_progress(diag_stderr_sink(), "%s", text);
}

int cmd_view(int argc, char **argv)
{
	struct view_args a = {0};
	const struct analyze_command *cmd = &view_command;
	struct analyze_options o;
	int rc = analyze_options_parse(argc, argv, cmd, &a, &o);
	if (rc >= 0)
		return rc;
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		rc = runtime_error(cmd, "standard %s is not a terminal (analyze tree, flat and source print reports anywhere)",
				   isatty(STDIN_FILENO) ? "output" : "input");
		analyze_options_free(&o);
		return rc;
	}
	struct view_sink vs = {{0}, {0}};
	vs.list = diag_list_sink(&vs.warnings);
	struct diag_sink sink = {view_message, view_progress, &vs};
	struct load_options lo = o.load;
	lo.diag = &sink;
	const char *trace = o.operands[0];
	struct profile *p = load_traces(o.operands, o.noperands, &lo, 0); /* several: summed, as tree's */
	uint32_t value = PROFILE_NO_VALUE;
	rc = 1;
	if (!p)
		goto out; /* said on stderr */
	/* --leaks, --peak, --temporary: the viewer makes every view (L) and starts on that one. */
	struct filter_options every_view = o.filter;
	every_view.view = FILTER_VIEW_NONE;
	p = filter_profile_consume(p, &every_view);
	if ((rc = options_resolve_value(cmd, &o, p, trace, &value)) != 0)
		goto out;
	if (!o.value_name)
		value = PROFILE_NO_VALUE; /* what a viewer shows of the default */
	struct view_options vo = {
		.trace = trace,
		.value = value,
		.combine = o.combine,
		.full_paths = o.full_paths,
		.noisefloor = a.noisefloor,
		.mincount = o.mincount,
		.view = o.filter.view,
		.search_dirs = o.load.search_dirs,
		.nsearch_dirs = o.load.nsearch_dirs,
		.diag = &sink,
	};
	struct view *v = view_new(p, &vo);
	p = NULL; /* the view's */
	view_add_messages(v, vs.warnings.texts, vs.warnings.n);
	setlocale(LC_CTYPE, ""); /* UTF-8 when the terminal's locale says so; numbers stay C */
	char err[512];
	int sig = view_tui_run(v, o.color, err, sizeof(err));
	view_free(v);
	if (sig < 0) {
		rc = runtime_error(cmd, "%s", err);
	} else if (sig > 0) {
		diag_list_free(&vs.warnings);
		analyze_options_free(&o);
		signal(sig, SIG_DFL); /* die of it, as without the viewer */
		raise(sig);
		return 128 + sig;
	} else {
		rc = 0;
	}
out:
	profile_free(p);
	diag_list_free(&vs.warnings);
	analyze_options_free(&o);
	return rc;
}
