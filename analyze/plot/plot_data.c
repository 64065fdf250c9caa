/*
 * plot_data.c - the data of the profile plots (plot.h): timeline, top and
 * diff, and what every kind's data shares (plot_internal.h): binned, one
 * pass over the samples into a few hundred time bins (per thread, per top
 * function), or the rows of flat and diff, so that what gnuplot reads does
 * not grow with the trace; plot_alloc.c makes heap's and rate's. Data files hold raw values in the plotted type's unit
 * (nanoseconds, bytes, counts: what flat --format tsv prints), so a test can
 * check them against flat; the script's variables say how to scale them
 * for the axes (seconds, cores, MiB...).
 */
#include "plot.h"
#include "plot_internal.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "arith.h"
#include "calltree.h"
#include "diff.h"
#include "report.h"
#include "terminal.h"

/* Legend and tic names are cut to this many columns. */
#define NAME_COLUMNS 48

FILE *plot_open_data(const char *dir, const char *name, char *err, size_t errlen)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (!f)
		snprintf(err, errlen, "%s: %m", path);
	return f;
}

int plot_close_data(FILE *f, const char *name, char *err, size_t errlen)
{
	if (fclose(f)) {
		snprintf(err, errlen, "writing %s: %m", name);
		return -1;
	}
	return 0;
}

/* A function's name as a legend shows it: escaped, cut to NAME_COLUMNS. */
char *plot_legend_name(const struct profile *p, uint32_t function)
{
	char safe[4096], cut[4096];
	const char *s = escape_controls(profile_string(p, p->functions[function].name), safe, sizeof(safe));
	return strdup_or_abort(fit_text(s, NAME_COLUMNS, 0, cut, sizeof(cut)));
}

/* A flat row's name as a tic shows it: the function, and its line with --lines. */
static char *row_name(const struct profile *p, const struct flat_row *r, int lines)
{
	char *name = plot_legend_name(p, r->key.function);
	if (!lines || !r->key.line)
		return name;
	char *with_line;
	if (asprintf(&with_line, "%s:%u", name, r->key.line) < 0)
		abort_out_of_memory();
	free(name);
	return with_line;
}

/*
 * How an axis shows values of unit (per second when rate): the factor from
 * the unit and the label's unit, chosen by the largest value max.
 */
double plot_axis_scale(const char *unit, double max, int rate, const char **shown)
{
	if (!strcmp(unit, "nanoseconds")) {
		*shown = rate ? "cores" : "s";
		return 1e-9;
	}
	if (!strcmp(unit, "bytes")) {
		static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
		static const char *const rates[] = {"B/s", "KiB/s", "MiB/s", "GiB/s", "TiB/s"};
		int u = 0;
		double scale = 1;
		while (u < 4 && fabs(max) * scale >= 1024) {
			scale /= 1024;
			u++;
		}
		*shown = rate ? rates[u] : units[u];
		return scale;
	}
	*shown = rate ? "per second" : "";
	return 1;
}

/* The value plotted: rq's, or p's default shown as a viewer shows it (a
 * count of timer periods as the CPU time it stands for). */
uint32_t plot_value_of(const struct plot_request *rq)
{
	const struct profile *p = rq->p;
	return rq->value != PROFILE_NO_VALUE ? rq->value : profile_display_value(p, p->default_value);
}

const char *plot_type_of(const struct profile *p, uint32_t v)
{
	return profile_string(p, p->value_types[v].type);
}

const char *plot_unit_of(const struct profile *p, uint32_t v)
{
	return profile_string(p, p->value_types[v].unit);
}

/* ---- time ---- */

/* The run's span (its start and duration, else its samples' times). 0, or
 * -1 when no sample has a time. */
int plot_run_span(const struct plot_request *rq, struct plot_span *sp, char *err, size_t errlen)
{
	const struct profile *p = rq->p;
	uint64_t lo = UINT64_MAX, hi = 0;
	for (uint64_t i = 0; i < p->nsamples; i++) {
		uint64_t t = p->samples[i].time_ns;
		if (!t)
			continue;
		lo = t < lo ? t : lo;
		hi = t > hi ? t : hi;
	}
	if (lo == UINT64_MAX) {
		snprintf(err, errlen, "%s: no sample has a time: nothing to plot over time", rq->trace);
		return -1;
	}
	sp->t0 = p->start_ns && p->start_ns <= lo ? p->start_ns : lo;
	sp->t1 = p->duration_ns && sp->t0 + p->duration_ns >= hi ? sp->t0 + p->duration_ns : hi;
	if (sp->t1 <= sp->t0)
		sp->t1 = sp->t0 + 1;
	int text = !rq->output || (strrchr(rq->output, '.') && !strcmp(strrchr(rq->output, '.'), ".txt"));
	/* Bins of about 25 samples or more, so that a bin's height is not
	 * mostly its sampling noise; at most the default (or the width). */
	uint32_t bins = text && rq->text_width > 30 ? (uint32_t)rq->text_width - 20 : PLOT_DEFAULT_BINS;
	uint64_t enough = profile_samples_total(p) / 25; /* rows binned in time stand for many */
	if (!rq->bins && enough < bins)
		bins = enough > 20 ? (uint32_t)enough : 20;
	if (rq->bins)
		bins = rq->bins;
	sp->nbins = bins;
	sp->bins_per_ns = (double)bins / (double)(sp->t1 - sp->t0);
	return 0;
}

uint32_t plot_bin_of(const struct plot_span *sp, uint64_t t)
{
	if (t <= sp->t0)
		return 0;
	double b = (double)(t - sp->t0) * sp->bins_per_ns;
	return b >= sp->nbins ? sp->nbins - 1 : (uint32_t)b;
}

/* Bin b's middle, in seconds since the start. */
double plot_bin_middle(const struct plot_span *sp, uint32_t b)
{
	return ((double)b + 0.5) / sp->bins_per_ns * 1e-9;
}

double plot_bin_seconds(const struct plot_span *sp)
{
	return 1e-9 / sp->bins_per_ns;
}

/* ---- timeline ---- */

/* Indices 0..n of values, sorted by |value| descending (ties by index). */
static int by_value(const void *a, const void *b, void *ctx)
{
	const int64_t *values = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t vx = abs_i64(values[x]), vy = abs_i64(values[y]);
	if (vx != vy)
		return vx > vy ? -1 : 1;
	return x < y ? -1 : x > y;
}

static uint32_t *ranked(const int64_t *values, uint32_t n)
{
	uint32_t *order = calloc_or_abort(n ? n : 1, sizeof(*order));
	for (uint32_t i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof(*order), by_value, (void *)values);
	return order;
}

/* The innermost shown function of each stack (UINT32_MAX for an empty one). */
static uint32_t *leaf_functions(const struct profile *p)
{
	uint32_t *leaf = calloc_or_abort(p->nstacks ? p->nstacks : 1, sizeof(*leaf));
	for (uint32_t s = 0; s < p->nstacks; s++) {
		const struct profile_stack *st = &p->stacks[s];
		leaf[s] = st->depth ? p->lines[p->locations[p->stack_locations[st->first]].first_line].function
				    : UINT32_MAX;
	}
	return leaf;
}

#define TIMELINE_THREADS 8
#define MAX_PHASES 12

/* Spans of bins where one of the first nseries series (of stride per
 * bin) dominates, short ones merged into their neighbour: the run's
 * phases. Returns how many. */
static uint32_t find_phases(const int64_t *bins, uint32_t nbins, uint32_t stride, uint32_t nseries,
			    uint32_t *start, uint32_t *series)
{
	uint32_t n = 0, min_len = nbins / 25 > 2 ? nbins / 25 : 2;
	uint32_t current = UINT32_MAX;
	for (uint32_t b = 0; b < nbins; b++) {
		const int64_t *row = &bins[(uint64_t)b * stride];
		uint32_t best = current;
		int64_t top = 0;
		for (uint32_t k = 0; k < nseries; k++)
			if (row[k] > top) {
				top = row[k];
				best = k;
			}
		if (best == UINT32_MAX || best == current)
			continue;
		/* A phase too short to see becomes part of the one before. */
		if (n && b - start[n - 1] < min_len) {
			if (n > 1 && series[n - 2] == best) {
				n--;
			} else {
				series[n - 1] = best;
			}
			current = series[n - 1];
			continue;
		}
		if (n == MAX_PHASES * 4)
			break;
		start[n] = b;
		series[n++] = best;
		current = best;
	}
	if (n > 1 && nbins - start[n - 1] < min_len)
		n--;
	return n;
}

struct timeline_bins {
	const struct profile *p;
	int64_t *tbins, *fbins; /* per bin, per thread series and per function series */
	uint32_t tseries, fseries;
	const uint32_t *thread_series, *stack_series;
};

static void timeline_add(uint64_t i, uint32_t b, int64_t x, void *ctx)
{
	struct timeline_bins *tb = ctx;
	const struct profile_sample *smp = &tb->p->samples[i];
	if (smp->thread < tb->p->nthreads)
		tb->tbins[(uint64_t)b * tb->tseries + tb->thread_series[smp->thread]] += x;
	tb->fbins[(uint64_t)b * tb->fseries + tb->stack_series[smp->stack]] += x;
}

int plot_data_timeline(const struct plot_request *rq, const char *dir, struct plot_script *s, char *err,
		       size_t errlen)
{
	const struct profile *p = rq->p;
	struct plot_span sp;
	if (plot_run_span(rq, &sp, err, errlen))
		return -1;
	uint32_t v = plot_value_of(rq), col = p->value_types[v].column, ncol = p->ncolumns;
	uint32_t ntop = rq->top ? rq->top : 8;
	/* Pass 1: totals per thread and per stack. */
	int64_t *thread_total = calloc_or_abort(p->nthreads + 1, sizeof(*thread_total));
	int64_t *stack_total = calloc_or_abort(p->nstacks + 1, sizeof(*stack_total));
	for (uint64_t i = 0; i < p->nsamples; i++) {
		const struct profile_sample *smp = &p->samples[i];
		int64_t x = p->values[i * ncol + col];
		if (smp->thread < p->nthreads)
			thread_total[smp->thread] = sat_add_i64(thread_total[smp->thread], x, NULL);
		stack_total[smp->stack] = sat_add_i64(stack_total[smp->stack], x, NULL);
	}
	uint32_t *leaf = leaf_functions(p);
	int64_t *function_total = calloc_or_abort(p->nfunctions + 1, sizeof(*function_total));
	for (uint32_t st = 0; st < p->nstacks; st++)
		if (leaf[st] != UINT32_MAX)
			function_total[leaf[st]] = sat_add_i64(function_total[leaf[st]], stack_total[st], NULL);
	/* The series: the heaviest threads and functions, then "other". */
	uint32_t *thread_order = ranked(thread_total, p->nthreads);
	uint32_t *function_order = ranked(function_total, p->nfunctions);
	uint32_t nthreads = 0, nfuncs = 0;
	while (nthreads < p->nthreads && nthreads < TIMELINE_THREADS && thread_total[thread_order[nthreads]])
		nthreads++;
	while (nfuncs < p->nfunctions && nfuncs < ntop && function_total[function_order[nfuncs]])
		nfuncs++;
	uint32_t tseries = nthreads + (p->nthreads > nthreads), fseries = nfuncs + 1;
	uint32_t *thread_series = calloc_or_abort(p->nthreads + 1, sizeof(*thread_series));
	uint32_t *stack_series = calloc_or_abort(p->nstacks + 1, sizeof(*stack_series));
	for (uint32_t t = 0; t < p->nthreads; t++)
		thread_series[t] = nthreads; /* other threads */
	for (uint32_t k = 0; k < nthreads; k++)
		thread_series[thread_order[k]] = k;
	uint32_t *function_series = calloc_or_abort(p->nfunctions + 1, sizeof(*function_series));
	for (uint32_t f = 0; f < p->nfunctions; f++)
		function_series[f] = nfuncs;
	for (uint32_t k = 0; k < nfuncs; k++)
		function_series[function_order[k]] = k;
	for (uint32_t st = 0; st < p->nstacks; st++)
		stack_series[st] = leaf[st] == UINT32_MAX ? nfuncs : function_series[leaf[st]];
	/* Pass 2: the bins, each sample over the time it stands for (plot_spread.c: binned at its
	 * time, a sample of many ticks drew more cores than the threads alive). */
	struct timeline_bins tb = {
		.p = p,
		.tbins = calloc_or_abort((uint64_t)sp.nbins * (tseries ? tseries : 1), sizeof(*tb.tbins)),
		.fbins = calloc_or_abort((uint64_t)sp.nbins * fseries, sizeof(*tb.fbins)),
		.tseries = tseries, .fseries = fseries,
		.thread_series = thread_series, .stack_series = stack_series,
	};
	int64_t *tbins = tb.tbins, *fbins = tb.fbins;
	plot_spread(p, v, &sp, timeline_add, &tb);
	int rc = -1;
	FILE *ft = plot_open_data(dir, "timeline-threads.dat", err, errlen), *ff = NULL;
	if (!ft)
		goto out;
	ff = plot_open_data(dir, "timeline-functions.dat", err, errlen);
	if (!ff)
		goto out;
	fprintf(ft, "# seconds since the start, then %s (%s) per bin of each thread series\n", plot_type_of(p, v), plot_unit_of(p, v));
	fprintf(ff, "# seconds since the start, then %s (%s) per bin of each function series (self)\n", plot_type_of(p, v),
		plot_unit_of(p, v));
	double peak = 0;
	for (uint32_t b = 0; b < sp.nbins; b++) {
		fprintf(ft, "%.6f", plot_bin_middle(&sp, b));
		fprintf(ff, "%.6f", plot_bin_middle(&sp, b));
		int64_t sum = 0;
		for (uint32_t k = 0; k < tseries; k++) {
			int64_t x = tbins[(uint64_t)b * tseries + k]; /* scaled already (plot_spread) */
			sum += x;
			fprintf(ft, " %" PRId64, x);
		}
		for (uint32_t k = 0; k < fseries; k++)
			fprintf(ff, " %" PRId64, fbins[(uint64_t)b * fseries + k]);
		fputc('\n', ft);
		fputc('\n', ff);
		peak = (double)sum > peak ? (double)sum : peak;
	}
	int bad = plot_close_data(ft, "timeline-threads.dat", err, errlen);
	bad |= plot_close_data(ff, "timeline-functions.dat", err, errlen);
	ft = ff = NULL;
	if (bad)
		goto out;

	const char *shown;
	double scale = plot_axis_scale(plot_unit_of(p, v), peak / plot_bin_seconds(&sp), 1, &shown);
	char label[128];
	if (!strcmp(plot_unit_of(p, v), "nanoseconds"))
		snprintf(label, sizeof(label), "%s time per second of the run (%s)", !strcmp(plot_type_of(p, v), "cpu") ? "CPU" : plot_type_of(p, v), shown);
	else
		snprintf(label, sizeof(label), "%s (%s)", plot_type_of(p, v), shown);
	plot_var_string(s, "ylabel", label);
	plot_var_number(s, "yscale", scale / plot_bin_seconds(&sp));
	plot_var_number(s, "binwidth", plot_bin_seconds(&sp));
	plot_var_number(s, "duration", (double)(sp.t1 - sp.t0) * 1e-9);
	char **names = calloc_or_abort(tseries + fseries + 1, sizeof(*names));
	for (uint32_t k = 0; k < nthreads; k++) {
		char title[300], safe[1300];
		profile_thread_title(p, thread_order[k], title, sizeof(title));
		names[k] = strdup_or_abort(escape_controls(title, safe, sizeof(safe)));
	}
	if (tseries > nthreads)
		names[nthreads] = strdup_or_abort("other threads");
	plot_var_strings(s, "thread_names", (const char *const *)names, tseries);
	plot_var_number(s, "nthreads", tseries);
	for (uint32_t k = 0; k < tseries; k++)
		free(names[k]);
	for (uint32_t k = 0; k < nfuncs; k++)
		names[k] = plot_legend_name(p, function_order[k]);
	names[nfuncs] = strdup_or_abort("other functions");
	plot_var_strings(s, "function_names", (const char *const *)names, fseries);
	plot_var_number(s, "nfunctions", fseries);

	uint32_t pstart[MAX_PHASES * 4], pseries[MAX_PHASES * 4];
	/* Phases among the named functions: "other" dominating says nothing. */
	uint32_t nphases = nfuncs ? find_phases(fbins, sp.nbins, fseries, nfuncs, pstart, pseries) : 0;
	if (nphases > MAX_PHASES)
		nphases = 0; /* no phases to speak of: the colours say it all */
	double starts[MAX_PHASES];
	const char *labels[MAX_PHASES];
	char texts[MAX_PHASES][NAME_COLUMNS + 16];
	for (uint32_t i = 0; i < nphases; i++) {
		starts[i] = (double)pstart[i] / sp.bins_per_ns * 1e-9;
		snprintf(texts[i], sizeof(texts[i]), "%s", names[pseries[i]]);
		labels[i] = texts[i];
	}
	plot_var_number(s, "nphases", nphases);
	plot_var_numbers(s, "phase_start", starts, nphases);
	plot_var_strings(s, "phase_name", labels, nphases);
	for (uint32_t k = 0; k < fseries; k++)
		free(names[k]);
	free(names);
	rc = 0;
out:
	if (ft)
		fclose(ft);
	if (ff)
		fclose(ff);
	free(thread_total);
	free(stack_total);
	free(leaf);
	free(function_total);
	free(thread_order);
	free(function_order);
	free(thread_series);
	free(stack_series);
	free(function_series);
	free(tbins);
	free(fbins);
	return rc;
}

/* ---- top ---- */

static int by_self(const void *a, const void *b, void *ctx)
{
	const struct flat_table *ft = ctx;
	const struct flat_row *x = &ft->rows[*(const uint32_t *)a], *y = &ft->rows[*(const uint32_t *)b];
	uint64_t sx = abs_i64(x->self), sy = abs_i64(y->self);
	if (sx != sy)
		return sx > sy ? -1 : 1;
	uint64_t cx = abs_i64(x->count), cy = abs_i64(y->count);
	if (cx != cy)
		return cx > cy ? -1 : 1;
	return flat_row_compare(ft->t->profile, x, y);
}

int plot_data_top(const struct plot_request *rq, const char *dir, struct plot_script *s, char *err, size_t errlen)
{
	const struct profile *p = rq->p;
	uint32_t v = plot_value_of(rq), ntop = rq->top ? rq->top : PLOT_DEFAULT_TOP;
	struct calltree *t = calltree_new(p, rq->o->combine, CALLTREE_ALL_THREADS, v);
	struct flat_table ft;
	flat_table_build(&ft, t, rq->o->lines, NULL);
	uint32_t *order = calloc_or_abort(ft.nrows + 1, sizeof(*order)), n = 0;
	for (uint32_t i = 0; i < ft.nrows; i++)
		if (ft.rows[i].self && abs_i64(ft.rows[i].count) >= rq->o->mincount)
			order[n++] = i;
	qsort_r(order, n, sizeof(*order), by_self, &ft);
	n = n < ntop ? n : ntop;
	int rc = -1;
	FILE *f = NULL;
	if (!n) {
		snprintf(err, errlen, "%s: no samples to plot", rq->trace);
		goto out;
	}
	if (!(f = plot_open_data(dir, "top.dat", err, errlen)))
		goto out;
	fprintf(f, "# rank, self and inclusive %s (%s)\n", plot_type_of(p, v), plot_unit_of(p, v));
	double max = 0;
	char **names = calloc_or_abort(n, sizeof(*names));
	for (uint32_t i = 0; i < n; i++) {
		const struct flat_row *r = &ft.rows[order[i]];
		fprintf(f, "%u %" PRId64 " %" PRId64 "\n", i + 1, r->self, r->count);
		max = fabs((double)r->count) > max ? fabs((double)r->count) : max;
		names[i] = row_name(p, r, rq->o->lines);
	}
	int bad = plot_close_data(f, "top.dat", err, errlen);
	f = NULL;
	if (!bad) {
		const char *shown;
		double scale = plot_axis_scale(plot_unit_of(p, v), max, 0, &shown);
		char label[128];
		if (!strcmp(plot_unit_of(p, v), "nanoseconds"))
			snprintf(label, sizeof(label), "%s time (%s)", !strcmp(plot_type_of(p, v), "cpu") ? "CPU" : plot_type_of(p, v), shown);
		else
			snprintf(label, sizeof(label), "%s%s%s%s", plot_type_of(p, v), *shown ? " (" : "", shown, *shown ? ")" : "");
		plot_var_string(s, "xlabel", label);
		plot_var_number(s, "xscale", scale);
		plot_var_number(s, "total", (double)t->total);
		plot_var_number(s, "n", n);
		plot_var_strings(s, "names", (const char *const *)names, n);
		rc = 0;
	}
	for (uint32_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
out:
	if (f)
		fclose(f);
	free(order);
	flat_table_free(&ft);
	calltree_free(t);
	return rc;
}

/* ---- diff ---- */

int plot_data_diff(const struct plot_request *rq, const char *dir, struct plot_script *s, char *err, size_t errlen)
{
	const struct diff *d = rq->diff;
	struct diff_table dt;
	diff_table_build(&dt, d, rq->o);
	uint32_t half = (rq->top ? rq->top : PLOT_DEFAULT_TOP) / 2;
	half = half ? half : 1;
	/* dt.order is by the size of the change: the first increases from the
	 * top down, then the first decreases from the smallest of them, so the
	 * largest decrease is the bottom bar. */
	uint32_t *picked = calloc_or_abort(2 * (size_t)half + 1, sizeof(*picked)), n = 0, down = 0;
	uint32_t *decreases = calloc_or_abort(half + 1, sizeof(*decreases));
	for (uint32_t k = 0; k < dt.n; k++) {
		int64_t delta = diff_row_delta(&dt.rows[dt.order[k]]);
		if (delta > 0 && n < half)
			picked[n++] = dt.order[k];
		else if (delta < 0 && down < half)
			decreases[down++] = dt.order[k];
	}
	for (uint32_t k = down; k-- > 0;)
		picked[n++] = decreases[k];
	free(decreases);
	int rc = -1;
	FILE *f = NULL;
	if (!n) {
		snprintf(err, errlen, "%s: nothing changed: no bars to draw", rq->trace);
		goto out;
	}
	if (!(f = plot_open_data(dir, "diff.dat", err, errlen)))
		goto out;
	fprintf(f, "# rank, change (points of base's total), its margin at %g%% confidence over %u rows, "
		"significant, base %%, new %%\n", 100 * d->confidence, dt.n);
	char **names = calloc_or_abort(n, sizeof(*names));
	double max = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct diff_row *r = &dt.rows[picked[i]];
		double pct = diff_row_percent(d, r), margin = diff_row_margin(d, r, dt.n);
		double bt = d->base.total ? (double)d->base.total : 1;
		fprintf(f, "%u %.6f %.6f %d %.6f %.6f\n", i + 1, pct, margin, r->significant, 100.0 * (double)r->base / bt,
			100.0 * (double)r->new / bt);
		max = fabs(pct) + margin > max ? fabs(pct) + margin : max;
		names[i] = row_name(d->p, &dt.ft.rows[picked[i]], rq->o->lines);
	}
	int bad = plot_close_data(f, "diff.dat", err, errlen);
	f = NULL;
	if (!bad) {
		const struct profile *b = d->base.p;
		char label[256];
		snprintf(label, sizeof(label), "change of %s, in points of base's total (%s)%s",
			 profile_string(b, b->value_types[d->base.value].type), d->normalized ? "new scaled to base" : "raw",
			 d->exact ? "; exact counts, no noise" : "");
		plot_var_string(s, "xlabel", label);
		plot_var_number(s, "n", n);
		plot_var_number(s, "xmax", max > 0 ? max * 1.1 : 1);
		plot_var_number(s, "confidence", 100 * d->confidence);
		plot_var_number(s, "exact", d->exact);
		plot_var_strings(s, "names", (const char *const *)names, n);
		char program[512];
		plot_var_string(s, "program", plot_program(d->new.p, program, sizeof(program)));
		rc = 0;
	}
	for (uint32_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
out:
	if (f)
		fclose(f);
	free(picked);
	diff_table_free(&dt);
	return rc;
}
