/*
 * view_alloc.c - the allocation views the viewer's L key cycles through:
 * leaks (what was never freed) and peak (what was live when the heap was
 * largest), each a profile of its own whose alloc_space and alloc_objects
 * are those bytes and blocks, so every ranking, percentage, flat row and
 * source line of the viewer reads them with no code of its own.
 *
 * Integration point with issue 8 (allocation profiling, not on main when
 * this was written): issue 8 makes --leaks and --peak filters producing
 * profiles. Until they exist this is a stand-in on the model issue 8 plans
 * (and analyze plot's heap already reads, plot.h): value types alloc_objects,
 * alloc_space, inuse_objects, inuse_space; one sample per event with its
 * time; an allocation adds its size to inuse_space and its free, a sample
 * of the same stack, subtracts it. Then what a stack leaks is the sum of
 * its inuse values, and what it holds at the peak the sum up to the event
 * that made the peak. When the filters land, view_alloc_profile calls them
 * and the rest of this file goes.
 */
#include "view_internal.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "arith.h"
#include "filter.h"

int view_is_alloc(const struct profile *p)
{
	return profile_find_value_type(p, "alloc_space") != PROFILE_NO_VALUE;
}

int view_alloc_views(const struct profile *p)
{
	return view_is_alloc(p) && profile_find_value_type(p, "alloc_objects") != PROFILE_NO_VALUE &&
			       profile_find_value_type(p, "inuse_space") != PROFILE_NO_VALUE &&
			       profile_find_value_type(p, "inuse_objects") != PROFILE_NO_VALUE
		       ? 2
		       : 0;
}

static int by_time(const void *a, const void *b, void *ctx)
{
	const struct profile *p = ctx;
	uint64_t i = *(const uint64_t *)a, j = *(const uint64_t *)b;
	uint64_t x = p->samples[i].time_ns, y = p->samples[j].time_ns;
	if (x != y)
		return x < y ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* keep[i] set for the samples up to the one that made the heap largest (time order). */
static void mark_until_peak(const struct profile *p, uint32_t inuse_space, uint8_t *keep)
{
	uint64_t *order = NULL;
	for (uint64_t i = 1; i < p->nsamples && !order; i++)
		if (p->samples[i].time_ns < p->samples[i - 1].time_ns)
			order = calloc_or_abort(p->nsamples, sizeof(*order));
	if (order) {
		for (uint64_t i = 0; i < p->nsamples; i++)
			order[i] = i;
		qsort_r(order, p->nsamples, sizeof(*order), by_time, (void *)p);
	}
	int64_t live = 0, best = 0;
	uint64_t best_k = 0;
	int any = 0;
	for (uint64_t k = 0; k < p->nsamples; k++) {
		live = sat_add_i64(live, profile_sample_value(p, order ? order[k] : k, inuse_space), NULL);
		if (live > best || !any) {
			best = live;
			best_k = k;
			any = 1;
		}
	}
	for (uint64_t k = 0; any && k <= best_k; k++)
		keep[order ? order[k] : k] = 1;
	free(order);
}

struct profile *view_alloc_profile(const struct profile *p, int which)
{
	struct filter_options copy = {.show_system = 1};
	struct profile *q = filter_profile(p, &copy);
	uint32_t space = q->value_types[profile_find_value_type(q, "alloc_space")].column;
	uint32_t objects = q->value_types[profile_find_value_type(q, "alloc_objects")].column;
	uint32_t live_space = q->value_types[profile_find_value_type(q, "inuse_space")].column;
	uint32_t live_objects = q->value_types[profile_find_value_type(q, "inuse_objects")].column;
	uint8_t *keep = NULL;
	if (which == 2) {
		keep = calloc_or_abort(q->nsamples ? q->nsamples : 1, 1);
		mark_until_peak(q, profile_find_value_type(q, "inuse_space"), keep);
	}
	for (uint64_t i = 0; i < q->nsamples; i++) {
		int64_t *v = &q->values[i * q->ncolumns];
		if (keep && !keep[i]) {
			memset(v, 0, q->ncolumns * sizeof(*v));
			continue;
		}
		v[space] = v[live_space];
		v[objects] = v[live_objects];
	}
	free(keep);
	return q;
}
