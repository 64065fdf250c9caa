/*
 * plot_internal.h - what the parts of analyze plot share (plot.h): the
 * script's variables (plot_gnuplot.c), each kind's data step and their
 * helpers (plot_data.c, plot_alloc.c): data files, names as legends show
 * them, axis units, and the run's time cut into bins.
 */
#ifndef IPSCOPE_PLOT_INTERNAL_H
#define IPSCOPE_PLOT_INTERNAL_H

#include <stdint.h>
#include <stdio.h>

#include "plot.h"
#include "report.h"

/* The script being written: variable assignments, one per line. */
struct plot_script {
	FILE *vars;
	char *text;
	size_t len;
};

/* A number, a string, an array of strings or of numbers as gnuplot variables. */
void plot_var_number(struct plot_script *s, const char *name, double v);
void plot_var_string(struct plot_script *s, const char *name, const char *v);
void plot_var_strings(struct plot_script *s, const char *name, const char *const *v, uint32_t n);
void plot_var_numbers(struct plot_script *s, const char *name, const double *v, uint32_t n);

/* Each kind's data: its files into dir, its variables into s. 0, or -1 with err. */
int plot_data_timeline(const struct plot_request *rq, const char *dir, struct plot_script *s, char *err, size_t errlen);
int plot_data_top(const struct plot_request *rq, const char *dir, struct plot_script *s, char *err, size_t errlen);
int plot_data_diff(const struct plot_request *rq, const char *dir, struct plot_script *s, char *err, size_t errlen);
int plot_data_heap(const struct plot_request *rq, const char *dir, struct plot_script *s, char *err, size_t errlen);
int plot_data_rate(const struct plot_request *rq, const char *dir, struct plot_script *s, char *err, size_t errlen);

/* dir/name opened for writing (NULL with err); closed, saying a failed write. */
FILE *plot_open_data(const char *dir, const char *name, char *err, size_t errlen);
int plot_close_data(FILE *f, const char *name, char *err, size_t errlen);
/* A function's name as a legend or tic shows it (escaped, cut); free it. */
char *plot_legend_name(const struct profile *p, uint32_t function);
/* The factor from unit to an axis's unit (*shown), chosen by the largest value
 * max, per second when rate: seconds or cores, B..TiB, or counts. */
double plot_axis_scale(const char *unit, double max, int rate, const char **shown);
/* The type plotted: rq's (--value), or p's default as a viewer shows it
 * (a count of timer periods as the CPU time it stands for). */
uint32_t plot_value_of(const struct plot_request *rq);
const char *plot_type_of(const struct profile *p, uint32_t v);
const char *plot_unit_of(const struct profile *p, uint32_t v);

/* The run's time in bins. */
struct plot_span {
	uint64_t t0, t1; /* CLOCK_MONOTONIC ns, t1 > t0 */
	uint32_t nbins;
	double bins_per_ns;
};

/* The run's span (its start and duration, else its samples' times) in bins
 * of about 25 samples or more (rq->bins when given): 0, or -1 when no
 * sample has a time. */
int plot_run_span(const struct plot_request *rq, struct plot_span *sp, char *err, size_t errlen);
/* The bin of time t (clamped to the run); a bin's middle and width in seconds. */
uint32_t plot_bin_of(const struct plot_span *sp, uint64_t t);
double plot_bin_middle(const struct plot_span *sp, uint32_t b);
double plot_bin_seconds(const struct plot_span *sp);

/* Called with each piece of sample i's value (scaled: profile_sample_value) that lands in bin. */
typedef void (*plot_spread_fn)(uint64_t i, uint32_t bin, int64_t value, void *ctx);
/* Every sample's value of type v over sp's bins, laid over the time its weight stands for, before
 * its time, never two of a thread's samples over the same time (plot_spread.c). */
void plot_spread(const struct profile *p, uint32_t v, const struct plot_span *sp, plot_spread_fn add, void *ctx);

#endif
