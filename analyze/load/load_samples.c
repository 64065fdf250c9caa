/*
 * load_samples.c - the consumer of STACK, SAMPLES and LOSS records (see
 * load_internal.h), and the checks of what those records cannot truthfully
 * say.
 *
 * The agent writes stacks, samples and loss counters from inside the
 * profiled program, through memory the program can scribble on, so their
 * numbers are untrusted: once the run's duration is known (END is collect's
 * own clock), values that cannot be true are clamped and said once per
 * thread, never once per record:
 *   - a sample weighs at most the timer periods that fit in the run;
 *   - a thread loses at most that many samples (losses not attributed to a
 *     thread: that many per thread the run could have had);
 *   - a thread's samples add up to at most the run's duration of CPU time
 *     (said, not clamped: each sample alone was possible);
 *   - sample times lie within the run, and a thread's do not go backwards
 *     (by more than a second: its ring keeps its own order).
 * A trace without END, start time or interval gives no bound; sums
 * saturate at the int64 limit instead of wrapping.
 *
 * Samples whose stack is empty or never defined get an "[unknown]" frame
 * (load_stacks.c), so every report adds up to the same total.
 *
 * Unless load_options.sample_times asks for rows in time (below), samples are
 * summed as they stream in: one profile row per distinct (stack, thread,
 * label, weight, epoch), profile_sample.merged counting the samples beyond
 * the first, time_ns the earliest sample's. The weight is part of the key so that
 * the checks above (a weight clamped, a row of weight 0 that is no signal)
 * still see each sample's (a weight no run could clamp counts as 1, see
 * key_weight); the epoch (MODULE_UNLOAD records read so far
 * at or before the sample's time) so that a row never mixes the modules of
 * two epochs (load_stacks.c). Each row's earliest and latest times stand in
 * for its samples' in the check of times outside the run.
 *
 * LOAD_TIMES_EXACT keeps a row per sample. LOAD_TIMES_BINNED does too while
 * the rows stay within load_options.time_rows, so a trace that small loads
 * exactly as EXACT; the row that passes the bound turns the rows into sums
 * per key and time bin (bins of 2^k ns from the run's start, the bin
 * another part of the key). Each time the rows reach the bound again the
 * bins double and equal keys of neighbouring bins merge, until the rows are
 * at most half the bound (or all lie in one bin: then the keys alone are
 * that many, and the bound grows to them), so memory stays within the bound
 * whatever the run's length, and the bins are as fine as it allows. A
 * thread's rows stay in the order of their first samples, so bin by bin in
 * time (what speedscope's sample order needs); a binned row's time is its
 * bin's middle (profile.sample_bin_ns says the width), so that a plot
 * spreads its weight over its bin (plot_spread.c).
 */
#include "load_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "arith.h"
#include "terminal.h"

/* Unattributed losses (threads without a ring) may come from this many threads. */
#define LOSS_THREADS_BOUND 65536u
/* Without a duration to bound them, no count above this is believable. */
#define SANE_COUNT_BOUND (1ull << 40)
/* Sample times may stray this far outside the run before they are flagged. */
#define TIME_SLACK_NS 1000000000ull

struct thread_loss {
	uint32_t pid, tid;
	uint64_t lost;
};

/* What the samples said, per thread index, gathered as they stream in. */
struct thread_sums {
	int64_t periods;    /* summed weights */
	uint64_t last_time; /* latest time so far */
	uint64_t backwards; /* samples earlier than that by more than the slack */
};

/*
 * A summed row while the samples stream in: key, sums and time span in one
 * 48-byte struct, so that finding a row costs one cache miss beside the
 * hash slot's. They become profile rows when the samples end (sums_finish).
 */
struct sum_row {
	uint32_t stack, thread, label;
	uint32_t weight; /* key_weight */
	uint32_t epoch;
	uint32_t merged; /* samples beyond the first */
	int64_t value;   /* summed weights */
	uint64_t min_time, max_time;
};

/* The key sought in the rows (hashmap_eq's ctx); with time bins, the bin too. */
struct row_key {
	const struct sum_row *rows;
	uint32_t stack, thread, label, weight, epoch;
	int binned;
	unsigned shift;
	uint64_t t0, bin;
};

struct samples_state {
	/* Summed rows (unless LOAD_TIMES_EXACT): key hash -> sums[]; profile row i is sums[i]. */
	struct hashmap rows;
	struct sum_row *sums;
	uint64_t nsums, sums_cap;
	uint64_t last_row;       /* the row the previous sample went to, UINT64_MAX: none */
	/*
	 * A direct-mapped cache in front of the hash: per raw stack and
	 * tid % ROW_CACHE_WAYS, the row last used (HASHMAP_NONE: none).
	 * 16 bytes a stack, small enough to stay in cache where the rows and
	 * the hash slots do not: most samples then cost one miss, the row's.
	 */
	uint32_t *row_cache;
	uint64_t row_cache_cap; /* entries */
	struct thread_loss *losses;
	uint32_t nlosses, losses_cap;
	struct hashmap loss_index; /* pid << 32 | tid -> losses[] */
	struct thread_sums *threads;
	uint32_t threads_cap;
	/* LOAD_TIMES_BINNED: summing per bin of 2^bin_shift ns from bin_t0 (once binned is
	 * set); the rows are coarsened when there are row_bound of them. */
	int binned;
	unsigned bin_shift;
	uint64_t bin_t0;
	uint64_t row_bound;
	uint32_t max_weight;
	uint64_t min_time, max_time;
	int saturated;
};

#define DENSE_STACK_IDS (1u << 24)

static uint32_t new_raw_stack(struct loader *L)
{
	ALLOC_GROW(L->raw, (uint64_t)L->nraw + 1, L->raw_cap);
	L->raw[L->nraw] = (struct raw_stack){0};
	return L->nraw++;
}

uint32_t loader_stack_index(struct loader *L, uint32_t id)
{
	if (id < DENSE_STACK_IDS) {
		if (id >= L->stack_by_id_cap) {
			uint32_t old = L->stack_by_id_cap;
			ALLOC_GROW(L->stack_by_id, (uint64_t)id + 1, L->stack_by_id_cap);
			memset(L->stack_by_id + old, 0xff, (L->stack_by_id_cap - old) * sizeof(*L->stack_by_id));
		}
		if (L->stack_by_id[id] == HASHMAP_NONE)
			L->stack_by_id[id] = new_raw_stack(L);
		return L->stack_by_id[id];
	}
	uint32_t *slot = hashmap_slot(&L->stack_ids, id);
	if (*slot == HASHMAP_NONE)
		*slot = new_raw_stack(L);
	return *slot;
}

static void add_stack(struct loader *L, const struct trace_stack *s)
{
	uint32_t i = loader_stack_index(L, s->id);
	ALLOC_GROW(L->ips, L->nips + s->nframes, L->ips_cap);
	memcpy(L->ips + L->nips, s->ips, s->nframes * sizeof(*s->ips));
	L->raw[i].first = L->nips;
	L->raw[i].depth = s->nframes;
	L->raw[i].flags = s->flags;
	L->raw[i].defined = 1;
	L->nips += s->nframes;
	L->stats->stack_records++;
	L->stats->truncated_stacks += (s->flags & TRACE_STACK_TRUNCATED) != 0;
}

/* Samples whose stack was cut at max frames (analyze info counts them). */
static void count_truncated(struct loader *L)
{
	for (uint64_t i = 0; i < L->p->nsamples; i++) {
		uint32_t s = L->p->samples[i].stack;
		if (s < L->nraw && (L->raw[s].flags & TRACE_STACK_TRUNCATED))
			L->stats->truncated_samples += profile_sample_count(&L->p->samples[i]);
	}
}

/* The time bin of t (times before the first bin's start count in it). */
static uint64_t bin_of(uint64_t t0, unsigned shift, uint64_t t)
{
	return t > t0 ? (t - t0) >> shift : 0;
}

static int row_eq(const void *ctx, uint32_t id)
{
	const struct row_key *k = ctx;
	const struct sum_row *r = &k->rows[id];
	/* A row's samples all lie in one bin: its earliest says which. */
	return r->stack == k->stack && r->thread == k->thread && r->label == k->label && r->weight == k->weight &&
	       r->epoch == k->epoch && r->merged < UINT32_MAX &&
	       (!k->binned || bin_of(k->t0, k->shift, r->min_time) == k->bin);
}

static uint64_t row_hash(const struct row_key *k)
{
	uint64_t h = hash_combine(hash_combine(hash_combine(hash_u64((uint64_t)k->stack << 32 | k->thread), k->label),
					       k->weight), k->epoch);
	return k->binned ? hash_combine(h, k->bin) : h;
}

/* Unload records read so far at or before t (almost always none). */
static uint32_t epoch_so_far(const struct loader *L, uint64_t t)
{
	uint32_t n = 0;
	while (n < L->nunloads_seen && L->unloads_seen[n] <= t)
		n++;
	return n;
}

/*
 * The weight a row's key holds for a sample of weight w at time t: 0 or 1
 * (some weight) when no run could make it too heavy, as a weight within the
 * periods from the start to t cannot (the run lasts at least that long;
 * a sample after the run's end is said as outside it); else w itself, so
 * that check_samples clamps the row's samples one by one.
 */
static uint32_t key_weight(const struct profile *p, uint32_t w, uint64_t t)
{
	if (w <= 1)
		return w;
	if (p->start_ns && p->period > 0 && t >= p->start_ns && w <= (t - p->start_ns) / (uint64_t)p->period + 1)
		return 1;
	return w;
}

#define ROW_CACHE_WAYS 4u

/* Where in the row cache raw stack's entry for a thread's tid is. */
static inline uint64_t row_cache_index(uint32_t stack, uint32_t tid)
{
	return (uint64_t)stack * ROW_CACHE_WAYS + tid % ROW_CACHE_WAYS;
}

/* The row cache's entry for raw stack and a thread's tid (grown to cover stack). */
static uint32_t *row_cache_entry(struct samples_state *st, uint32_t stack, uint32_t tid)
{
	uint64_t i = row_cache_index(stack, tid);
	if (i >= st->row_cache_cap) {
		uint64_t old = st->row_cache_cap;
		ALLOC_GROW(st->row_cache, i + 1, st->row_cache_cap);
		memset(st->row_cache + old, 0xff, (st->row_cache_cap - old) * sizeof(*st->row_cache));
	}
	return &st->row_cache[i];
}

/*
 * Rebuild the rows with bins of 2^st->bin_shift ns: equal keys in one bin
 * merge into the earlier row, so the rows keep the order of their first
 * samples. A row of one sample (before the rows were binned) holds its own
 * weight: its key weight is taken now.
 */
static void rebin(struct loader *L, struct samples_state *st)
{
	/* The rows only shrink: a table that held them holds what they become. */
	if (st->rows.mask + 1 >= 2 * st->nsums) {
		hashmap_clear(&st->rows);
	} else {
		hashmap_free(&st->rows);
		hashmap_init(&st->rows, st->nsums);
	}
	uint64_t n = 0;
	for (uint64_t i = 0; i < st->nsums; i++) {
		struct sum_row r = st->sums[i];
		if (!r.merged)
			r.weight = key_weight(L->p, r.weight, r.min_time);
		struct row_key k = {st->sums, r.stack, r.thread, r.label, r.weight, r.epoch, 1, st->bin_shift,
				    st->bin_t0, bin_of(st->bin_t0, st->bin_shift, r.min_time)};
		uint64_t h = row_hash(&k);
		uint32_t id = hashmap_find(&st->rows, h, row_eq, &k);
		/* merged counts up to UINT32_MAX - 1 (row_eq): a sum past it stays a row of its own. */
		if (id != HASHMAP_NONE && (uint64_t)st->sums[id].merged + r.merged + 1 < UINT32_MAX) {
			struct sum_row *into = &st->sums[id];
			into->merged += r.merged + 1;
			into->value = sat_add_i64(into->value, r.value, NULL);
			into->min_time = r.min_time < into->min_time ? r.min_time : into->min_time;
			into->max_time = r.max_time > into->max_time ? r.max_time : into->max_time;
			continue;
		}
		st->sums[n] = r;
		if (id == HASHMAP_NONE)
			hashmap_insert(&st->rows, h, (uint32_t)n);
		n++;
	}
	st->nsums = n;
	/* Row ids moved: the cache and the last row no longer hold. */
	if (st->row_cache)
		memset(st->row_cache, 0xff, st->row_cache_cap * sizeof(*st->row_cache));
	st->last_row = UINT64_MAX;
}

/* Bins at the start: the span of the samples so far in this many (then doubled as needed). */
#define FIRST_BINS (1u << 16)

/* The rows reached st->row_bound: bin them, or double the bins, until they are at most half of it. */
static void coarsen(struct loader *L, struct samples_state *st)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	for (uint64_t i = 0; i < st->nsums; i++) {
		lo = st->sums[i].min_time < lo ? st->sums[i].min_time : lo;
		hi = st->sums[i].max_time > hi ? st->sums[i].max_time : hi;
	}
	if (!st->binned) {
		st->binned = 1;
		st->bin_t0 = L->p->start_ns && L->p->start_ns <= lo ? L->p->start_ns : lo;
		st->bin_shift = 0;
		while (st->bin_shift < 63 && bin_of(st->bin_t0, st->bin_shift, hi) >= FIRST_BINS)
			st->bin_shift++;
	} else {
		st->bin_shift++;
	}
	for (;;) {
		rebin(L, st);
		if (st->nsums <= st->row_bound / 2 || st->bin_shift >= 63 || bin_of(st->bin_t0, st->bin_shift, hi) == 0)
			break;
		st->bin_shift++;
	}
	/* One bin for the whole span and still too many: the keys alone are that many. */
	if (st->nsums > st->row_bound / 2)
		st->row_bound = 2 * st->nsums;
	L->stats->time_bin_ns = 1ull << st->bin_shift;
}

/* LOAD_TIMES_BINNED before the rows reach the bound: a row per sample, its own weight. */
static void add_exact_row(struct loader *L, struct samples_state *st, const struct profile_sample *s, uint32_t w)
{
	if (st->nsums >= UINT32_MAX - 1)
		abort_with_message("too many distinct (stack, thread, state, weight) keys");
	ALLOC_GROW(st->sums, st->nsums + 1, st->sums_cap);
	st->sums[st->nsums] = (struct sum_row){s->stack, s->thread, s->label, w,
					       L->nunloads_seen ? epoch_so_far(L, s->time_ns) : 0, 0, w,
					       s->time_ns, s->time_ns};
	if (++st->nsums >= st->row_bound)
		coarsen(L, st);
}

/* Sum sample s of weight w into its row, adding the row if its key is new; 1 when new. */
static int sum_sample(struct loader *L, struct samples_state *st, const struct profile_sample *s, uint32_t tid,
		      uint32_t w)
{
	if (L->o->sample_times == LOAD_TIMES_BINNED && !st->binned) {
		add_exact_row(L, st, s, w);
		return 1;
	}
	struct row_key k = {st->sums, s->stack, s->thread, s->label, key_weight(L->p, w, s->time_ns),
			    L->nunloads_seen ? epoch_so_far(L, s->time_ns) : 0, st->binned, st->bin_shift,
			    st->bin_t0, st->binned ? bin_of(st->bin_t0, st->bin_shift, s->time_ns) : 0};
	uint64_t id = st->last_row;
	uint32_t *cached = NULL;
	/* A thread's samples come in runs (its ring), often of one stack: skip the probe then. */
	if (id == UINT64_MAX || !row_eq(&k, (uint32_t)id)) {
		cached = row_cache_entry(st, s->stack, tid);
		id = *cached;
	}
	if (cached && (id == HASHMAP_NONE || !row_eq(&k, (uint32_t)id))) {
		uint64_t h = row_hash(&k);
		id = hashmap_find(&st->rows, h, row_eq, &k);
		if (id == HASHMAP_NONE) {
			if (st->nsums >= UINT32_MAX - 1)
				abort_with_message("too many distinct (stack, thread, state, weight) keys");
			id = st->nsums++;
			ALLOC_GROW(st->sums, st->nsums, st->sums_cap);
			st->sums[id] = (struct sum_row){s->stack, s->thread, s->label, k.weight, k.epoch, 0, 0,
							s->time_ns, s->time_ns};
			st->sums[id].value = w;
			hashmap_insert(&st->rows, h, (uint32_t)id);
			st->last_row = *cached = (uint32_t)id;
			if (st->binned && st->nsums >= st->row_bound)
				coarsen(L, st);
			return 1;
		}
		*cached = (uint32_t)id;
	}
	st->last_row = id;
	struct sum_row *r = &st->sums[id];
	r->merged++;
	r->value = sat_add_i64(r->value, w, NULL);
	if (s->time_ns < r->min_time)
		r->min_time = s->time_ns;
	if (s->time_ns > r->max_time)
		r->max_time = s->time_ns;
	return 0;
}

/* The summed rows become profile rows, in the order their first samples came. */
static void sums_finish(struct loader *L, struct samples_state *st)
{
	struct profile *p = L->p;
	int64_t row[PROFILE_MAX_VALUE_TYPES] = { 0 };
	uint32_t col = p->value_types[L->samples_value].column;
	hashmap_free(&st->rows);
	hashmap_init(&st->rows, 16);
	p->sample_bin_ns = st->binned ? 1ull << st->bin_shift : 0;
	uint64_t mixed = 0;
	for (uint64_t i = 0; i < st->nsums; i++) {
		const struct sum_row *r = &st->sums[i];
		/* collect drains one ring after another: an unload's record can come after samples timed
		 * later than it, which were keyed in the epoch before. Every unload is known now. */
		int spans = L->nunloads_seen && epoch_so_far(L, r->min_time) != epoch_so_far(L, r->max_time);
		if (spans)
			mixed += profile_sample_count(&(struct profile_sample){.merged = r->merged});
		/* time_ns: the earliest, which lies in the row's epoch as all its samples do; in a bin,
		 * its middle, within the row's samples' times when modules were unloaded (any time
		 * between them is in their epoch, unless they span one: then the earliest still). */
		uint64_t t = r->min_time;
		if (st->binned && !spans) {
			uint64_t bin = bin_of(st->bin_t0, st->bin_shift, r->min_time);
			uint64_t start = st->bin_t0 + (bin << st->bin_shift), half = p->sample_bin_ns / 2;
			t = start > UINT64_MAX - half ? UINT64_MAX : start + half;
			if (L->nunloads_seen)
				t = t < r->min_time ? r->min_time : t > r->max_time ? r->max_time : t;
		}
		struct profile_sample s = {.stack = r->stack, .thread = r->thread, .time_ns = t,
					   .label = r->label, .merged = r->merged};
		row[col] = r->value;
		profile_add_sample(p, &s, row);
	}
	if (mixed)
		diag(L->diag, DIAG_WARNING,
		     "%s: %" PRIu64 " samples were summed across a library unload whose record came late: where "
		     "a library was mapped again at its place, their frames are named as at their first sample",
		     L->path, mixed);
}

/*
 * Where the samples go is random in memory (rows by stack popularity), and
 * a sample in a new stack would wait for misses on three tables: its stack
 * id's index (stack_by_id), its row cache entry, its row. The batch is known
 * ahead, so each is brought in a stage before it is read: the index entry
 * of the sample 3 * AHEAD places on, the cache entry of the one 2 * AHEAD
 * on (its index now near), the row of the one AHEAD on. Reading the index
 * and the cache entry unprefetched to find the row stalled on both: 40% of
 * the loop's time at 200,000 stacks. With AHEAD 16, flat of 100 M samples
 * takes 0.83x the CPU time it took with one stage at 8 (paired medians; 4,
 * 8 and 32 were slower; bench/README.md). Written in the loop: as a function of its own
 * GCC 12 dropped the prefetches.
 */
#define AHEAD 16u

static void add_samples(struct loader *L, struct samples_state *st, const struct trace_samples *b)
{
	struct profile *p = L->p;
	/* One value per column: the weight in samples/count's, 0 in the columns
	 * other consumers' types (allocations...) may have added. */
	int64_t row[PROFILE_MAX_VALUE_TYPES] = { 0 };
	uint32_t col = p->value_types[L->samples_value].column;
	p->rows_are_signals = 1;
	L->samples_read += b->count;
	for (uint32_t i = 0; i < b->count; i++) {
		const struct trace_sample *ts = &b->samples[i];
		if (L->o->sample_times != LOAD_TIMES_EXACT) {
			if (i + 3 * AHEAD < b->count && ts[3 * AHEAD].stack_id < L->stack_by_id_cap)
				__builtin_prefetch(&L->stack_by_id[ts[3 * AHEAD].stack_id]);
			if (i + 2 * AHEAD < b->count && ts[2 * AHEAD].stack_id < L->stack_by_id_cap) {
				uint32_t raw = L->stack_by_id[ts[2 * AHEAD].stack_id];
				uint64_t e = row_cache_index(raw, ts[2 * AHEAD].tid);
				if (raw != HASHMAP_NONE && e < st->row_cache_cap)
					__builtin_prefetch(&st->row_cache[e]);
			}
			if (i + AHEAD < b->count && ts[AHEAD].stack_id < L->stack_by_id_cap) {
				uint32_t raw = L->stack_by_id[ts[AHEAD].stack_id];
				uint64_t e = row_cache_index(raw, ts[AHEAD].tid);
				if (raw != HASHMAP_NONE && e < st->row_cache_cap && st->row_cache[e] < st->nsums)
					__builtin_prefetch(&st->sums[st->row_cache[e]]);
			}
		}
		/* Off CPU, the system call it waits in; a state the reader does not know is "other" (255). */
		uint32_t state = ts->state <= TRACE_STATE_STOPPED ? ts->state : 255;
		int32_t call = state == TRACE_STATE_ON_CPU || ts->syscall < 0 || ts->syscall >= (1 << 23) ? -1 : ts->syscall;
		struct profile_sample s = {
			.stack = loader_stack_index(L, ts->stack_id),
			.thread = loader_thread_index(L, ts->pid, ts->tid),
			.time_ns = ts->time_ns,
			.label = PROFILE_LABEL(state, call),
		};
		if (state != TRACE_STATE_ON_CPU)
			L->stats->off_cpu_samples++;
		int added = 1;
		if (L->o->sample_times == LOAD_TIMES_EXACT) {
			row[col] = ts->weight;
			profile_add_sample(p, &s, row);
		} else {
			added = sum_sample(L, st, &s, ts->tid, ts->weight);
		}
		/* A summed row's later samples are of its stack and thread, so of its process. */
		struct raw_stack *rs = &L->raw[s.stack];
		if (added && !rs->used) {
			rs->used = 1;
			rs->pid = ts->pid;
		} else if (added && rs->pid != ts->pid) {
			L->many_pid_stacks = 1;
		}
		/* The figures samples_finish checks, kept as they stream by so a
		 * trace with nothing wrong costs no second pass. */
		if (s.thread >= st->threads_cap) {
			uint32_t old = st->threads_cap;
			ALLOC_GROW(st->threads, (uint64_t)s.thread + 1, st->threads_cap);
			memset(st->threads + old, 0, (st->threads_cap - old) * sizeof(*st->threads));
		}
		struct thread_sums *t = &st->threads[s.thread];
		t->periods = sat_add_i64(t->periods, ts->weight, &st->saturated);
		if (ts->time_ns + TIME_SLACK_NS < t->last_time)
			t->backwards++;
		if (ts->time_ns > t->last_time)
			t->last_time = ts->time_ns;
		if (ts->weight > st->max_weight)
			st->max_weight = ts->weight;
		if (ts->time_ns < st->min_time)
			st->min_time = ts->time_ns;
		if (ts->time_ns > st->max_time)
			st->max_time = ts->time_ns;
		if (ts->time_ns > L->last_time_ns)
			L->last_time_ns = ts->time_ns;
	}
}

static void add_loss(struct samples_state *st, const struct trace_loss *l)
{
	uint32_t *slot = hashmap_slot(&st->loss_index, (uint64_t)l->pid << 32 | l->tid);
	if (*slot == HASHMAP_NONE) {
		ALLOC_GROW(st->losses, (uint64_t)st->nlosses + 1, st->losses_cap);
		st->losses[st->nlosses] = (struct thread_loss){l->pid, l->tid, 0};
		*slot = st->nlosses++;
	}
	struct thread_loss *t = &st->losses[*slot];
	t->lost = t->lost > UINT64_MAX - l->samples ? UINT64_MAX : t->lost + l->samples;
}

static void *samples_start(struct loader *L)
{
	struct samples_state *st = calloc_or_abort(1, sizeof(*st));
	hashmap_init(&st->loss_index, 16);
	hashmap_init(&st->rows, 1024);
	st->last_row = UINT64_MAX;
	st->row_bound = L->o->time_rows ? L->o->time_rows : LOAD_TIME_ROWS;
	st->min_time = UINT64_MAX;
	return st;
}

static void samples_record(struct loader *L, void *state, const struct trace_record *rec)
{
	switch (rec->type) {
	case TRACE_STACK:
		add_stack(L, &rec->u.stack);
		break;
	case TRACE_SAMPLES:
		add_samples(L, state, &rec->u.samples);
		break;
	case TRACE_LOSS:
		add_loss(state, &rec->u.loss);
		break;
	default:
		break;
	}
}

/* A sample naming a stack no record defined is kept (as [unknown]), and said once. */
static void check_undefined_stacks(struct loader *L)
{
	uint32_t undefined = 0;
	for (uint32_t s = 0; s < L->nraw; s++)
		undefined += !L->raw[s].defined;
	if (!undefined)
		return;
	uint64_t samples = 0;
	for (uint64_t i = 0; i < L->p->nsamples; i++)
		if (!L->raw[L->p->samples[i].stack].defined)
			samples += profile_sample_count(&L->p->samples[i]);
	L->stats->undefined_stack_samples = samples;
	diag(L->diag, DIAG_WARNING,
	     "%s: %" PRIu64 " samples refer to %u stacks the trace never defines: shown as [unknown]",
	     L->path, samples, undefined);
}

/* "the run (1.504 s at one sample per 1.0 ms)" for messages. */
static const char *run_text(const struct loader *L, char *buf, size_t len)
{
	char d[32], i[32];
	snprintf(buf, len, "a run of %s at one sample per %s", format_duration(L->p->duration_ns, d, sizeof(d)),
		 format_duration((uint64_t)L->p->period, i, sizeof(i)));
	return buf;
}

/* Lost counters: clamp each thread's to what could fit; one line per thread. */
static void check_losses(struct loader *L, struct samples_state *st, uint64_t periods)
{
	struct profile *p = L->p;
	char run[128];
	uint64_t total = 0;
	uint64_t per_thread = periods ? periods : SANE_COUNT_BOUND;
	for (uint32_t i = 0; i < st->nlosses; i++) {
		struct thread_loss *t = &st->losses[i];
		uint64_t bound = t->tid ? per_thread
					: (per_thread > UINT64_MAX / LOSS_THREADS_BOUND ? UINT64_MAX
										: per_thread * LOSS_THREADS_BOUND);
		if (t->lost > bound) {
			if (t->tid)
				diag(L->diag, DIAG_WARNING,
				     "%s: thread %u: %" PRIu64 " lost samples cannot be true (at most %" PRIu64
				     " fit in %s): counted as %" PRIu64,
				     L->path, t->tid, t->lost, bound,
				     periods ? run_text(L, run, sizeof(run)) : "any run", bound);
			else
				diag(L->diag, DIAG_WARNING,
				     "%s: %" PRIu64 " lost samples of threads without a ring cannot be true: "
				     "counted as %" PRIu64, L->path, t->lost, bound);
			t->lost = bound;
			L->stats->implausible_loss_threads++;
		}
		total = total > UINT64_MAX - t->lost ? UINT64_MAX : total + t->lost;
	}
	/* END carries collect's own sum of the same counters. */
	uint64_t end_bound = per_thread > UINT64_MAX / (p->nthreads + LOSS_THREADS_BOUND)
				     ? UINT64_MAX
				     : per_thread * (p->nthreads + LOSS_THREADS_BOUND);
	if (L->end_lost > end_bound) {
		diag(L->diag, DIAG_WARNING,
		     "%s: the END record's %" PRIu64 " lost samples cannot be true: counted as %" PRIu64,
		     L->path, L->end_lost, total);
		L->stats->implausible_loss_threads++;
	} else if (L->end_lost > total) {
		total = L->end_lost;
	}
	p->lost_samples = total;
}

/*
 * Weights, CPU time per thread and times, one line per thread for each
 * kind of problem. The sums gathered while streaming answer most of it; a
 * pass over the samples happens only when some weight must be clamped or
 * some time lies outside the run.
 */
static void check_samples(struct loader *L, struct samples_state *st, uint64_t periods)
{
	struct profile *p = L->p;
	uint32_t n = p->nthreads;
	if (st->threads_cap < n) {
		uint32_t old = st->threads_cap;
		ALLOC_GROW(st->threads, n, st->threads_cap);
		memset(st->threads + old, 0, (st->threads_cap - old) * sizeof(*st->threads));
	}
	uint64_t *clamped = calloc_or_abort(n, sizeof(*clamped));
	uint64_t *outside = calloc_or_abort(n, sizeof(*outside));
	uint32_t col = p->value_types[L->samples_value].column;
	uint64_t lo = p->start_ns > TIME_SLACK_NS ? p->start_ns - TIME_SLACK_NS : 0;
	uint64_t hi = L->end_time_ns + TIME_SLACK_NS;
	int check_times = p->start_ns && L->end_time_ns > p->start_ns && p->nsamples &&
			  (st->min_time < lo || st->max_time > hi);
	int clamp = periods && st->max_weight > periods;
	/* Rows of other consumers (allocations) come after the samples' and are not theirs. */
	int exact = L->o->sample_times == LOAD_TIMES_EXACT;
	uint64_t rows = exact ? p->nsamples : st->nsums;
	for (uint64_t i = 0; (clamp || check_times) && i < rows; i++) {
		uint32_t t = p->samples[i].thread;
		uint64_t count = profile_sample_count(&p->samples[i]);
		int64_t *v = &p->values[i * p->ncolumns + col];
		/* A summed row of key weight 2 or more: its samples all weigh that (key_weight); a
		 * row of one sample not yet binned holds its own weight (add_exact_row). */
		int64_t w = exact ? *v : st->sums[i].weight;
		if (clamp && w > (int64_t)periods) {
			int64_t excess = sat_mul_i64(w - (int64_t)periods, (int64_t)count, NULL);
			st->threads[t].periods = sat_add_i64(st->threads[t].periods, -excess, NULL);
			*v = sat_mul_i64((int64_t)periods, (int64_t)count, NULL);
			clamped[t] += count;
		}
		uint64_t first = exact ? p->samples[i].time_ns : st->sums[i].min_time;
		uint64_t last = exact ? first : st->sums[i].max_time;
		/* A summed row wholly outside counts all its samples; one that
		 * straddles a bound (a corrupt clock), the one at each end. */
		if (check_times && (first > hi || last < lo))
			outside[t] += count;
		else if (check_times)
			outside[t] += (uint64_t)(first < lo) + (last > hi);
	}
	char run[128], title[300];
	for (uint32_t t = 0; t < n; t++) {
		const struct thread_sums *sums = &st->threads[t];
		profile_thread_title(p, t, title, sizeof(title));
		if (clamped[t]) {
			diag(L->diag, DIAG_WARNING,
			     "%s: thread %s: %" PRIu64 " samples weigh more timer periods than fit in %s: "
			     "each counted as %" PRIu64, L->path, title, clamped[t],
			     run_text(L, run, sizeof(run)), periods);
			L->stats->implausible_weight_threads++;
			L->stats->clamped_weights += clamped[t];
		}
		/* A thread runs on one CPU at a time: more CPU time than the run
		 * lasted (a tenth and two periods of slack) cannot be true. */
		if (periods && (uint64_t)sums->periods > periods + periods / 10 + 2) {
			char cpu[32];
			diag(L->diag, DIAG_WARNING, "%s: thread %s: samples add up to %s of CPU in %s",
			     L->path, title,
			     format_duration(abs_i64(profile_scale_value(p, p->period_type, sums->periods, NULL)),
					     cpu, sizeof(cpu)),
			     run_text(L, run, sizeof(run)));
			L->stats->overbusy_threads++;
		}
		if (outside[t]) {
			diag(L->diag, DIAG_WARNING, "%s: thread %s: %" PRIu64 " samples have times outside the run",
			     L->path, title, outside[t]);
			L->stats->samples_outside_run += outside[t];
		}
		if (sums->backwards) {
			diag(L->diag, DIAG_WARNING, "%s: thread %s: %" PRIu64 " samples go back in time",
			     L->path, title, sums->backwards);
			L->stats->samples_backwards += sums->backwards;
		}
	}
	if (st->saturated) {
		diag(L->diag, DIAG_WARNING, "%s: sample weights add up past 2^63: totals are saturated",
		     L->path);
		L->stats->value_saturated = 1;
	}
	free(clamped);
	free(outside);
}

static void samples_finish(struct loader *L, void *state)
{
	struct samples_state *st = state;
	if (L->o->sample_times != LOAD_TIMES_EXACT)
		sums_finish(L, st);
	uint64_t periods = loader_periods_in_run(L);
	check_undefined_stacks(L);
	if (L->stats->truncated_stacks)
		count_truncated(L);
	check_losses(L, state, periods);
	check_samples(L, state, periods);
	/* The profile rows hold what the reports need from here on. */
	free(st->sums);
	free(st->row_cache);
	st->sums = NULL;
	st->row_cache = NULL;
	st->nsums = st->sums_cap = st->row_cache_cap = 0;
}

static void samples_free(void *state)
{
	struct samples_state *st = state;
	hashmap_free(&st->loss_index);
	hashmap_free(&st->rows);
	free(st->sums);
	free(st->row_cache);
	free(st->losses);
	free(st->threads);
	free(st);
}

static const enum trace_type sample_types[] = { TRACE_STACK, TRACE_SAMPLES, TRACE_LOSS, 0 };
const struct record_consumer load_samples_consumer = {
	"samples", sample_types, samples_start, samples_record, samples_finish, NULL, samples_free,
};
