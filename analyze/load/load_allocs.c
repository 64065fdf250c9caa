/*
 * load_allocs.c - the consumer of ALLOCS records (trace 1.3, see
 * load_internal.h): allocations and frees become value types of the one
 * profile, aggregated, never one sample per event.
 *
 * Events arrive in their process's seq order (collect put them so), so one
 * pass with a table of live blocks matches every free to its allocation:
 * memory goes with live blocks and distinct (stack, thread, what) keys,
 * never with the number of events. A free of a block the trace never saw
 * allocated (allocated before the agent started, or not chosen) is ignored.
 *
 * Processes. Each program image of the tree (the first process, a forked
 * child, a program exec'd: PROCESS records, load_procs.c) has a heap of its
 * own: its table of live blocks, its live and peak figures. A forked child
 * starts with none of its parent's blocks (it frees its copies of them as
 * frees of nothing it allocated), so leaks, peak and temporaries are each
 * process's own, and the run's figures are their sums (the peak too: each
 * process's live blocks at its own highest live heap). An image that exec'd
 * another program in place leaves its live blocks as its leaks.
 *
 * Speed: every event costs a look-up in the table of live blocks
 * (load_alloc_live.c: identities in a recent array by their low bits, other
 * blocks hashed; prefetched a few events ahead); an allocation's key comes
 * from a site array by stack id and a direct-mapped cache of recent keys,
 * the hash tables only on a miss (load_alloc_keys.c). Without plot bins or
 * scaling (nearly always) the events go through a loop of their own on the
 * figures it changes in locals (allocs_events_fast).
 *
 * Per key (allocation stack, thread, function and size): allocations and
 * their bytes, what is live at the end (inuse = leaks), what was live at the
 * moment of the highest live heap (peak), and temporaries. A temporary is
 * heaptrack's: a free whose block has the size and stack of the process's
 * event just before it, an allocation (nearly always the block just
 * allocated), whatever the threads; seen in the events' order, when every
 * allocation was recorded. A sampled trace holds too few events for that: its
 * temporaries are the agent's, per thread (the free of a block its thread
 * allocated last, no allocation or free by the thread in between, chosen or
 * not: TRACE_HEAP_TEMPORARY), the same in a single-threaded program.
 * The peak's share of each key is kept lazily in O(1) per event: a key
 * remembers its live figure as of the latest peak the first time it changes
 * after that peak (and at the end), so nothing is copied when a new peak is
 * reached.
 *
 * Leaves: a key's size is exact when its site (stack and function) had at
 * most SITE_SIZES of them, a power-of-two range otherwise; the leaf naming
 * it and the stripping of allocator frames are load_alloc_leaves.c's, the
 * profile's rows made of the keys load_alloc_rows.c's (the structures both
 * halves share: load_allocs_internal.h).
 *
 * Time: with alloc_bins (plots), each key has a row per time bin (the bins
 * double in width as the run goes on, at most MAX_BINS), so the rows' inuse
 * summed in time order is the live heap over time; the peak's rows sit at
 * the peak's time, so a plot can mark the exact peak. Without, one row per
 * key, time 0.
 *
 * Sampled traces (META alloc_scheme rate or bytes) are shown as recorded;
 * with --scale each allocation weighs 1/RATE, or 1/(1 - exp(-size/N)) when
 * bytes were sampled, so totals are unbiased estimates.
 */
#include "load_allocs_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

static void *allocs_start(struct loader *L)
{
	(void)L;
	struct allocs_state *st = calloc_or_abort(1, sizeof(*st));
	hashmap_init(&st->site_index, 256);
	hashmap_init(&st->key_index, 256);
	hashmap_init(&st->row_index, 256);
	hashmap_init(&st->heap_index, 16);
	memset(st->hot, 0xff, sizeof(st->hot));
	return st;
}

static void allocs_free(void *state)
{
	struct allocs_state *st = state;
	hashmap_free(&st->site_index);
	hashmap_free(&st->key_index);
	hashmap_free(&st->row_index);
	for (uint32_t i = 0; i < st->nheaps; i++)
		live_free(&st->heaps[i].live);
	free(st->heaps);
	hashmap_free(&st->heap_index);
	free(st->sites);
	free(st->keys);
	free(st->rows);
	free(st->undo);
	free(st->stack_site);
	free(st);
}

/* The scheme from META (collect writes it before any event). */
static void read_scheme(struct loader *L, struct allocs_state *st)
{
	const struct load_stats *s = L->stats;
	st->scheme = PROFILE_ALLOCS_ALL; /* traces before 1.3 recorded every allocation */
	for (uint32_t i = 0; i < s->nmeta; i++) {
		const char *key = profile_string(L->p, s->meta[i].key), *value = profile_string(L->p, s->meta[i].value);
		if (!strcmp(key, TRACE_META_ALLOC_SCHEME))
			st->scheme = !strcmp(value, TRACE_ALLOC_SCHEME_RATE)    ? PROFILE_ALLOCS_RATE
				     : !strcmp(value, TRACE_ALLOC_SCHEME_BYTES) ? PROFILE_ALLOCS_BYTES
										 : PROFILE_ALLOCS_ALL;
		else if (!strcmp(key, TRACE_META_ALLOC_RATE))
			st->rate = strtod(value, NULL);
		else if (!strcmp(key, TRACE_META_ALLOC_MEAN_BYTES))
			st->mean = strtod(value, NULL);
	}
	/* A scribbled or missing parameter leaves the figures as recorded. */
	if (st->scheme == PROFILE_ALLOCS_RATE && !(st->rate > 0 && st->rate <= 1))
		st->scheme = PROFILE_ALLOCS_ALL;
	if (st->scheme == PROFILE_ALLOCS_BYTES && !(st->mean >= 1))
		st->scheme = PROFILE_ALLOCS_ALL;
	st->scale = L->o->scale && st->scheme != PROFILE_ALLOCS_ALL;
	st->t0 = L->p->start_ns;
	st->bin_ns = FIRST_BIN_NS;
}

/* What one recorded allocation of size stands for. */
static double weight(const struct allocs_state *st, uint64_t size)
{
	if (!st->scale)
		return 1;
	if (st->scheme == PROFILE_ALLOCS_RATE)
		return 1 / st->rate;
	double p = -expm1(-(double)size / st->mean);
	return p > 0 ? 1 / p : 1;
}

/* allocs_key_of_event's first test (load_alloc_keys.c), inline: nearly every allocation passes it. */
/* The key stack_sites (st's, or a copy of its pointer) remember for e's stack, or HASHMAP_NONE. */
static inline __attribute__((always_inline)) uint32_t remembered_key(const struct allocs_state *st,
								     const struct stack_site *stack_sites,
								     uint32_t thread, const struct trace_heap_event *e)
{
	uint32_t id = e->stack_id;
	if (id >= st->stack_site_cap) /* entries past DENSE_SITE_IDS are never filled: no key */
		return HASHMAP_NONE;
	const struct stack_site *ss = &stack_sites[id];
	return ss->kind == e->kind && ss->size == e->size && ss->thread == thread && ss->heap == st->cur &&
			       ss->epoch == st->ranged_epoch
		       ? ss->key
		       : HASHMAP_NONE;
}

static inline __attribute__((always_inline)) uint32_t key_of_event(struct loader *L, struct allocs_state *st,
								   uint32_t thread, const struct trace_heap_event *e)
{
	uint32_t key = remembered_key(st, st->stack_site, thread, e);
	return key != HASHMAP_NONE ? key : allocs_key_of_event(L, st, thread, e);
}

/* ---- time bins ---- */

/* Bins are twice as wide from now on: rows of two bins become one. */
static void widen_bins(struct allocs_state *st)
{
	st->bin_ns *= 2;
	hashmap_free(&st->row_index);
	hashmap_init(&st->row_index, st->nrows ? st->nrows : 256);
	uint32_t kept = 0;
	for (uint32_t i = 0; i < st->nrows; i++) {
		struct row r = st->rows[i];
		r.bin /= 2;
		uint32_t *slot = hashmap_slot(&st->row_index, (uint64_t)r.key << 16 | r.bin);
		if (*slot == HASHMAP_NONE) {
			*slot = kept;
			st->rows[kept++] = r;
		} else {
			for (int v = 0; v < 6; v++)
				st->rows[*slot].v[v] += r.v[v];
		}
	}
	st->nrows = kept;
}

static uint32_t bin_of(struct allocs_state *st, uint64_t time_ns)
{
	if (!st->t0)
		st->t0 = time_ns;
	uint64_t since = time_ns > st->t0 ? time_ns - st->t0 : 0;
	while (since / st->bin_ns >= MAX_BINS)
		widen_bins(st);
	return (uint32_t)(since / st->bin_ns);
}

static void add_row(struct allocs_state *st, uint32_t key, uint64_t time_ns, int v, double x)
{
	uint32_t bin = bin_of(st, time_ns);
	uint32_t *slot = hashmap_slot(&st->row_index, (uint64_t)key << 16 | bin);
	if (*slot == HASHMAP_NONE) {
		ALLOC_GROW(st->rows, (uint64_t)st->nrows + 1, st->rows_cap);
		st->rows[st->nrows] = (struct row){ .key = key, .bin = bin };
		*slot = st->nrows++;
	}
	st->rows[*slot].v[v] += x;
}

/* ---- events ---- */

/*
 * The per-event functions below take bins (L->o->alloc_bins) and scale
 * (st->scale) as arguments: allocs_record calls them through a loop
 * instantiated for each (always inline, constant flags), so that the common
 * case (no plot, as recorded) carries neither test nor weight per event.
 */
static inline __attribute__((always_inline)) void add_value(struct allocs_state *st, int bins, uint32_t key,
							    uint64_t time_ns, int v, double x)
{
	st->keys[key].v[v] += x;
	if (bins) /* a row holds alloc, inuse and temporary: no peak */
		add_row(st, key, time_ns, v < V_PEAK_O ? v : v - 2, x);
}

/* weight() when scale is known: 1 unless the trace is scaled. */
static inline __attribute__((always_inline)) double weight_of(const struct allocs_state *st, int scale,
							      uint64_t size)
{
	return scale ? weight(st, size) : 1;
}

/*
 * A live change of key at seq: first keep what it held at the latest peak
 * (see the top). Inlined into every caller: it runs once or twice an event.
 * grows: bytes may be above 0 (a decrease never makes a peak: the live heap
 * is at most its peak after every change).
 */
static inline __attribute__((always_inline)) void live_change(struct allocs_state *st, int bins, struct heap *h,
							      uint32_t key, uint64_t seq, uint64_t time_ns,
							      double objects, double bytes, int grows)
{
	struct key *k = &st->keys[key];
	if (k->changed_seq <= h->peak_seq) {
		k->v[V_PEAK_O] = k->v[V_INUSE_O];
		k->v[V_PEAK_B] = k->v[V_INUSE_B];
	}
	k->changed_seq = seq;
	add_value(st, bins, key, time_ns, V_INUSE_O, objects);
	add_value(st, bins, key, time_ns, V_INUSE_B, bytes);
	h->live_o += objects;
	h->live_b += bytes;
	if (grows && h->live_b > h->peak_b) {
		h->peak_b = h->live_b;
		h->peak_o = h->live_o;
		h->peak_seq = seq;
		h->peak_time = time_ns;
	}
}

static struct undo *undo_of(struct allocs_state *st, uint32_t thread)
{
	if (thread >= st->undo_cap) {
		uint32_t old = st->undo_cap;
		ALLOC_GROW(st->undo, (uint64_t)thread + 1, st->undo_cap);
		memset(st->undo + old, 0, (st->undo_cap - old) * sizeof(*st->undo));
	}
	return &st->undo[thread];
}

/* The latest event of h was an allocation of size bytes, of key. */
static inline __attribute__((always_inline)) void note_allocation(struct heap *h, const struct key *keys, uint32_t key,
								  uint64_t size)
{
	h->last_valid = 1;
	h->last_site = keys[key].site;
	h->last_size = size;
}

/* Whether a free of a block of key and size (flags: the event's) is a temporary (see the top); its event is h's latest. */
static inline __attribute__((always_inline)) int is_temporary(const struct allocs_state *st, struct heap *h,
							      const struct key *keys, uint32_t key, uint64_t size,
							      uint32_t flags)
{
	if (st->scheme != PROFILE_ALLOCS_ALL)
		return (flags & TRACE_HEAP_TEMPORARY) != 0;
	int temporary = h->last_valid && h->last_size == size && keys[key].site == h->last_site;
	h->last_valid = 0;
	return temporary;
}

static inline __attribute__((always_inline)) void on_alloc(struct loader *L, struct allocs_state *st, int bins,
							   int scale, struct heap *h, uint32_t thread,
							   const struct trace_heap_event *e, uint64_t seq)
{
	uint32_t okey;
	uint64_t osize;
	if (e->flags & TRACE_HEAP_RESTORED) {
		/* realloc failed after its free was recorded: the block lives on. */
		struct undo *u = undo_of(st, thread);
		if (!u->valid || u->address != e->address || st->keys[u->key].heap != st->cur)
			return;
		u->valid = 0;
		if (live_has(&h->live, e->address))
			return;
		live_put(&h->live, e->address, u->key, u->size, &okey, &osize);
		double w = weight_of(st, scale, u->size);
		st->frees -= w;
		st->freed_bytes -= w * (double)u->size;
		live_change(st, bins, h, u->key, seq, e->time_ns, w, w * (double)u->size, 1);
		return;
	}
	uint32_t key = key_of_event(L, st, thread, e);
	note_allocation(h, st->keys, key, e->size);
	double w = weight_of(st, scale, e->size);
	if (live_put(&h->live, e->address, key, e->size, &okey, &osize)) {
		/* Allocated twice without a free between: the free was not recorded. */
		st->repeated++;
		double ow = weight_of(st, scale, osize);
		live_change(st, bins, h, okey, seq, e->time_ns, -ow, -ow * (double)osize, 0);
	}
	st->allocs += w;
	st->alloc_bytes += w * (double)e->size;
	add_value(st, bins, key, e->time_ns, V_ALLOC_O, w);
	add_value(st, bins, key, e->time_ns, V_ALLOC_B, w * (double)e->size);
	live_change(st, bins, h, key, seq, e->time_ns, w, w * (double)e->size, 1);
}

static inline __attribute__((always_inline)) void on_free(struct allocs_state *st, int bins, int scale,
							  struct heap *h, uint32_t thread,
							  const struct trace_heap_event *e, uint64_t seq)
{
	uint32_t key;
	uint64_t size;
	if (!live_take(&h->live, e->address, &key, &size)) {
		st->unmatched++;
		return;
	}
	double w = weight_of(st, scale, size), bytes = w * (double)size;
	st->frees += w;
	st->freed_bytes += bytes;
	if (is_temporary(st, h, st->keys, key, size, e->flags)) {
		st->temp += w;
		st->temp_bytes += bytes;
		add_value(st, bins, key, e->time_ns, V_TEMP_O, w);
		add_value(st, bins, key, e->time_ns, V_TEMP_B, bytes);
	}
	live_change(st, bins, h, key, seq, e->time_ns, -w, -bytes, 0);
	if (e->flags & TRACE_HEAP_BY_REALLOC)
		*undo_of(st, thread) = (struct undo){ e->address, size, key, 1 };
}

/* The heap of pid's latest image, made when first seen. */
static struct heap *heap_of(struct loader *L, struct allocs_state *st, uint32_t pid)
{
	uint32_t image = hashmap_get(&L->images, pid);
	uint32_t *slot = hashmap_slot(&st->heap_index, (uint64_t)pid << 32 | (image == HASHMAP_NONE ? 0 : image));
	if (*slot == HASHMAP_NONE) {
		ALLOC_GROW(st->heaps, (uint64_t)st->nheaps + 1, st->heaps_cap);
		memset(&st->heaps[st->nheaps], 0, sizeof(st->heaps[0]));
		live_init(&st->heaps[st->nheaps].live);
		st->heaps[st->nheaps].pid = pid;
		*slot = st->nheaps++;
	}
	st->cur = *slot;
	return &st->heaps[*slot];
}

/* One record's events, bins and scale constant (see add_value). */
static inline __attribute__((always_inline)) void allocs_events(struct loader *L, struct allocs_state *st,
								int bins, int scale, struct heap *h,
								const struct trace_allocs *a)
{
	uint32_t tid = 0, thread = HASHMAP_NONE, count = a->count;
	uint64_t last_time_ns = L->last_time_ns;
	for (uint32_t i = 0; i < count; i++) {
		const struct trace_heap_event *e = &a->events[i];
		/* A big live table misses the cache on every event: ask for the
		 * slots of the events a few ahead (a hint only; the table may grow),
		 * eight at a time (the table's fields read once for them). */
		if (LIVE_PREFETCH && !(i & 7))
			live_prefetch_events(&h->live, a->events, i + LIVE_PREFETCH,
					     i + LIVE_PREFETCH + 8 < count ? i + LIVE_PREFETCH + 8 : count);
		if (thread == HASHMAP_NONE || e->tid != tid) {
			tid = e->tid;
			thread = loader_thread_index(L, a->pid, tid);
		}
		if (e->time_ns > last_time_ns)
			last_time_ns = e->time_ns;
		if (e->kind == TRACE_HEAP_FREE)
			on_free(st, bins, scale, h, thread, e, ++st->events);
		else if (e->kind != TRACE_HEAP_NONE && e->kind <= TRACE_HEAP_PVALLOC)
			on_alloc(L, st, bins, scale, h, thread, e, ++st->events);
	}
	L->last_time_ns = last_time_ns;
}

/*
 * allocs_events for no plot and no scale, the common case, on the figures it
 * changes held in locals: the compiler cannot tell a store to a key or a
 * live slot from one to the state, and read every field again after each.
 * They are handed back to st and h around every call that reads or changes
 * them (the rare events take the general path, on_alloc and on_free) and at
 * the end; the same operations in the same order, so the same figures.
 */
struct fast {
	struct key *keys;
	struct stack_site *stack_site;
	struct live *recent;
	uint64_t recent_mask, peak_seq, events;
	double live_o, live_b, peak_b;
	double allocs, alloc_bytes, frees, freed_bytes;
};

static inline __attribute__((always_inline)) void fast_load(struct fast *f, const struct allocs_state *st,
							   const struct heap *h)
{
	*f = (struct fast){ st->keys, st->stack_site, h->live.recent, h->live.recent_cap - 1, h->peak_seq, st->events,
			    h->live_o, h->live_b, h->peak_b, st->allocs, st->alloc_bytes, st->frees, st->freed_bytes };
}

static inline __attribute__((always_inline)) void fast_store(const struct fast *f, struct allocs_state *st,
							    struct heap *h)
{
	h->live_o = f->live_o;
	h->live_b = f->live_b;
	h->peak_b = f->peak_b;
	h->peak_seq = f->peak_seq;
	st->events = f->events;
	st->allocs = f->allocs;
	st->alloc_bytes = f->alloc_bytes;
	st->frees = f->frees;
	st->freed_bytes = f->freed_bytes;
}

/* live_change on the locals. */
static inline __attribute__((always_inline)) void fast_change(struct fast *f, struct heap *h, uint32_t key,
							     uint64_t time_ns, double objects, double bytes, int grows)
{
	struct key *k = &f->keys[key];
	if (k->changed_seq <= f->peak_seq) {
		k->v[V_PEAK_O] = k->v[V_INUSE_O];
		k->v[V_PEAK_B] = k->v[V_INUSE_B];
	}
	k->changed_seq = f->events;
	k->v[V_INUSE_O] += objects;
	k->v[V_INUSE_B] += bytes;
	f->live_o += objects;
	f->live_b += bytes;
	if (grows && f->live_b > f->peak_b) {
		f->peak_b = f->live_b;
		h->peak_o = f->live_o;
		f->peak_seq = f->events;
		h->peak_time = time_ns;
	}
}

static NO_SLP_VECTORIZE void allocs_events_fast(struct loader *L, struct allocs_state *st, struct heap *h,
						 const struct trace_allocs *a)
{
	uint32_t tid = 0, thread = HASHMAP_NONE, count = a->count, key, okey;
	uint64_t size, osize;
	struct fast f;
	fast_load(&f, st, h);
	for (uint32_t i = 0; i < count; i++) {
		const struct trace_heap_event *e = &a->events[i];
		if (LIVE_PREFETCH && !(i & 7)) /* as in allocs_events */
			live_prefetch_events(&h->live, a->events, i + LIVE_PREFETCH,
					     i + LIVE_PREFETCH + 8 < count ? i + LIVE_PREFETCH + 8 : count);
		if (thread == HASHMAP_NONE || e->tid != tid) {
			tid = e->tid;
			thread = loader_thread_index(L, a->pid, tid);
		}
		if (e->time_ns > L->last_time_ns)
			L->last_time_ns = e->time_ns;
		uint64_t block = e->address;
		if (e->kind == TRACE_HEAP_FREE) {
			f.events++;
			struct live *r = &f.recent[block & f.recent_mask];
			if (live_is_identity(block) && f.recent && r->block == block && r->size != LIVE_BIG) {
				key = r->key;
				size = r->size;
				r->block = 0;
				h->live.nrecent--;
			} else {
				fast_store(&f, st, h);
				int found = live_take_slow(&h->live, block, &key, &size);
				fast_load(&f, st, h);
				if (!found) {
					st->unmatched++;
					continue;
				}
			}
			double bytes = (double)size;
			f.frees += 1;
			f.freed_bytes += bytes;
			if (is_temporary(st, h, f.keys, key, size, e->flags)) {
				st->temp += 1;
				st->temp_bytes += bytes;
				f.keys[key].v[V_TEMP_O] += 1;
				f.keys[key].v[V_TEMP_B] += bytes;
			}
			fast_change(&f, h, key, e->time_ns, -1, -bytes, 0);
			if (e->flags & TRACE_HEAP_BY_REALLOC)
				*(thread < st->undo_cap ? &st->undo[thread] : undo_of(st, thread)) =
					(struct undo){ block, size, key, 1 };
		} else if (e->kind != TRACE_HEAP_NONE && e->kind <= TRACE_HEAP_PVALLOC) {
			if (e->flags & TRACE_HEAP_RESTORED) { /* rare: the general path */
				f.events++;
				fast_store(&f, st, h);
				on_alloc(L, st, 0, 0, h, thread, e, st->events);
				fast_load(&f, st, h);
				continue;
			}
			key = remembered_key(st, f.stack_site, thread, e);
			if (key == HASHMAP_NONE) {
				key = allocs_key_of_event(L, st, thread, e);
				f.keys = st->keys;
				f.stack_site = st->stack_site;
			}
			f.events++;
			size = e->size;
			note_allocation(h, f.keys, key, size);
			struct live *r = &f.recent[block & f.recent_mask];
			if (live_is_identity(block) && block > h->live.highest && f.recent && size < LIVE_BIG && !r->block) {
				*r = (struct live){ block, key, (uint32_t)size };
				h->live.nrecent++;
				h->live.highest = block;
			} else {
				fast_store(&f, st, h);
				int replaced = live_put_slow(&h->live, block, key, size, &okey, &osize);
				fast_load(&f, st, h);
				if (replaced) {
					/* Allocated twice without a free between: the free was not recorded. */
					st->repeated++;
					fast_change(&f, h, okey, e->time_ns, -1, -(double)osize, 0);
				}
			}
			f.allocs += 1;
			f.alloc_bytes += (double)size;
			f.keys[key].v[V_ALLOC_O] += 1;
			f.keys[key].v[V_ALLOC_B] += (double)size;
			fast_change(&f, h, key, e->time_ns, 1, (double)size, 1);
		}
	}
	fast_store(&f, st, h);
}

static void allocs_record(struct loader *L, void *state, const struct trace_record *rec)
{
	struct allocs_state *st = state;
	const struct trace_allocs *a = &rec->u.allocs;
	if (!st->seen) {
		st->seen = 1;
		L->saw_allocs = 1;
		read_scheme(L, st);
	}
	struct heap *h = heap_of(L, st, a->pid);
	if (!L->o->alloc_bins && !st->scale)
		allocs_events_fast(L, st, h, a);
	else
		allocs_events(L, st, L->o->alloc_bins != 0, st->scale, h, a);
}

static const enum trace_type alloc_types[] = { TRACE_ALLOCS, 0 };
const struct record_consumer load_allocs_consumer = {
	"allocs", alloc_types, allocs_start, allocs_record, allocs_finish, allocs_resolved, allocs_free,
};
