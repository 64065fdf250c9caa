/*
 * drain.c - move what the agent recorded from the shared rings into the trace.
 *
 * The agent numbers stacks per process but deduplicates them per thread, so
 * the same backtrace can arrive once from each thread. Here they are merged by
 * content: every distinct stack is written to the trace exactly once, before
 * the first sample that uses it.
 *
 * Everything in the rings comes from the profiled program, which may have
 * crashed or scribbled over them: sizes, counts and ids are checked here, and
 * a ring whose positions make no sense is abandoned (and said so).
 *
 * Every ring belongs to one process (transport_ring.pid) and what it holds
 * is written as that process's: stacks are merged by content within a
 * process only (the same addresses are other code in another program),
 * an EXEC record unloads that process's modules, and PROCESS records go to
 * procs.c, which keeps the process tree. A ring whose thread died without
 * handing it back (SIGKILL, an exec into a program without the agent) is
 * closed by collect once the thread is gone (drain_close_dead).
 *
 * It also keeps the run's totals as the summary and analyze info show them:
 * threads are distinct thread ids seen in any record (a thread that exec'd a
 * new program image is still one thread), and for each thread whose CPU time
 * the agent measured at its end, that time against the weight of its samples.
 */
#include "collect.h"

#include "alloc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

struct merged_stack {
	uint64_t hash;
	uint64_t offset; /* into ips */
	uint32_t nframes;
	uint32_t trace_id; /* 0: empty slot */
	uint32_t pid; /* stacks of different processes are never merged */
};

struct live_module {
	uint32_t pid, id;
};

/* More distinct stack ids than this in one run means the ids are garbage. */
#define MAX_AGENT_STACK_ID (1u << 26)
/* More handler time than this between two drains means the counter is garbage. */
#define MAX_HANDLER_NS_PER_DRAIN 100000000000ull

/* What collect has taken from a ring's counters so far. */
struct ring_seen {
	uint64_t lost, handler_ns, handler_timed, handler_calls;
	int broken; /* abandoned: its positions made no sense */
};

struct thread_seen {
	uint32_t tid; /* 0: empty slot */
	int measured; /* an exit (or end of process) record gave its CPU time */
	uint64_t weight; /* of its samples */
	uint64_t cpu_ns;
	uint32_t last_stack; /* its last CPU sample's trace stack id (where wall_watch.c puts runnable time) */
};

struct drain {
	struct trace_writer *w; /* NULL: records are discarded (as after a write error) */
	const struct transport *t;
	struct procs *procs; /* told about TR_PROCESS records */
	uint32_t pid; /* of the ring being drained */
	uint32_t stream; /* its program image (transport_ring.stream) */
	uint32_t tid; /* its thread */
	int error;
	uint8_t *scratch; /* a private copy of the record being parsed */
	struct ring_seen *rings;
	uint32_t nrings_seen;

	struct live_module *live_modules; /* modules mapped now, unloaded on exec */
	uint32_t nlive_modules, live_modules_cap;

	uint32_t *agent_to_trace; /* agent stack id -> trace stack id */
	uint32_t agent_ids_cap;

	struct merged_stack *slots;
	uint32_t slots_cap; /* power of two */
	uint32_t nstacks;
	uint64_t *ips;
	uint64_t ips_used, ips_cap;

	uint64_t no_ring_lost_seen;

	struct thread_seen *threads;
	uint32_t threads_cap, nthreads; /* power of two; used slots */

	struct drain_totals totals;
	uint64_t cost_ns, cost_timed, cost_calls; /* the agent's handler: timed ns over timed calls, of all */
	uint64_t fullest; /* bytes waiting in the fullest ring at the last drain */
	uint32_t freed; /* rings of ended threads freed at the last drain */
	struct heap_order *heap;
	uint64_t heap_unknown_stack; /* allocation events whose stack never arrived */
};

struct drain *drain_new(struct trace_writer *w, const struct transport *t, struct procs *procs)
{
	struct drain *d = calloc_or_abort(1, sizeof *d);
	d->w = w;
	d->t = t;
	d->procs = procs;
	d->error = !w;
	d->slots_cap = 4096;
	d->slots = calloc_or_abort(d->slots_cap, sizeof *d->slots);
	d->scratch = realloc_or_abort(NULL, t->ring_bytes);
	d->threads_cap = 64;
	d->threads = calloc_or_abort(d->threads_cap, sizeof *d->threads);
	d->heap = heap_order_new();
	return d;
}

void drain_free(struct drain *d)
{
	free(d->scratch);
	free(d->rings);
	free(d->threads);
	free(d->live_modules);
	free(d->agent_to_trace);
	free(d->slots);
	free(d->ips);
	heap_order_free(d->heap);
	free(d);
}

static struct thread_seen *thread_slot(struct thread_seen *table, uint32_t cap, uint32_t tid)
{
	uint32_t mask = cap - 1;
	for (uint32_t i = (tid * 0x9e3779b1u) & mask;; i = (i + 1) & mask)
		if (table[i].tid == tid || !table[i].tid)
			return &table[i];
}

/* The thread's entry, made when it is first seen. */
static struct thread_seen *thread_of(struct drain *d, uint32_t tid)
{
	struct thread_seen *t = thread_slot(d->threads, d->threads_cap, tid);
	if (t->tid)
		return t;
	if (2 * (d->nthreads + 1) > d->threads_cap) {
		struct thread_seen *old = d->threads;
		uint32_t old_cap = d->threads_cap;
		d->threads_cap *= 2;
		d->threads = calloc_or_abort(d->threads_cap, sizeof *d->threads);
		for (uint32_t i = 0; i < old_cap; i++)
			if (old[i].tid)
				*thread_slot(d->threads, d->threads_cap, old[i].tid) = old[i];
		free(old);
		t = thread_slot(d->threads, d->threads_cap, tid);
	}
	t->tid = tid;
	d->nthreads++;
	return t;
}

static struct merged_stack *find_slot(struct drain *d, uint64_t hash, uint32_t pid, const uint64_t *ips,
				       uint32_t n)
{
	uint32_t mask = d->slots_cap - 1;
	for (uint32_t i = (uint32_t)hash & mask;; i = (i + 1) & mask) {
		struct merged_stack *s = &d->slots[i];
		if (!s->trace_id || (s->hash == hash && s->pid == pid && s->nframes == n &&
				     !memcmp(d->ips + s->offset, ips, n * sizeof *ips)))
			return s;
	}
}

static void grow_slots(struct drain *d)
{
	struct merged_stack *old = d->slots;
	uint32_t old_cap = d->slots_cap;
	d->slots_cap *= 2;
	d->slots = calloc_or_abort(d->slots_cap, sizeof *d->slots);
	for (uint32_t i = 0; i < old_cap; i++)
		if (old[i].trace_id)
			*find_slot(d, old[i].hash, old[i].pid, d->ips + old[i].offset, old[i].nframes) = old[i];
	free(old);
}

static void map_agent_id(struct drain *d, uint32_t agent_id, uint32_t trace_id)
{
	if (agent_id >= MAX_AGENT_STACK_ID)
		return; /* its samples will be counted lost */
	if (agent_id >= d->agent_ids_cap) {
		uint32_t cap = d->agent_ids_cap ? d->agent_ids_cap : 4096;
		while (cap <= agent_id)
			cap *= 2;
		d->agent_to_trace = realloc_or_abort(d->agent_to_trace, cap * sizeof *d->agent_to_trace);
		memset(d->agent_to_trace + d->agent_ids_cap, 0, (cap - d->agent_ids_cap) * sizeof(uint32_t));
		d->agent_ids_cap = cap;
	}
	d->agent_to_trace[agent_id] = trace_id;
}

/* The trace id of a stack of process pid, written the first time its content is seen. */
static uint32_t merge_stack(struct drain *d, uint32_t pid, const uint64_t *ips, uint32_t nframes, uint32_t flags)
{
	/* The same addresses in two processes may be different code (an exec): one stack per process. */
	uint64_t hash = transport_hash_stack(ips, nframes, flags) ^ ((uint64_t)pid * 0x9e3779b97f4a7c15ull);
	struct merged_stack *m = find_slot(d, hash, pid, ips, nframes);
	if (m->trace_id)
		return m->trace_id;
	if (d->ips_used + nframes > d->ips_cap) {
		d->ips_cap = (d->ips_cap + nframes) * 2;
		d->ips = realloc_or_abort(d->ips, d->ips_cap * sizeof *d->ips);
	}
	memcpy(d->ips + d->ips_used, ips, nframes * sizeof *ips);
	m->hash = hash;
	m->pid = pid;
	m->offset = d->ips_used;
	m->nframes = nframes;
	m->trace_id = ++d->nstacks;
	d->ips_used += nframes;
	struct trace_stack ts = { m->trace_id, flags, nframes, d->ips + m->offset };
	if (!d->error && trace_writer_stack(d->w, &ts) < 0)
		d->error = 1;
	uint32_t id = m->trace_id;
	if (d->nstacks * 2 > d->slots_cap)
		grow_slots(d);
	return id;
}

static void on_stack(struct drain *d, const struct tr_stack *s, uint32_t size)
{
	if (size < sizeof *s || (size - sizeof *s) / sizeof(uint64_t) < s->nframes)
		return;
	map_agent_id(d, s->id, merge_stack(d, d->pid, (const uint64_t *)(s + 1), s->nframes, s->flags));
}

uint32_t drain_stack_id(struct drain *d, uint32_t pid, const uint64_t *ips, uint32_t nframes, uint32_t flags)
{
	return nframes ? merge_stack(d, pid, ips, nframes, flags) : 0;
}

void drain_sample(struct drain *d, const struct trace_sample *ts)
{
	if (!d->error && trace_writer_sample(d->w, ts) < 0)
		d->error = 1;
	d->totals.samples++;
	d->totals.weight += ts->weight;
	if (ts->tid) {
		struct thread_seen *t = thread_of(d, ts->tid);
		t->weight += ts->weight;
		if (ts->state == TRACE_STATE_ON_CPU && ts->stack_id)
			t->last_stack = ts->stack_id;
	}
}

uint32_t drain_last_stack(const struct drain *d, uint32_t tid)
{
	const struct thread_seen *t = thread_slot(d->threads, d->threads_cap, tid);
	return t->tid ? t->last_stack : 0;
}

static void on_sample(struct drain *d, const struct tr_sample *s)
{
	uint32_t id = s->stack_id < d->agent_ids_cap ? d->agent_to_trace[s->stack_id] : 0;
	if (!id) {
		d->totals.lost++; /* its stack never arrived: counted, not guessed */
		return;
	}
	struct trace_sample ts = { s->time_ns, d->pid, s->tid, id, s->weight, s->state,
				   s->state == TRACE_STATE_ON_CPU ? -1 : s->syscall };
	drain_sample(d, &ts);
}

static void on_thread(struct drain *d, const struct tr_thread *t)
{
	char name[sizeof t->name + 1];
	memcpy(name, t->name, sizeof t->name);
	name[sizeof t->name] = 0;
	struct trace_thread tt = { d->pid, t->tid, t->time_ns, t->flags, name, t->cpu_ns };
	if (t->tid) {
		struct thread_seen *seen = thread_of(d, t->tid);
		if ((t->flags & (TRACE_THREAD_EXIT | TRACE_THREAD_AT_END)) && t->cpu_ns) {
			seen->measured = 1;
			seen->cpu_ns = t->cpu_ns;
		}
	}
	if (!d->error && trace_writer_thread(d->w, &tt) < 0)
		d->error = 1;
}

static void on_module(struct drain *d, const struct tr_module *m, uint32_t size)
{
	uint64_t need = sizeof *m + (uint64_t)m->nsegments * sizeof(struct tr_segment) + m->path_len;
	if (size < need || m->build_id_len > sizeof m->build_id)
		return;
	const struct tr_segment *segs = (const struct tr_segment *)(m + 1);
	struct trace_segment ts[16];
	uint32_t n = m->nsegments < 16 ? m->nsegments : 16;
	for (uint32_t i = 0; i < n; i++)
		ts[i] = (struct trace_segment){ segs[i].vaddr, segs[i].memsz, segs[i].file_offset,
						(uint32_t)segs[i].flags };
	char *path = realloc_or_abort(NULL, m->path_len + 1);
	memcpy(path, (const char *)(segs + m->nsegments), m->path_len);
	path[m->path_len] = 0;
	struct trace_module tm = { d->pid, m->id, m->time_ns, m->load_bias, path,
				   m->build_id_len ? m->build_id : NULL, m->build_id_len, n, ts };
	if (!d->error && trace_writer_module(d->w, &tm) < 0)
		d->error = 1;
	free(path);
	if (d->nlive_modules == d->live_modules_cap) {
		d->live_modules_cap = d->live_modules_cap ? 2 * d->live_modules_cap : 64;
		d->live_modules = realloc_or_abort(d->live_modules, d->live_modules_cap * sizeof *d->live_modules);
	}
	d->live_modules[d->nlive_modules++] = (struct live_module){ d->pid, m->id };
}

static void on_unload(struct drain *d, uint32_t id, uint64_t time_ns)
{
	for (uint32_t i = 0; i < d->nlive_modules; i++)
		if (d->live_modules[i].id == id && d->live_modules[i].pid == d->pid) {
			d->live_modules[i] = d->live_modules[--d->nlive_modules];
			break;
		}
	struct trace_module_unload tu = { d->pid, id, time_ns };
	if (!d->error && trace_writer_module_unload(d->w, &tu) < 0)
		d->error = 1;
}

/* The agent's heap event kinds and flags (transport.h) reach the trace (trace.h) by value: the
 * two protocols must number them alike (the casts: they are two enums). */
#define SAME(a, b) ((int)(a) == (int)(b))
_Static_assert(SAME(TR_HEAP_NONE, TRACE_HEAP_NONE) && SAME(TR_HEAP_MALLOC, TRACE_HEAP_MALLOC) &&
		       SAME(TR_HEAP_CALLOC, TRACE_HEAP_CALLOC) && SAME(TR_HEAP_REALLOC, TRACE_HEAP_REALLOC) &&
		       SAME(TR_HEAP_REALLOCARRAY, TRACE_HEAP_REALLOCARRAY) &&
		       SAME(TR_HEAP_POSIX_MEMALIGN, TRACE_HEAP_POSIX_MEMALIGN) &&
		       SAME(TR_HEAP_ALIGNED_ALLOC, TRACE_HEAP_ALIGNED_ALLOC) && SAME(TR_HEAP_MEMALIGN, TRACE_HEAP_MEMALIGN) &&
		       SAME(TR_HEAP_VALLOC, TRACE_HEAP_VALLOC) && SAME(TR_HEAP_PVALLOC, TRACE_HEAP_PVALLOC) &&
		       SAME(TR_HEAP_FREE, TRACE_HEAP_FREE),
	       "heap event kinds: transport.h and trace.h agree");
_Static_assert(SAME(TR_HEAP_MOVED, TRACE_HEAP_MOVED) && SAME(TR_HEAP_BY_REALLOC, TRACE_HEAP_BY_REALLOC) &&
		       SAME(TR_HEAP_TEMPORARY, TRACE_HEAP_TEMPORARY) && SAME(TR_HEAP_NESTED, TRACE_HEAP_NESTED) &&
		       SAME(TR_HEAP_RESTORED, TRACE_HEAP_RESTORED),
	       "heap event flags: transport.h and trace.h agree");
#undef SAME

static void on_heap(struct drain *d, uint32_t ring, const struct tr_heap *h)
{
	(void)ring;
	struct trace_heap_event e = { h->seq, h->time_ns, h->address, h->size, d->tid, 0, h->kind, h->flags };
	if (e.kind > TRACE_HEAP_PVALLOC && e.kind != TRACE_HEAP_FREE)
		e.kind = TRACE_HEAP_NONE; /* not a kind: keep its seq, drop the event */
	if (e.kind != TRACE_HEAP_FREE && e.kind != TRACE_HEAP_NONE) {
		e.stack_id = h->stack_id < d->agent_ids_cap ? d->agent_to_trace[h->stack_id] : 0;
		if (!e.stack_id)
			d->heap_unknown_stack++; /* analyze shows it as [unknown] */
	}
	if (heap_order_add(d->heap, d->stream, d->pid, &e, d->error ? NULL : d->w) < 0)
		d->error = 1;
}

static void on_record(void *ctx, uint32_t ring, uint32_t type, const void *payload, uint32_t size)
{
	struct drain *d = ctx;
	switch (type) {
	case TR_HEAP:
		if (size >= sizeof(struct tr_heap))
			on_heap(d, ring, payload);
		break;
	case TR_STACK:
		on_stack(d, payload, size);
		break;
	case TR_SAMPLE:
		if (size >= sizeof(struct tr_sample))
			on_sample(d, payload);
		break;
	case TR_THREAD:
		if (size >= sizeof(struct tr_thread))
			on_thread(d, payload);
		break;
	case TR_MODULE:
		if (size >= sizeof(struct tr_module))
			on_module(d, payload, size);
		break;
	case TR_MODULE_UNLOAD:
		if (size >= sizeof(struct tr_module_unload)) {
			const struct tr_module_unload *u = payload;
			on_unload(d, u->id, u->time_ns);
		}
		break;
	case TR_EXEC:
		/* A new program image in the same process: the old one's modules are gone. */
		if (size >= sizeof(struct tr_exec)) {
			const struct tr_exec *e = payload;
			for (uint32_t i = d->nlive_modules; i-- > 0;)
				if (i < d->nlive_modules && d->live_modules[i].pid == d->pid)
					on_unload(d, d->live_modules[i].id, e->time_ns);
		}
		break;
	case TR_PROCESS:
		if (size >= sizeof(struct tr_process)) {
			const struct tr_process *pr = payload;
			uint64_t need = sizeof *pr + (uint64_t)pr->path_len + pr->command_len;
			if (need > size)
				break;
			/* A new image of this pid: the one before it ends, its allocations written first. */
			if ((pr->kind == TR_PROCESS_ATTACHED || pr->kind == TR_PROCESS_FORKED) &&
			    heap_order_end_pid(d->heap, d->pid, d->stream, d->error ? NULL : d->w) < 0)
				d->error = 1;
			procs_record(d->procs, d->w && !d->error ? d->w : NULL, pr, (const char *)(pr + 1));
		}
		break;
	default:
		break; /* a newer agent's record: nothing to do with it */
	}
}

static void write_loss(struct drain *d, uint32_t tid, uint64_t lost)
{
	struct trace_loss l = { d->pid, tid, 0, lost };
	d->totals.lost += lost;
	if (!d->error && trace_writer_loss(d->w, &l) < 0)
		d->error = 1;
}

/* The agent's cost counters of a ring, taken as deltas; counters that went back or jumped are ignored. */
static void take_cost(struct drain *d, struct transport_ring *ring, struct ring_seen *seen)
{
	uint64_t ns = atomic_load(&ring->handler_ns), timed = atomic_load(&ring->handler_timed);
	uint64_t calls = atomic_load(&ring->handler_calls);
	if (ns >= seen->handler_ns && timed >= seen->handler_timed && calls >= seen->handler_calls &&
	    calls - seen->handler_calls >= timed - seen->handler_timed &&
	    ns - seen->handler_ns <= (timed - seen->handler_timed) * TRANSPORT_PREEMPTED_NS) {
		d->cost_ns += ns - seen->handler_ns;
		d->cost_timed += timed - seen->handler_timed;
		d->cost_calls += calls - seen->handler_calls;
	}
	seen->handler_ns = ns;
	seen->handler_timed = timed;
	seen->handler_calls = calls;
}

int drain_all(struct drain *d)
{
	const struct transport *t = d->t;
	uint32_t nrings = transport_nrings(t);
	if (nrings > d->nrings_seen) {
		d->rings = realloc_or_abort(d->rings, nrings * sizeof *d->rings);
		memset(d->rings + d->nrings_seen, 0, (nrings - d->nrings_seen) * sizeof *d->rings);
		d->nrings_seen = nrings;
	}
	d->fullest = 0;
	d->freed = 0;
	for (uint32_t i = 0; i < nrings; i++) {
		struct transport_ring *ring = transport_ring(t, i);
		struct ring_seen *seen = &d->rings[i];
		uint32_t state = atomic_load_explicit(&ring->state, memory_order_acquire);
		if (state == RING_FREE || state == RING_CLAIMING || seen->broken)
			continue; /* (a ring being claimed is empty; its owner's ids are not written yet) */
		d->pid = ring->pid;
		d->stream = ring->stream;
		d->tid = ring->tid;
		/* The wall sampler's ring holds other threads' samples: its losses are theirs. */
		uint32_t loss_tid = (ring->flags & RING_AGENT_SAMPLER) ? 0 : ring->tid;
		uint64_t waiting = atomic_load(&ring->head) - atomic_load(&ring->tail);
		if (waiting > d->fullest && waiting <= t->ring_bytes)
			d->fullest = waiting;
		if (transport_drain(t, i, d->scratch, on_record, d) < 0) {
			seen->broken = 1;
			fprintf(stderr, "collect: the program overwrote the profiler's buffer of thread %u: "
					"its later samples are lost\n", ring->tid);
			continue;
		}
		uint64_t lost = atomic_load(&ring->lost);
		if (lost != seen->lost) {
			write_loss(d, loss_tid, lost - seen->lost);
			seen->lost = lost;
		}
		take_cost(d, ring, seen);
		/* A closed ring's thread is gone: once empty, it can serve a new thread. */
		if (state == RING_CLOSED && atomic_load(&ring->head) == atomic_load(&ring->tail)) {
			atomic_store(&ring->lost, 0);
			atomic_store(&ring->handler_ns, 0);
			atomic_store(&ring->handler_timed, 0);
			atomic_store(&ring->handler_calls, 0);
			memset(seen, 0, sizeof *seen);
			atomic_store(&ring->head, 0);
			atomic_store(&ring->tail, 0);
			atomic_store_explicit(&ring->state, RING_FREE, memory_order_release);
			d->freed++;
		}
	}
	if (d->freed)
		transport_rings_changed(t->header);
	if (heap_order_write(d->heap, d->error ? NULL : d->w, 0) < 0)
		d->error = 1;
	uint64_t no_ring = atomic_load(&t->header->lost_no_ring);
	if (no_ring != d->no_ring_lost_seen) {
		d->pid = 0;
		write_loss(d, 0, no_ring - d->no_ring_lost_seen);
		d->no_ring_lost_seen = no_ring;
	}
	return d->error ? -1 : 0;
}

void drain_close_dead(struct drain *d)
{
	const struct transport *t = d->t;
	uint32_t nrings = transport_nrings(t);
	for (uint32_t i = 0; i < nrings; i++) {
		struct transport_ring *ring = transport_ring(t, i);
		uint32_t owned = RING_OWNED;
		/* The owner's ids are read after OWNED (published after them): never a previous owner's. */
		if (atomic_load_explicit(&ring->state, memory_order_acquire) != RING_OWNED)
			continue;
		uint32_t pid = ring->pid, tid = ring->tid;
		if (!pid || !tid)
			continue;
		/* Signal 0 only checks that thread tid still exists in process pid. */
		if (syscall(SYS_tgkill, (pid_t)pid, (pid_t)tid, 0) < 0 && errno == ESRCH)
			atomic_compare_exchange_strong(&ring->state, &owned, RING_CLOSED);
	}
}

int drain_finish(struct drain *d)
{
	int rc = drain_all(d);
	if (heap_order_write(d->heap, d->error ? NULL : d->w, 1) < 0)
		d->error = 1;
	return rc < 0 || d->error ? -1 : 0;
}

int drain_busy(const struct drain *d)
{
	return d->fullest > d->t->ring_bytes / 16 || d->freed > d->t->rings_per_chunk / 4;
}

void drain_totals(const struct drain *d, struct drain_totals *out)
{
	*out = d->totals;
	out->threads = d->nthreads;
	heap_order_totals(d->heap, &out->heap);
	/* Calls preempted inside the handler cost what the timed ones did, on average. */
	out->handler_calls = d->cost_calls;
	out->handler_ns = d->cost_timed ? (uint64_t)((double)d->cost_ns * (double)d->cost_calls / (double)d->cost_timed) : 0;
	out->measured_threads = 0;
	out->measured_cpu_ns = out->measured_weight = 0;
	memset(&out->coverage, 0, sizeof(out->coverage));
	uint64_t interval = d->t->header->interval_ns;
	for (uint32_t i = 0; i < d->threads_cap; i++) {
		const struct thread_seen *t = &d->threads[i];
		if (t->tid && t->measured) {
			out->measured_threads++;
			out->measured_cpu_ns += t->cpu_ns;
			out->measured_weight += t->weight;
			coverage_add(&out->coverage, t->cpu_ns, t->weight * interval, interval);
		}
	}
}
