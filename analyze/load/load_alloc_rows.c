/*
 * load_alloc_rows.c - the allocation consumer's last step (load_allocs.c
 * matches the events): once the stacks are built and resolved, the run's
 * figures go into load_stats and each key (stack, thread, what was
 * allocated) becomes profile samples: one row, or, with alloc_bins (plots),
 * a row per time bin plus one at its process's peak. The leaves naming what
 * was allocated and the stripping of allocator frames are
 * load_alloc_leaves.c's.
 */
#include "load_allocs_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

static const char *const value_names[NV][2] = {
	{ "alloc_objects", "count" }, { "alloc_space", "bytes" },     { "inuse_objects", "count" },
	{ "inuse_space", "bytes" },   { "peak_objects", "count" },    { "peak_space", "bytes" },
	{ "temporary_objects", "count" }, { "temporary_space", "bytes" },
};


void allocs_finish(struct loader *L, void *state)
{
	struct allocs_state *st = state;
	(void)L;
	if (!st->seen)
		return;
	/* Keys that did not change after the last peak hold at the end what they held then. */
	for (uint32_t i = 0; i < st->nkeys; i++) {
		struct key *k = &st->keys[i];
		if (k->changed_seq <= st->heaps[k->heap].peak_seq) {
			k->v[V_PEAK_O] = k->v[V_INUSE_O];
			k->v[V_PEAK_B] = k->v[V_INUSE_B];
		}
	}
	/* The live blocks are in the keys' figures now: their tables (the
	 * largest part of the pass, 24 MiB for lua5.4 binary-trees 16) go before
	 * the symbolizer reads the modules' DWARF, instead of under it. */
	for (uint32_t i = 0; i < st->nheaps; i++)
		live_free(&st->heaps[i].live);
}

static int64_t rounded(double x)
{
	return x >= 9.2e18 ? INT64_MAX : x <= -9.2e18 ? INT64_MIN : (int64_t)llround(x);
}

void allocs_resolved(struct loader *L, void *state)
{
	struct allocs_state *st = state;
	alloc_name_marker(L->p, L->stats);
	if (!st->seen)
		return;
	struct profile *p = L->p;
	struct load_stats *s = L->stats;
	s->has_allocs = 1;
	s->alloc_scaled = st->scale;
	s->allocs = rounded(st->allocs);
	s->alloc_bytes = rounded(st->alloc_bytes);
	s->frees = rounded(st->frees);
	s->freed_bytes = rounded(st->freed_bytes);
	/* Each process's peak is its own: the run's is their sum, at the time of the highest. */
	double peak_o = 0, peak_b = 0, live_o = 0, live_b = 0, highest = -1;
	uint64_t peak_time = 0;
	for (uint32_t i = 0; i < st->nheaps; i++) {
		const struct heap *h = &st->heaps[i];
		peak_o += h->peak_o;
		peak_b += h->peak_b;
		live_o += h->live_o;
		live_b += h->live_b;
		if (h->peak_b > highest) {
			highest = h->peak_b;
			peak_time = h->peak_time;
		}
	}
	s->peak_bytes = rounded(peak_b);
	s->peak_objects = rounded(peak_o);
	s->peak_ns = peak_time > p->start_ns && p->start_ns ? peak_time - p->start_ns : 0;
	s->leaked_bytes = rounded(live_b);
	s->leaked_objects = rounded(live_o);
	s->temporary = rounded(st->temp);
	s->temporary_bytes = rounded(st->temp_bytes);
	s->unmatched_frees = st->unmatched;
	/* Exact counts: nothing was sampled (diff then has no noise to test). */
	p->exact = st->scheme == PROFILE_ALLOCS_ALL;
	p->alloc_scheme = st->scheme;
	p->alloc_parameter = st->scheme == PROFILE_ALLOCS_RATE ? st->rate : st->scheme == PROFILE_ALLOCS_BYTES ? st->mean : 1;
	p->alloc_scaled = st->scale;
	p->alloc_peak_ns = s->peak_ns;

	uint32_t first = PROFILE_NO_VALUE;
	for (int v = 0; v < NV; v++) {
		uint32_t t = profile_add_value_type(p, value_names[v][0], value_names[v][1]);
		if (first == PROFILE_NO_VALUE)
			first = t;
	}
	uint32_t col0 = p->value_types[first].column;
	p->default_value = first + V_ALLOC_B;
	struct hashmap memo;
	hashmap_init(&memo, st->nkeys);
	uint32_t *locs = NULL, cap = 0;
	uint32_t *stacks = realloc_or_abort(NULL, (st->nkeys ? st->nkeys : 1) * sizeof(*stacks));
	for (uint32_t i = 0; i < st->nkeys; i++) {
		const struct key *k = &st->keys[i];
		const struct site *site = &st->sites[k->site];
		uint64_t size_key = k->size_key;
		if (site->ranged && !(size_key & CLASS_BIT))
			size_key = CLASS_BIT | (uint64_t)floor_log2(size_key);
		stacks[i] = alloc_leaf_stack(L->p, site->stack, site->kind, size_key, L->o->no_alloc_leaves, &memo,
					     &locs, &cap);
	}
	int64_t row[PROFILE_MAX_VALUE_TYPES] = { 0 };
	uint64_t half = st->bin_ns / 2;
	if (!L->o->alloc_bins) {
		for (uint32_t i = 0; i < st->nkeys; i++) {
			const struct key *k = &st->keys[i];
			for (int v = 0; v < NV; v++)
				row[col0 + v] = rounded(k->v[v]);
			struct profile_sample sm = { .stack = stacks[i], .thread = k->thread, .time_ns = 0 };
			profile_add_sample(p, &sm, row);
		}
	} else {
		for (uint32_t i = 0; i < st->nrows; i++) {
			const struct row *r = &st->rows[i];
			memset(row, 0, sizeof(row));
			for (int v = 0; v < 4; v++)
				row[col0 + v] = rounded(r->v[v]);
			row[col0 + V_TEMP_O] = rounded(r->v[4]);
			row[col0 + V_TEMP_B] = rounded(r->v[5]);
			struct profile_sample sm = { .stack = stacks[r->key], .thread = st->keys[r->key].thread,
						     .time_ns = st->t0 + (uint64_t)r->bin * st->bin_ns + half };
			profile_add_sample(p, &sm, row);
		}
		for (uint32_t i = 0; i < st->nkeys; i++) {
			const struct key *k = &st->keys[i];
			if (!k->v[V_PEAK_O] && !k->v[V_PEAK_B])
				continue;
			memset(row, 0, sizeof(row));
			row[col0 + V_PEAK_O] = rounded(k->v[V_PEAK_O]);
			row[col0 + V_PEAK_B] = rounded(k->v[V_PEAK_B]);
			/* At its process's peak: the bins stay as they are (the rows above made them). */
			uint64_t at = st->heaps[k->heap].peak_time ? st->heaps[k->heap].peak_time : st->t0;
			uint32_t peak_bin = (uint32_t)((at > st->t0 ? at - st->t0 : 0) / st->bin_ns);
			if (peak_bin >= MAX_BINS)
				peak_bin = MAX_BINS - 1;
			struct profile_sample sm = { .stack = stacks[i], .thread = k->thread,
						     .time_ns = st->t0 + (uint64_t)peak_bin * st->bin_ns + half };
			profile_add_sample(p, &sm, row);
		}
		p->time_resolution_ns = st->bin_ns;
	}
	free(stacks);
	free(locs);
	hashmap_free(&memo);
}
