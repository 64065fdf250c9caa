/*
 * merge.c - profiles summed into one (see merge.h).
 *
 * The first profile gives dst its value types and run description
 * (remap.h's profile_remap_run); each later one must mean the same by its
 * values, or its sums would be nonsense: the same types in the same
 * columns, interval and allocation sampling. The run description then sums
 * what adds up (durations, lost samples) and keeps what both say (ended,
 * exact); the time of an allocation peak belongs to one run and is dropped.
 *
 * Rows are summed through an index over dst's rows that lives as long as
 * the merge, so that each source costs its own rows' lookups. Where rows
 * are signals (a trace's CPU and wall samples: profile.rows_are_signals),
 * the loader keeps apart rows of different weights per signal, and diff's
 * noise test counts a row's signals; two rows are summed only when one
 * signal of each weighs the same (their values are proportional to their
 * counts), so that a merged row still stands for signals of one weight.
 */
#include "merge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "arith.h"
#include "hashmap.h"
#include "remap.h"

struct profile_merge {
	struct profile *dst;
	unsigned flags;
	struct hashmap rows; /* by hash of (stack, thread, label[, time]) -> dst row */
	uint64_t indexed;    /* dst rows indexed so far */
	/* the row sought (eq's ctx) */
	const struct profile_sample *seek;
	const int64_t *seek_values;
};

struct profile_merge *profile_merge_new(struct profile *dst, unsigned flags)
{
	struct profile_merge *m = calloc_or_abort(1, sizeof(*m));
	m->dst = dst;
	m->flags = flags;
	hashmap_init(&m->rows, 1024);
	return m;
}

void profile_merge_free(struct profile_merge *m)
{
	if (!m)
		return;
	hashmap_free(&m->rows);
	free(m);
}

static const char *type_text(const struct profile *p, uint32_t v, char *buf, size_t len)
{
	const struct profile_value_type *t = &p->value_types[v];
	snprintf(buf, len, "%s/%s", profile_string(p, t->type), profile_string(p, t->unit));
	return buf;
}

/* 0 when src's values mean what dst's do, else -1 and why in err. */
static int comparable(const struct profile *dst, const struct profile *src, char *err, size_t errlen)
{
	char a[128], b[128];
	if (strcmp(profile_string(dst, dst->mode), profile_string(src, src->mode))) {
		snprintf(err, errlen, "it was recorded in %s mode, the first trace in %s mode",
			 profile_string(src, src->mode), profile_string(dst, dst->mode));
		return -1;
	}
	if (dst->period != src->period || dst->period_type != src->period_type) {
		const char *unit = dst->period_type != PROFILE_NO_VALUE
					   ? profile_string(dst, dst->value_types[dst->period_type].unit) : "";
		snprintf(err, errlen, "it was sampled every %lld %s, the first trace every %lld %s: their sample "
			 "counts stand for different times", (long long)src->period, unit, (long long)dst->period, unit);
		return -1;
	}
	int same = dst->nvalue_types == src->nvalue_types && dst->ncolumns == src->ncolumns;
	for (uint32_t v = 0; same && v < src->nvalue_types; v++) {
		const struct profile_value_type *x = &dst->value_types[v], *y = &src->value_types[v];
		same = x->column == y->column && x->scale == y->scale &&
		       !strcmp(type_text(dst, v, a, sizeof(a)), type_text(src, v, b, sizeof(b)));
	}
	if (!same) {
		snprintf(err, errlen, "its value types (%s) are not the first trace's (%s)",
			 profile_value_type_names(src, b, sizeof(b)), profile_value_type_names(dst, a, sizeof(a)));
		return -1;
	}
	if (dst->alloc_scheme != src->alloc_scheme || dst->alloc_parameter != src->alloc_parameter ||
	    dst->alloc_scaled != src->alloc_scaled || dst->time_resolution_ns != src->time_resolution_ns) {
		snprintf(err, errlen, "its allocations were recorded or scaled otherwise than the first trace's");
		return -1;
	}
	return 0;
}

/* Where rows are not signals, the key is (stack, thread, label) and, for rows of time bins, the bin. */
static uint64_t row_hash(const struct profile *dst, const struct profile_sample *s)
{
	uint64_t h = hash_combine(hash_u64((uint64_t)s->stack << 32 | s->thread), s->label);
	return dst->time_resolution_ns ? hash_combine(h, s->time_ns) : h;
}

static int row_equal(const void *ctx, uint32_t id)
{
	const struct profile_merge *m = ctx;
	const struct profile *dst = m->dst;
	const struct profile_sample *r = &dst->samples[id], *s = m->seek;
	if (r->stack != s->stack || r->thread != s->thread || r->label != s->label ||
	    (dst->time_resolution_ns && r->time_ns != s->time_ns))
		return 0;
	if ((uint64_t)r->merged + s->merged + 1 >= UINT32_MAX)
		return 0; /* full: the sum starts a row of its own */
	if (!dst->rows_are_signals)
		return 1;
	/* Signals of one weight: value / count the same in every column. */
	const int64_t *rv = dst->values + (uint64_t)id * dst->ncolumns;
	__int128 rc = (__int128)profile_sample_count(r), sc = (__int128)profile_sample_count(s);
	for (uint32_t c = 0; c < dst->ncolumns; c++)
		if ((__int128)rv[c] * sc != (__int128)m->seek_values[c] * rc)
			return 0;
	return 1;
}

/* Index the dst rows added since the last call. */
static void index_rows(struct profile_merge *m)
{
	for (; m->indexed < m->dst->nsamples; m->indexed++)
		hashmap_insert(&m->rows, row_hash(m->dst, &m->dst->samples[m->indexed]), (uint32_t)m->indexed);
}

/* What the run description says after src is added (dst had runs already). */
static void merge_run(struct profile *dst, const struct profile *src)
{
	dst->duration_ns = dst->duration_ns + src->duration_ns < dst->duration_ns ? UINT64_MAX
										 : dst->duration_ns + src->duration_ns;
	dst->lost_samples = dst->lost_samples + src->lost_samples < dst->lost_samples
				    ? UINT64_MAX
				    : dst->lost_samples + src->lost_samples;
	if (src->start_realtime_ns && (!dst->start_realtime_ns || src->start_realtime_ns < dst->start_realtime_ns))
		dst->start_realtime_ns = src->start_realtime_ns;
	if (!dst->wait_status)
		dst->wait_status = src->wait_status;
	dst->ended = dst->ended && src->ended;
	dst->exact = dst->exact && src->exact;
	dst->rows_are_signals = dst->rows_are_signals && src->rows_are_signals;
	dst->alloc_peak_ns = 0; /* each run's peak was at its own time */
}

struct profile *profile_sum_threads(const struct profile *p)
{
	struct profile *dst = profile_new();
	if (!dst)
		abort_out_of_memory();
	struct profile_remap *r = profile_remap_new(dst, p, 0);
	profile_remap_run(r);
	for (uint32_t t = 0; t < p->nthreads; t++)
		profile_remap_thread(r, t); /* copies: dst thread t is p's */
	profile_remap_free(r);
	uint32_t empty = profile_add_stack(dst, NULL, 0);
	uint32_t nt = p->nthreads, nc = p->ncolumns;
	/* Per thread: the row being filled, or UINT64_MAX (samples of a thread p does not have are dropped). */
	uint64_t *row = calloc_or_abort(nt ? nt : 1, sizeof(*row));
	for (uint32_t t = 0; t < nt; t++)
		row[t] = UINT64_MAX;
	for (uint64_t i = 0; i < p->nsamples; i++) {
		const struct profile_sample *s = &p->samples[i];
		if (s->thread >= nt)
			continue;
		const int64_t *v = p->values + i * nc;
		uint64_t k = row[s->thread];
		/* A full count starts a row of its own. */
		if (k == UINT64_MAX || (uint64_t)dst->samples[k].merged + s->merged + 1 >= UINT32_MAX) {
			struct profile_sample first = {.stack = empty, .thread = s->thread, .merged = s->merged};
			profile_add_sample(dst, &first, v);
			row[s->thread] = dst->nsamples - 1;
			continue;
		}
		dst->samples[k].merged += s->merged + 1;
		for (uint32_t c = 0; c < nc; c++)
			dst->values[k * nc + c] = sat_add_i64(dst->values[k * nc + c], v[c], NULL);
	}
	free(row);
	return dst;
}

int profile_merge_add(struct profile_merge *m, const struct profile *src, char *err, size_t errlen)
{
	struct profile *dst = m->dst;
	uint32_t before = dst->ntraces;
	int first = before == 0;
	if (!first && comparable(dst, src, err, errlen))
		return -1;
	int apart = (m->flags & PROFILE_MERGE_RUNS_APART) != 0;
	struct profile_remap *r =
		profile_remap_new(dst, src, PROFILE_REMAP_MERGE | (apart ? PROFILE_REMAP_THREADS_APART : 0));
	if (first)
		profile_remap_run(r);
	else
		merge_run(dst, src);
	/* Every table in src's order first: one trace merged alone keeps its ids. */
	profile_remap_tables(r);
	for (uint32_t t = 0; apart && t < src->nthreads; t++) {
		uint32_t id = profile_remap_thread(r, t); /* may move dst->threads */
		dst->threads[id].run = before;
	}
	int every_row = (m->flags & PROFILE_MERGE_EVERY_ROW) != 0;
	for (uint64_t i = 0; i < src->nsamples; i++) {
		const struct profile_sample *s = &src->samples[i];
		struct profile_sample row = *s;
		row.stack = profile_remap_stack(r, s->stack);
		row.thread = profile_remap_thread(r, s->thread);
		const int64_t *values = src->values + i * src->ncolumns;
		uint32_t found = HASHMAP_NONE;
		uint64_t h = 0;
		if (!every_row) {
			index_rows(m);
			m->seek = &row;
			m->seek_values = values;
			h = row_hash(dst, &row);
			found = hashmap_find(&m->rows, h, row_equal, m);
		}
		if (found == HASHMAP_NONE) {
			profile_add_sample(dst, &row, values);
			continue;
		}
		struct profile_sample *d = &dst->samples[found];
		d->merged += s->merged + 1;
		if (s->time_ns && (!d->time_ns || s->time_ns < d->time_ns))
			d->time_ns = s->time_ns;
		int64_t *dv = dst->values + (uint64_t)found * dst->ncolumns;
		for (uint32_t c = 0; c < dst->ncolumns; c++)
			dv[c] = sat_add_i64(dv[c], values[c], NULL);
	}
	profile_remap_free(r);
	dst->ntraces = before + (src->ntraces ? src->ntraces : 1);
	return 0;
}
