/*
 * load.c - trace -> profile (see load.h): the driver.
 *
 * Three passes, so that the costly part scales with distinct addresses, not
 * with samples:
 *   1. read: every record through the streaming reader, dispatched by type
 *      to its consumer (load_internal.h): the run's META, THREAD and END
 *      records and the module records here, stacks, samples and losses in
 *      load_samples.c. Raw stacks are kept as instruction pointers, samples
 *      go straight into the profile, their stack index being the raw
 *      stack's index (one profile stack per raw one);
 *   2. resolve: hash the distinct (address, is-return-address) pairs, sort
 *      them by address, find each one's module by its PT_LOAD segments and
 *      symbolize them in address order, interning functions and lines;
 *   3. translate every raw stack into profile locations (load_stacks.c).
 *
 * A CPU trace's profile has the value types samples/count (the weight in
 * timer periods) and cpu/nanoseconds (weight x interval), default samples;
 * a wall trace's are samples/count and wall/nanoseconds, each sample
 * labelled with its thread's state and system call (profile.h). PROCESS
 * records (load_procs.c) list the processes of the tree.
 * The agent's own frames (thread_trampoline under every thread, its
 * allocation wrappers) are the profiler's, not the program's: they never
 * enter a profile stack, -C or not (load_stacks.c). JIT_MAP records name
 * JIT code outside every module (load_jit.c).
 */
#include "load.h"
#include "load_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "hashmap.h"
#include "resolve.h"
#include "trace.h"

void load_options_init(struct load_options *o)
{
	memset(o, 0, sizeof(*o));
	o->demangle = 1;
	o->symbolize = 1;
	o->open_modules = 1;
}

void load_stats_free(struct load_stats *stats)
{
	if (stats) {
		free(stats->meta);
		stats->meta = NULL;
		stats->nmeta = 0;
		free(stats->thread_cpu_ns);
		stats->thread_cpu_ns = NULL;
		stats->nthread_cpu = 0;
		free(stats->processes);
		stats->processes = NULL;
		stats->nprocesses = 0;
	}
}

uint32_t loader_thread_index(struct loader *L, uint32_t pid, uint32_t tid)
{
	uint64_t key = (uint64_t)pid << 32 | tid;
	for (int i = 0; i < 4; i++)
		if (L->recent_thread_key[i] == key && L->recent_thread[i] != HASHMAP_NONE)
			return L->recent_thread[i];
	uint32_t *slot = hashmap_slot(&L->threads, key);
	if (*slot == HASHMAP_NONE) {
		struct profile_thread t = {.pid = pid, .tid = tid};
		*slot = profile_add_thread(L->p, &t);
	}
	uint32_t i = L->recent_next++ & 3;
	L->recent_thread_key[i] = key;
	return L->recent_thread[i] = *slot;
}

uint64_t loader_periods_in_run(const struct loader *L)
{
	const struct profile *p = L->p;
	if (!L->end_time_ns || !p->start_ns || L->end_time_ns <= p->start_ns || p->period <= 0)
		return 0;
	return (L->end_time_ns - p->start_ns) / (uint64_t)p->period + 1;
}

/* ---- the run: META, THREAD, END ---- */

static void *run_start(struct loader *L)
{
	return L;
}

static void add_meta(struct loader *L, const struct trace_meta *m)
{
	struct profile *p = L->p;
	uint32_t value = profile_intern(p, m->value);
	if (!strcmp(m->key, TRACE_META_COMMAND))
		p->command = value;
	else if (!strcmp(m->key, TRACE_META_MODE)) {
		p->mode = value;
		/* A wall trace's time is wall-clock time: the period type is named for it. */
		if ((!strcmp(m->value, "wall") || !strncmp(m->value, "wall,", 5)) && p->period_type != PROFILE_NO_VALUE)
			p->value_types[p->period_type].type = profile_intern(p, "wall");
	}
	else if (!strcmp(m->key, TRACE_META_SOURCE))
		p->source = value;
	else if (!strcmp(m->key, TRACE_META_INTERVAL_NS)) {
		uint64_t ns = strtoull(m->value, NULL, 10);
		profile_set_period(p, ns > INT64_MAX ? INT64_MAX : (int64_t)ns);
	} else if (!strcmp(m->key, TRACE_META_START_REALTIME_NS))
		p->start_realtime_ns = strtoull(m->value, NULL, 10);
	else if (!strcmp(m->key, TRACE_META_START_MONOTONIC_NS))
		p->start_ns = strtoull(m->value, NULL, 10);
	struct load_stats *st = L->stats;
	st->meta = realloc_or_abort(st->meta, (st->nmeta + 1) * sizeof(*st->meta));
	st->meta[st->nmeta].key = profile_intern(p, m->key);
	st->meta[st->nmeta].value = value;
	st->nmeta++;
}

static void add_end(struct loader *L, const struct trace_end *e)
{
	struct profile *p = L->p;
	p->ended = 1;
	p->wait_status = e->wait_status;
	p->end_unknown = (e->flags & TRACE_END_DETACHED)	   ? PROFILE_END_DETACHED
			 : (e->flags & TRACE_END_STATUS_UNKNOWN) ? PROFILE_END_STATUS_UNKNOWN
								 : 0;
	L->end_time_ns = e->time_ns;
	if (e->time_ns > L->last_time_ns)
		L->last_time_ns = e->time_ns;
	L->end_lost = e->lost_samples;
	L->stats->end_samples = e->samples;
	L->stats->end_weight = e->weight;
	L->stats->end_flags = e->flags;
	L->stats->agent_ns = e->agent_ns;
	L->stats->agent_signals = e->agent_signals;
	L->stats->exited_unsampled = e->exited_unsampled;
}

/* A thread's own CPU clock at its end (1.2): what its samples should add up to. */
static void add_thread_cpu(struct load_stats *st, uint32_t thread, const struct trace_thread *t)
{
	if (!t->cpu_ns || !(t->flags & (TRACE_THREAD_EXIT | TRACE_THREAD_AT_END)))
		return;
	if (thread >= st->nthread_cpu) {
		st->thread_cpu_ns = realloc_or_abort(st->thread_cpu_ns, (thread + 1) * sizeof(*st->thread_cpu_ns));
		memset(st->thread_cpu_ns + st->nthread_cpu, 0, (thread + 1 - st->nthread_cpu) * sizeof(uint64_t));
		st->nthread_cpu = thread + 1;
	}
	if (t->cpu_ns > st->thread_cpu_ns[thread])
		st->thread_cpu_ns[thread] = t->cpu_ns;
}

static void run_record(struct loader *L, void *state, const struct trace_record *rec)
{
	(void)state;
	switch (rec->type) {
	case TRACE_META:
		add_meta(L, &rec->u.meta);
		break;
	case TRACE_THREAD: {
		uint32_t i = loader_thread_index(L, rec->u.thread.pid, rec->u.thread.tid);
		if (rec->u.thread.name && *rec->u.thread.name)
			L->p->threads[i].name = profile_intern(L->p, rec->u.thread.name);
		add_thread_cpu(L->stats, i, &rec->u.thread);
		break;
	}
	case TRACE_END:
		add_end(L, &rec->u.end);
		break;
	default:
		break;
	}
}

/*
 * The agent's own figures live in memory the program can write: a thread's
 * CPU clock cannot pass the run's duration (a thread runs on one CPU at a
 * time), nor the handler's time the CPU of every thread together, nor its
 * signals one per microsecond per thread. Figures past that (with a tenth
 * and 10 ms of slack) are dropped and said, never printed.
 */
static void check_agent_figures(struct loader *L)
{
	struct load_stats *st = L->stats;
	uint64_t run = L->p->duration_ns;
	if (!run)
		return;
	uint64_t bound = run > UINT64_MAX / 2 ? UINT64_MAX : run + run / 10 + 10000000;
	uint32_t bad = 0, measured = 0;
	for (uint32_t t = 0; t < st->nthread_cpu; t++) {
		measured += st->thread_cpu_ns[t] != 0;
		if (st->thread_cpu_ns[t] > bound) {
			st->thread_cpu_ns[t] = 0;
			bad++;
		}
	}
	if (bad) {
		diag(L->diag, DIAG_WARNING,
		     "%s: %u thread%s measured CPU time%s cannot be true (more than the run's %.3f s): not shown",
		     L->path, bad, bad == 1 ? "'s" : "s'", bad == 1 ? "" : "s", (double)run / 1e9);
		st->implausible_cpu_threads = bad;
	}
	uint64_t threads = L->p->nthreads > measured ? L->p->nthreads : measured;
	if (threads == 0)
		threads = 1;
	uint64_t all_cpu = bound > UINT64_MAX / threads ? UINT64_MAX : bound * threads;
	uint64_t signals = run / 1000 > UINT64_MAX / threads ? UINT64_MAX : run / 1000 * threads + 1000;
	if (st->agent_ns > all_cpu || st->agent_signals > signals) {
		diag(L->diag, DIAG_WARNING,
		     "%s: the agent's cost (%" PRIu64 " ns in %" PRIu64 " signals) cannot be true in a %.3f s run "
		     "of %" PRIu64 " thread%s: not shown",
		     L->path, st->agent_ns, st->agent_signals, (double)run / 1e9, threads, threads == 1 ? "" : "s");
		st->agent_ns = st->agent_signals = 0;
		st->implausible_agent_cost = 1;
	}
}

/* The run's duration: from the start to END (collect's own clock) or, in a
 * cut-off trace, to the latest time read. */
static void run_finish(struct loader *L, void *state)
{
	(void)state;
	struct profile *p = L->p;
	uint64_t end = L->end_time_ns ? L->end_time_ns : L->last_time_ns;
	if (p->start_ns && end > p->start_ns)
		p->duration_ns = end - p->start_ns;
	check_agent_figures(L);
}

static const enum trace_type run_types[] = { TRACE_META, TRACE_THREAD, TRACE_END, 0 };
static const struct record_consumer run_consumer = {
	"run", run_types, run_start, run_record, run_finish, NULL, NULL,
};

/* ---- modules: the resolver's ---- */

static void *modules_start(struct loader *L)
{
	return L->resolver;
}

static void modules_record(struct loader *L, void *state, const struct trace_record *rec)
{
	if (rec->type == TRACE_MODULE) {
		resolver_add_module(state, &rec->u.module);
		return;
	}
	resolver_unload_module(state, &rec->u.unload);
	/* Kept sorted (few: one per dlclose) for load_samples.c's epoch of a sample. */
	uint64_t t = rec->u.unload.time_ns;
	ALLOC_GROW(L->unloads_seen, (uint64_t)L->nunloads_seen + 1, L->unloads_seen_cap);
	uint32_t i = L->nunloads_seen++;
	for (; i > 0 && L->unloads_seen[i - 1] > t; i--)
		L->unloads_seen[i] = L->unloads_seen[i - 1];
	L->unloads_seen[i] = t;
}

static const enum trace_type module_types[] = { TRACE_MODULE, TRACE_MODULE_UNLOAD, 0 };
static const struct record_consumer modules_consumer = {
	"modules", module_types, modules_start, modules_record, NULL, NULL, NULL,
};

/* ---- the driver ---- */

/* In the order their finish callbacks run: the run's first (the duration). */
static const struct record_consumer *const consumers[] = {
	&run_consumer,
	&modules_consumer,
	&load_samples_consumer,
	&load_jit_consumer,
	&load_procs_consumer,
	&load_allocs_consumer,
};
#define NCONSUMERS (sizeof(consumers) / sizeof(consumers[0]))
#define MAX_RECORD_TYPE 64

struct dispatch {
	const struct record_consumer *consumer[MAX_RECORD_TYPE];
	void *state[MAX_RECORD_TYPE];
	void *states[NCONSUMERS];
};

static void dispatch_start(struct loader *L, struct dispatch *d)
{
	memset(d, 0, sizeof(*d));
	for (size_t c = 0; c < NCONSUMERS; c++) {
		d->states[c] = consumers[c]->start(L);
		for (const enum trace_type *t = consumers[c]->types; *t; t++) {
			d->consumer[*t] = consumers[c];
			d->state[*t] = d->states[c];
		}
	}
}

static void dispatch_finish(struct loader *L, struct dispatch *d)
{
	for (size_t c = 0; c < NCONSUMERS; c++)
		if (consumers[c]->finish)
			consumers[c]->finish(L, d->states[c]);
}

static void dispatch_resolved(struct loader *L, struct dispatch *d)
{
	for (size_t c = 0; c < NCONSUMERS; c++)
		if (consumers[c]->resolved)
			consumers[c]->resolved(L, d->states[c]);
}

static void dispatch_free(struct dispatch *d)
{
	for (size_t c = 0; c < NCONSUMERS; c++)
		if (consumers[c]->free)
			consumers[c]->free(d->states[c]);
}

/* Pass 1. Returns 0, or -1 after saying the reader's error. */
static int read_trace(struct loader *L, struct dispatch *d)
{
	char err[512];
	struct trace_reader *r = trace_reader_open(L->path, err, sizeof(err));
	if (!r) {
		diag(L->diag, DIAG_ERROR, "%s", err);
		return -1;
	}
	struct trace_record rec;
	uint64_t records = 0;
	int got;
	while ((got = trace_reader_next(r, &rec)) == 1) {
		if ((++records & 4095) == 0)
			diag_progress(L->diag, "reading %s: %.0f MiB, %" PRIu64 " samples", L->path,
				      (double)trace_reader_compressed_bytes(r) / 1048576.0, L->samples_read);
		/* Types newer than us have no consumer: nothing to do. */
		if ((unsigned)rec.type < MAX_RECORD_TYPE && d->consumer[rec.type])
			d->consumer[rec.type]->record(L, d->state[rec.type], &rec);
	}
	diag_progress(L->diag, "%s", "");
	struct load_stats *st = L->stats;
	/* Damage found where it is, after records were read: the records
	 * before it are kept, as a cut-off trace's are (a long run's report
	 * is not lost to one bad block); the content checksum, which fails at
	 * the end for damage anywhere, or damage before any record, fails. */
	if (got < 0 && (!records || !trace_reader_damage_located(r))) {
		diag(L->diag, DIAG_ERROR, "%s", trace_reader_error(r));
		trace_reader_close(r);
		return -1;
	}
	st->truncated = got < 0 || trace_reader_truncated(r);
	if (got < 0)
		diag(L->diag, DIAG_WARNING, "%s: read up to the last complete record before it (the trace is damaged "
			"there; records just before it may be damaged too)", trace_reader_error(r));
	else if (st->truncated)
		diag(L->diag, DIAG_WARNING, "%s", trace_reader_error(r));
	st->compressed_bytes = trace_reader_compressed_bytes(r);
	st->raw_bytes = trace_reader_raw_bytes(r);
	trace_reader_version(r, &st->version_major, &st->version_minor);
	trace_reader_close(r);
	return 0;
}

struct profile *load_trace(const char *path, const struct load_options *o, struct load_stats *stats)
{
	struct load_options defaults;
	struct load_stats own_stats;
	if (!o) {
		load_options_init(&defaults);
		o = &defaults;
	}
	if (!stats)
		stats = &own_stats;
	memset(stats, 0, sizeof(*stats));
	struct loader L = {.path = path, .stats = stats, .o = o, .diag = o->diag, .truncated_location = UINT32_MAX,
			  .exit_charge_location = UINT32_MAX};
	memset(L.recent_thread, 0xff, sizeof(L.recent_thread));
	L.p = profile_new();
	if (!L.p)
		abort_out_of_memory();
	/* Value types first: their names then take the first string ids, and
	 * every other string keeps its relative order. */
	profile_set_cpu_value_types(L.p, 0);
	L.samples_value = L.p->default_value;
	L.resolver = resolver_new(L.p, o);
	hashmap_init(&L.stack_ids, 1024);
	hashmap_init(&L.threads, 64);
	hashmap_init(&L.images, 16);

	struct dispatch d;
	dispatch_start(&L, &d);
	int rc = read_trace(&L, &d);
	if (rc == 0) {
		dispatch_finish(&L, &d);
		resolver_finish_modules(L.resolver);
		loader_build_stacks(&L);
		dispatch_resolved(&L, &d);
	}
	dispatch_free(&d);
	resolver_free(L.resolver);
	hashmap_free(&L.stack_ids);
	hashmap_free(&L.threads);
	hashmap_free(&L.images);
	free(L.raw);
	free(L.ips);
	free(L.stack_by_id);
	free(L.unloads_seen);
	if (stats == &own_stats || rc)
		load_stats_free(stats);
	if (rc) {
		profile_free(L.p);
		return NULL;
	}
	return L.p;
}
