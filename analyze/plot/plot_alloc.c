/*
 * plot_alloc.c - the data of the allocation plots (plot.h): heap (live
 * bytes over time: inuse_space summed in time order, the lowest and highest
 * within each bin kept, so binning never hides the peak) and rate
 * (allocations or bytes per bin, and frees: what inuse_* loses).
 */
#include "plot.h"
#include "plot_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "arith.h"
#include "terminal.h"

/* ---- allocations: heap and rate ---- */

/* Samples in time order: p's own order when it is one (NULL), else sorted. */
static int by_time(const void *a, const void *b, void *ctx)
{
	const struct profile *p = ctx;
	uint64_t x = p->samples[*(const uint64_t *)a].time_ns;
	uint64_t y = p->samples[*(const uint64_t *)b].time_ns;
	if (x != y)
		return x < y ? -1 : 1;
	return *(const uint64_t *)a < *(const uint64_t *)b ? -1 : 1;
}

static uint64_t *time_order(const struct profile *p)
{
	uint64_t *order = NULL;
	for (uint64_t i = 1; i < p->nsamples; i++) {
		if (p->samples[i].time_ns < p->samples[i - 1].time_ns) {
			order = calloc_or_abort(p->nsamples, sizeof(*order));
			break;
		}
	}
	if (!order)
		return NULL;
	for (uint64_t i = 0; i < p->nsamples; i++)
		order[i] = i;
	qsort_r(order, p->nsamples, sizeof(*order), by_time, (void *)p);
	return order;
}

/*
 * An allocation trace's rows are binned (profile.h): the live heap summed
 * bin by bin misses the highest point inside a bin. Its peak_space rows sit
 * in the peak's bin and add up to what the rows held at that moment: a
 * point of the same curve, which the bin's highest value must include.
 */
static int64_t marked_peak(const struct profile *p, uint64_t *when)
{
	uint32_t v = profile_find_value_type(p, "peak_space");
	int64_t sum = 0;
	*when = 0;
	if (v == PROFILE_NO_VALUE)
		return 0;
	for (uint64_t i = 0; i < p->nsamples; i++) {
		int64_t x = profile_sample_value(p, i, v);
		if (x) {
			sum = sat_add_i64(sum, x, NULL);
			*when = p->samples[i].time_ns;
		}
	}
	return sum;
}

int plot_heap_peak(const struct profile *p, int64_t *peak, uint64_t *when)
{
	uint32_t v = profile_find_value_type(p, "inuse_space");
	if (v == PROFILE_NO_VALUE)
		return -1;
	uint64_t marked_at;
	int64_t marked = marked_peak(p, &marked_at);
	uint64_t *order = time_order(p);
	int64_t live = 0, best = 0;
	uint64_t at = 0;
	for (uint64_t k = 0; k < p->nsamples; k++) {
		uint64_t i = order ? order[k] : k;
		live = sat_add_i64(live, profile_sample_value(p, i, v), NULL);
		if (live > best) {
			best = live;
			at = p->samples[i].time_ns;
		}
	}
	free(order);
	if (marked > best) {
		best = marked;
		at = marked_at;
	}
	*peak = best;
	*when = at > p->start_ns && p->start_ns ? at - p->start_ns : at;
	return 0;
}

static int need_type(const struct plot_request *rq, uint32_t v, const char *what, char *err, size_t errlen)
{
	if (v != PROFILE_NO_VALUE)
		return 0;
	char names[256];
	snprintf(err, errlen, "%s: plot %s needs an allocation trace (%s); it has the value types %s", rq->trace,
		 plot_kind_name(rq->kind), what, profile_value_type_names(rq->p, names, sizeof(names)));
	return -1;
}

int plot_data_heap(const struct plot_request *rq, const char *dir, struct plot_script *s, char *err, size_t errlen)
{
	const struct profile *p = rq->p;
	uint32_t space = profile_find_value_type(p, "inuse_space");
	uint32_t objects = profile_find_value_type(p, "inuse_objects");
	if (need_type(rq, space, "inuse_space", err, errlen))
		return -1;
	struct plot_span sp;
	if (plot_run_span(rq, &sp, err, errlen))
		return -1;
	int64_t *last = calloc_or_abort(sp.nbins, sizeof(*last)), *lo = calloc_or_abort(sp.nbins, sizeof(*lo));
	int64_t *hi = calloc_or_abort(sp.nbins, sizeof(*hi));
	uint8_t *seen = calloc_or_abort(sp.nbins, 1);
	uint64_t *order = time_order(p);
	int64_t live = 0, live_objects = 0, peak = 0;
	uint64_t peak_at = sp.t0;
	for (uint64_t k = 0; k < p->nsamples; k++) {
		uint64_t i = order ? order[k] : k;
		live = sat_add_i64(live, profile_sample_value(p, i, space), NULL);
		if (objects != PROFILE_NO_VALUE)
			live_objects = sat_add_i64(live_objects, profile_sample_value(p, i, objects), NULL);
		uint64_t t = p->samples[i].time_ns ? p->samples[i].time_ns : sp.t0;
		uint32_t b = plot_bin_of(&sp, t);
		if (!seen[b]) {
			seen[b] = 1;
			lo[b] = hi[b] = live;
		}
		lo[b] = live < lo[b] ? live : lo[b];
		hi[b] = live > hi[b] ? live : hi[b];
		last[b] = live;
		if (live > peak) {
			peak = live;
			peak_at = t;
		}
	}
	free(order);
	uint64_t marked_at;
	int64_t marked = marked_peak(p, &marked_at);
	if (marked > peak) {
		uint32_t b = plot_bin_of(&sp, marked_at);
		peak = marked;
		peak_at = marked_at;
		if (!seen[b]) {
			seen[b] = 1;
			lo[b] = last[b] = marked;
		}
		hi[b] = marked > hi[b] ? marked : hi[b];
	}
	int rc = -1;
	FILE *f = plot_open_data(dir, "heap.dat", err, errlen);
	if (f) {
		fprintf(f, "# seconds since the start (a bin's end; the first row is the start), live bytes then, "
			"the lowest and highest in the bin\n0 0 0 0\n");
		int64_t carry = 0;
		for (uint32_t b = 0; b < sp.nbins; b++) {
			if (seen[b])
				carry = last[b];
			double end = ((double)b + 1) / sp.bins_per_ns * 1e-9;
			fprintf(f, "%.6f %" PRId64 " %" PRId64 " %" PRId64 "\n", end, carry, seen[b] ? lo[b] : carry,
				seen[b] ? hi[b] : carry);
		}
		if (!plot_close_data(f, "heap.dat", err, errlen)) {
			const char *shown;
			double scale = plot_axis_scale("bytes", (double)peak, 0, &shown);
			char label[64], peak_text[64], end_text[64];
			snprintf(label, sizeof(label), "live heap (%s)", shown);
			plot_var_string(s, "ylabel", label);
			plot_var_number(s, "yscale", scale);
			plot_var_number(s, "duration", (double)(sp.t1 - sp.t0) * 1e-9);
			plot_var_number(s, "binwidth", plot_bin_seconds(&sp));
			plot_var_number(s, "peak", (double)peak);
			plot_var_number(s, "peak_time", (double)(peak_at - sp.t0) * 1e-9);
			plot_var_string(s, "peak_text", format_value(peak, "bytes", peak_text, sizeof(peak_text)));
			plot_var_number(s, "end_bytes", (double)live);
			plot_var_string(s, "end_text", format_value(live, "bytes", end_text, sizeof(end_text)));
			plot_var_number(s, "end_objects", objects != PROFILE_NO_VALUE ? (double)live_objects : -1);
			rc = 0;
		}
	}
	free(last);
	free(lo);
	free(hi);
	free(seen);
	return rc;
}

int plot_data_rate(const struct plot_request *rq, const char *dir, struct plot_script *s, char *err, size_t errlen)
{
	const struct profile *p = rq->p;
	uint32_t v = rq->value != PROFILE_NO_VALUE ? rq->value : profile_find_value_type(p, "alloc_objects");
	if (v == PROFILE_NO_VALUE)
		v = profile_find_value_type(p, "alloc_space");
	if (need_type(rq, v, "alloc_objects or alloc_space", err, errlen))
		return -1;
	/* Frees: what the in-use figure of the same kind loses. */
	uint32_t inuse = profile_find_value_type(p, !strcmp(plot_unit_of(p, v), "bytes") ? "inuse_space" : "inuse_objects");
	struct plot_span sp;
	if (plot_run_span(rq, &sp, err, errlen))
		return -1;
	int64_t *allocs = calloc_or_abort(sp.nbins, sizeof(*allocs)), *frees = calloc_or_abort(sp.nbins, sizeof(*frees));
	for (uint64_t i = 0; i < p->nsamples; i++) {
		uint32_t b = plot_bin_of(&sp, p->samples[i].time_ns ? p->samples[i].time_ns : sp.t0);
		allocs[b] = sat_add_i64(allocs[b], profile_sample_value(p, i, v), NULL);
		if (inuse != PROFILE_NO_VALUE) {
			int64_t x = profile_sample_value(p, i, inuse);
			if (x < 0)
				frees[b] = sat_add_i64(frees[b], sat_neg_i64(x), NULL);
		}
	}
	int rc = -1;
	FILE *f = plot_open_data(dir, "rate.dat", err, errlen);
	double max = 0;
	if (f) {
		fprintf(f, "# seconds since the start (bin's middle), %s allocated and freed per bin (%s)\n", plot_type_of(p, v),
			plot_unit_of(p, v));
		for (uint32_t b = 0; b < sp.nbins; b++) {
			fprintf(f, "%.6f %" PRId64 " %" PRId64 "\n", plot_bin_middle(&sp, b), allocs[b], frees[b]);
			max = (double)allocs[b] > max ? (double)allocs[b] : max;
			max = (double)frees[b] > max ? (double)frees[b] : max;
		}
		if (!plot_close_data(f, "rate.dat", err, errlen)) {
			const char *shown;
			double scale = plot_axis_scale(plot_unit_of(p, v), max / plot_bin_seconds(&sp), 1, &shown);
			char label[128];
			if (!strcmp(plot_unit_of(p, v), "bytes"))
				snprintf(label, sizeof(label), "bytes allocated per second (%s)", shown);
			else
				snprintf(label, sizeof(label), "allocations per second");
			plot_var_string(s, "ylabel", label);
			plot_var_number(s, "yscale", scale / plot_bin_seconds(&sp));
			plot_var_number(s, "duration", (double)(sp.t1 - sp.t0) * 1e-9);
			plot_var_number(s, "binwidth", plot_bin_seconds(&sp));
			plot_var_number(s, "has_frees", inuse != PROFILE_NO_VALUE);
			plot_var_string(s, "what", !strcmp(plot_unit_of(p, v), "bytes") ? "bytes" : "blocks");
			rc = 0;
		}
	}
	free(allocs);
	free(frees);
	return rc;
}
