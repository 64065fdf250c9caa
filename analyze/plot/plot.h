/*
 * plot.h - "analyze plot": a profile (or a diff) drawn by gnuplot.
 *
 * The data is made here, in C, binned so that gnuplot reads a few hundred
 * rows whatever the trace's size (plot_data.c, plot_alloc.c); the drawing is a gnuplot
 * template from plots/ (installed in share/ipscope/plots, found beside the
 * program), run as a subprocess on a script that sets the terminal, the
 * output and the plot's variables, then includes the template
 * (plot_gnuplot.c). --keep-data keeps the data files and that script, which
 * reruns as it is: `cd DIR && gnuplot KIND.gp`.
 *
 * Kinds:
 *   timeline  the value per second over the run, stacked by thread (top
 *             panel) and by the function running (the top functions
 *             coloured, bottom panel), the run's phases marked: spans
 *             where one function dominates;
 *   top       horizontal bars of the top functions, self and inclusive;
 *   diff      the biggest increases and decreases between two runs in
 *             points of base's total, with the noise as error bars
 *             (simultaneous confidence intervals, diff.h);
 *   heap      live heap bytes over time (inuse_space, summed in time
 *             order), the peak marked, what is still live at the end;
 *   rate      allocations (alloc_objects) or bytes (alloc_space) per
 *             second, and frees per second when inuse_objects says them.
 * heap and rate read an allocation profile (load_allocs.c): value types
 * alloc_objects/alloc_space/inuse_objects/inuse_space, with rows per time
 * bin when loaded for plots (load option alloc_bins), so inuse summed in
 * time order is the live heap over time and the peak's rows mark the peak.
 * Profiles with one sample per event (the unit tests') read the same way.
 */
#ifndef IPSCOPE_PLOT_H
#define IPSCOPE_PLOT_H

#include <stdint.h>

#include "diagnostics.h"
#include "options.h"
#include "profile.h"

struct diff;

enum plot_kind { PLOT_TIMELINE, PLOT_TOP, PLOT_DIFF, PLOT_HEAP, PLOT_RATE, PLOT_NKINDS };

/* "timeline"... and back; PLOT_NKINDS when name is none. */
const char *plot_kind_name(enum plot_kind kind);
enum plot_kind plot_kind_named(const char *name);

#define PLOT_DEFAULT_BINS 300
#define PLOT_DEFAULT_TOP 20

struct plot_request {
	enum plot_kind kind;
	const struct profile *p;          /* loaded and filtered (PLOT_DIFF: NULL) */
	const struct diff *diff;          /* PLOT_DIFF */
	const struct analyze_options *o;  /* combine, lines, mincount, width */
	uint32_t value;                   /* the type plotted; PROFILE_NO_VALUE: the kind's choice */
	const char *trace;                /* named in the title ("BASE -> NEW" for diff) */
	uint32_t top;                     /* functions (top, diff bars, timeline colours); 0: default */
	uint32_t bins;                    /* time bins; 0: PLOT_DEFAULT_BINS (text: the width) */
	const char *output;               /* .png, .svg, .pdf or .txt file; NULL: text on stdout */
	int text_width, text_height;      /* of the text terminal */
	int color;                        /* text terminal: ANSI colors */
	const char *keep_dir;             /* --keep-data DIR, or NULL */
	const char *templates;            /* directory of the templates; NULL: beside the program */
	const char *gnuplot;              /* the program; NULL: gnuplot from PATH */
	const struct diag_sink *diag;     /* gnuplot's warnings */
};

/* 1 when path's extension is one plot draws (NULL: text on stdout). */
int plot_output_known(const char *path);

/*
 * Draw rq: data and script into rq->keep_dir (or a temporary directory,
 * removed after), gnuplot run on them, the output renamed into place when
 * complete. 0, or -1 with a one-line reason in err (no data to plot,
 * gnuplot missing or failing, with its message).
 */
int plot_make(const struct plot_request *rq, char *err, size_t errlen);

/* The parts of plot_make, for tests: the data files and KIND.gp into dir
 * (which exists); outfile is what the script's output is set to. */
int plot_write(const struct plot_request *rq, const char *dir, const char *outfile, char *err, size_t errlen);

/* The command a title names: the program's file name and its arguments,
 * cut to 80 columns, into buf. */
const char *plot_program(const struct profile *p, char *buf, size_t len);

/* The highest live heap of p (inuse_space summed in time order) and when,
 * in ns since the start: what the heap plot marks. -1 without inuse_space. */
int plot_heap_peak(const struct profile *p, int64_t *peak, uint64_t *when);

#endif
