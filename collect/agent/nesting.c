/*
 * nesting.c - the nesting protocol of every ring writer outside the sampling
 * handler: a writer's section (agent_enter, agent_leave), what whoever
 * interrupts it on its thread leaves for it (a program's signal handler's
 * heap events, the sampling handler's periods), and a record begun and
 * ended with both (agent_write_begin, agent_write_end).
 *
 * A ring has one writer, its thread; a writer reserves room, fills it,
 * commits. What can interrupt a writer on its own thread is a signal: the
 * sampling signal, or a program's handler that allocates. Blocking signals around each event would cost two system calls
 * per malloc, so instead a writer raises agent_self.depth (agent_enter) and
 * whoever finds it raised writes nothing to the ring:
 *  - the sampling handler adds its periods to hook_weight: the time is the
 *    profiler's ("[ipscope: recording allocations]", the marker's stack),
 *    never the program's function's, and no unwinding happens in there;
 *  - a nested allocation or free takes its seq at once and goes into the
 *    thread's side buffer with its caller as its stack: 32 events in TLS,
 *    then 256 in a mapping of the thread's (nesting_self.more). A handler that
 *    allocates adds two each run while the section writes them on leaving
 *    and more arrive: on a VM where a 50 us SIGALRM cost the thread half its
 *    time, a new thread's first section needed 28 to 40 (e2e_alloc_cases'
 *    threads case lost events with 32). In TLS they would cost every
 *    thread's stack 12 KiB (glibc takes static TLS from it: threads of
 *    PTHREAD_STACK_MIN could not start).
 * The outer writer, when done (agent_leave), writes what was left there, then
 * lowers depth and checks once more, so nothing stays behind. A nested event
 * that finds the side buffer full is lost and counted (alloc_events_lost;
 * collect says so): nothing in a signal handler may wait for the outer
 * writer it interrupted.
 *
 * A nested event's membership in the live set (alloc_live.c) is decided by
 * the outer writer, as the hook would have: the handler that made it could
 * not take the set's lock.
 */
#include "agent.h"

#include <dlfcn.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "alloc_live.h"
#include "trace.h"

/* A heap event recorded from inside another writer (a signal handler's allocation while the thread is in a
 * hook): the outer one writes it. */
struct nested_event {
	uint64_t seq, time_ns, address, size;
	uint64_t caller; /* the hook's return address: the event's one-frame stack */
	uint16_t kind, flags;
	uint32_t decide; /* 1: the outer writer decides its membership in the live set;
			    2: made while unwinding: libunwind's own unless its caller is the program's */
};
/* Nested events in TLS; past them, the thread's mapped overflow (more). */
#define NESTED_EVENTS 32

/* The calling thread's nested events: [0, agent_self.nested_count) written, the first done of them written out. */
static AGENT_TLS __thread struct nesting_thread {
	uint32_t done;
	struct nested_event *more; /* mapped by nesting_thread_begin; NULL: none */
	struct nested_event events[NESTED_EVENTS];
} nesting_self;

/* ---- what a section's interrupters leave, and the outer writer writes ---- */

/* Room for an allocation record: waits (outside signal handlers) while collect is alive. */
static void *reserve_heap(uint32_t ring, uint32_t type, uint32_t size)
{
	void *p = transport_reserve(&agent_transport, ring, type, size);
	for (unsigned spins = 0; !p; spins++) {
		struct transport_header *h = agent_transport.header;
		if (agent_now_ns() - atomic_load(&h->consumer_heartbeat_ns) > 2000000000ull)
			return NULL; /* collect stopped draining (killed): do not hang the program */
		if (!atomic_exchange(&h->wake_pending, 1))
			kill(agent_config.collect_pid, TRANSPORT_WAKE_SIGNAL);
		struct timespec ts = { 0, spins < 10 ? 20000 : 200000 };
		nanosleep(&ts, NULL);
		p = transport_reserve(&agent_transport, ring, type, size);
	}
	return p;
}

void agent_write_heap(uint32_t ring, uint64_t seq, uint64_t time_ns, uint64_t address, uint64_t size, uint32_t stack,
		      uint16_t kind, uint16_t flags)
{
	struct tr_heap *e = reserve_heap(ring, TR_HEAP, sizeof *e);
	if (!e) {
		atomic_fetch_add(&agent_transport.header->alloc_events_lost, 1);
		return;
	}
	e->seq = seq;
	e->time_ns = time_ns;
	e->address = address;
	e->size = size;
	e->stack_id = stack;
	e->kind = kind;
	e->flags = flags;
	transport_commit(&agent_transport, ring);
}

/* The agent's own function whose pc stands for time spent in a section: analyze knows it by
 * this name, trace.h's TRACE_AGENT_ALLOC_MARKER (the two must be spelled alike). */
__attribute__((noinline)) void agent_recording_allocations(void)
{
	__asm__ volatile("");
}

/* The one-frame stack that names it. */
static uint64_t marker_pc(void)
{
	return (uint64_t)(uintptr_t)&agent_recording_allocations;
}

/* Periods the sampling handler left while this thread wrote: one sample on the marker. */
static void write_hook_samples(uint32_t ring)
{
	uint32_t weight = atomic_exchange_explicit(&agent_self.hook_weight, 0, memory_order_relaxed);
	if (!weight)
		return;
	/* Each thread defines it in its own ring (collect merges equal stacks). */
	uint64_t pc = marker_pc();
	uint32_t id = stack_table_id(&agent_self.stacks, ring, &pc, 1, TRACE_STACK_LEAF_EXACT);
	if (!agent_write_sample(ring, agent_gettid(), id, weight, agent_self.hook_time_ns, TRACE_STATE_ON_CPU, -1))
		atomic_fetch_add(&transport_ring(&agent_transport, ring)->lost, 1);
}

/*
 * Whether a nested allocation made while this thread unwound is the
 * unwinder's own: its caller in libunwind or liblzma (Debian's libunwind
 * decompresses .gnu_debugdata with it) or the agent. A program's signal
 * handler calls from the program. dladdr only on this rare path.
 */
static int unwinder_own(uint64_t caller)
{
	if (agent_own_text(caller) || agent_called_from_unwinder((const void *)(uintptr_t)caller))
		return 1;
	Dl_info info;
	if (!dladdr((const void *)(uintptr_t)caller, &info) || !info.dli_fname)
		return 0;
	return strstr(info.dli_fname, "liblzma") != NULL || strstr(info.dli_fname, "libunwind") != NULL;
}

/* The side buffer past the events in TLS. */
#define NESTED_MORE_BYTES 12288u
#define NESTED_MORE (NESTED_MORE_BYTES / sizeof(struct nested_event))

/* The side buffer's slot i; NULL past its end. */
static struct nested_event *nested_slot(struct nesting_thread *nesting, uint32_t i)
{
	if (i < NESTED_EVENTS)
		return &nesting->events[i];
	struct nested_event *more = nesting->more;
	return more && i - NESTED_EVENTS < NESTED_MORE ? &more[i - NESTED_EVENTS] : NULL;
}

void nesting_thread_begin(void)
{
	if (nesting_self.more || !(agent_transport.header->mode & TRANSPORT_MODE_ALLOCS))
		return; /* a fork child keeps its copy */
	void *m = mmap(NULL, NESTED_MORE_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m != MAP_FAILED)
		nesting_self.more = m;
}

void nesting_thread_end(void)
{
	struct nested_event *more = nesting_self.more;
	nesting_self.more = NULL; /* before it is unmapped: no handler may find it after */
	atomic_signal_fence(memory_order_seq_cst);
	if (more)
		munmap(more, NESTED_MORE_BYTES);
}

/* Inside another writer on this thread: leave the event for it. */
void agent_nest_heap(uint64_t seq, uint64_t address, uint64_t size, uint64_t caller, uint16_t kind, uint16_t flags,
		     uint32_t decide)
{
	struct agent_thread *self = &agent_self;
	uint32_t n = atomic_load_explicit(&self->nested_count, memory_order_relaxed);
	struct nested_event *e = nested_slot(&nesting_self, n);
	if (!e) {
		atomic_fetch_add(&agent_transport.header->alloc_events_lost, 1);
		return;
	}
	e->seq = seq;
	e->time_ns = agent_coarse_ns();
	e->address = address;
	e->size = size;
	e->caller = caller;
	e->kind = kind;
	e->flags = (uint16_t)(flags | TR_HEAP_NESTED);
	e->decide = decide;
	atomic_signal_fence(memory_order_release);
	atomic_store_explicit(&self->nested_count, n + 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&agent_transport.header->alloc_nested, 1, memory_order_relaxed);
}

/* Write what nested writers left, in their order. */
static void write_nested(uint32_t ring)
{
	struct agent_thread *self = &agent_self;
	struct nesting_thread *nesting = &nesting_self;
	uint64_t restorable = 0; /* the block of the latest recorded free by a realloc */
	for (;;) {
		uint32_t n = atomic_load_explicit(&self->nested_count, memory_order_relaxed);
		atomic_signal_fence(memory_order_acquire);
		if (nesting->done == n) {
			/* Reset unless a handler added one meanwhile (a CAS: signal-atomic). */
			if (atomic_compare_exchange_strong(&self->nested_count, &n, 0)) {
				nesting->done = 0;
				return;
			}
			continue;
		}
		struct nested_event *e = nested_slot(nesting, nesting->done++);
		if (!e) {
			atomic_fetch_add(&agent_transport.header->alloc_events_lost, 1); /* unmapped at the thread's end */
			continue;
		}
		uint16_t kind = e->kind;
		if ((e->decide & 2) && kind != TR_HEAP_FREE && unwinder_own(e->caller))
			kind = TR_HEAP_NONE; /* libunwind's (or liblzma's, for its minidebuginfo) */
		if (e->decide && kind == TR_HEAP_FREE) {
			if (!live_remove(e->address))
				kind = TR_HEAP_NONE; /* its seq must still reach collect */
			else if (e->flags & TR_HEAP_BY_REALLOC)
				restorable = e->address;
		}
		if (e->decide && (e->flags & TR_HEAP_RESTORED) && e->address != restorable)
			kind = TR_HEAP_NONE; /* its realloc's free was not of a chosen block */
		if (e->decide && kind != TR_HEAP_FREE && kind != TR_HEAP_NONE)
			live_insert(e->address);
		/* Not counted internal: stack_table_caller never allocates (stacks.c maps its memory), and a
		 * signal handler's allocation meanwhile must be nested here, not taken for the agent's. */
		uint32_t stack = kind != TR_HEAP_FREE && kind != TR_HEAP_NONE ? stack_table_caller(ring, e->caller) : 0;
		agent_write_heap(ring, e->seq, e->time_ns, e->address, e->size, stack == UINT32_MAX ? 0 : stack, kind,
				 e->flags);
	}
}

/* ---- sections ---- */

void agent_leave_outermost(void)
{
	struct agent_thread *self = &agent_self;
	for (;;) {
		if ((atomic_load_explicit(&self->nested_count, memory_order_relaxed) ||
		     atomic_load_explicit(&self->hook_weight, memory_order_relaxed)) &&
		    self->ring != AGENT_NO_RING) {
			write_nested(self->ring);
			write_hook_samples(self->ring);
		}
		atomic_signal_fence(memory_order_seq_cst);
		self->depth = 0;
		atomic_signal_fence(memory_order_seq_cst);
		/* A handler between the check and depth = 0 left something: once more. */
		if (self->ring == AGENT_NO_RING || (!atomic_load_explicit(&self->nested_count, memory_order_relaxed) &&
						    !atomic_load_explicit(&self->hook_weight, memory_order_relaxed)))
			return;
		self->depth = 1;
		atomic_signal_fence(memory_order_seq_cst);
	}
}

/* ---- a record begun and ended outside the handler ---- */

uint32_t agent_write_begin(sigset_t *old)
{
	agent_block_signal(old);
	/* A writer like an allocation hook: a program's handler that allocates while this record is half
	 * made leaves its events for agent_write_end (it wrote them into the middle of the record, and
	 * collect dropped the rest of the ring as overwritten, when a SIGALRM handler's malloc landed in
	 * the wait wrapper's record of a reaped child). */
	agent_enter();
	unsigned char resident;
	/* Nested in a program's handler that interrupted a writer (this one or a hook); or another
	 * process: a vfork child shares the memory (and this thread's ring, its parent thread being
	 * suspended), a raw fork does not. */
	if (!agent_flags->enabled || agent_self.depth > 1 ||
	    (agent_config.pid != getpid() && mincore(agent_transport.header, 4096, &resident) < 0))
		return AGENT_NO_RING; /* nested: the caller's record is skipped (process.c says what shows it) */
	uint32_t ring = agent_ring_waiting();
	if (ring == AGENT_NO_RING)
		agent_count_record_lost();
	return ring;
}

void agent_write_end(const sigset_t *old)
{
	agent_leave(); /* writes what a handler left meanwhile */
	agent_restore_signal(old);
}

/* ---- the lifecycle's: a forked child starts with nothing nested ---- */

void nesting_forget(void)
{
	agent_self.depth = 0;
	atomic_store(&agent_self.nested_count, 0);
	nesting_self.done = 0;
	atomic_store(&agent_self.hook_weight, 0);
}
