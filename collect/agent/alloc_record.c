/*
 * alloc_record.c - recording one allocation event of the hooks
 * (alloc_hooks.c): whether it is chosen, its seq, its stack, its ring write,
 * and writers nested in it on the same thread.
 *
 * What an event is. An allocation that returned memory is recorded after it
 * returned, a free before it is passed on; each takes the next number of the
 * process-wide agent_alloc_seq then, so for one address its allocation's
 * seq is below its free's, which is below the next allocation's, whatever
 * threads they ran on: collect puts every thread's events in seq order
 * (drain_heap.c). One counter for every thread costs an atomic add on a
 * shared cache line per event, and per-thread numbers cannot order a free
 * after its allocation on another thread, nor give peak its one order of
 * all events; measured (bench_alloc_workload, 2 threads, every allocation,
 * perf samples of the tree, 3 interleaved rounds) a second such add per
 * event on a line of its own cost nothing that showed (1.00 of the CPU), so
 * the counter stays. The numbers are the image's own (a forked child and an
 * exec'd program count from 1 again, in a stream of their own: agent.c).
 * realloc is a free of the old block (flag BY_REALLOC, its seq taken before
 * the real realloc) and an allocation of the new one (MOVED when it moved), as valgrind's memcheck counts them; realloc(NULL, n) is an
 * allocation, realloc(p, 0) (glibc frees p) a free. A failed call records
 * nothing, except a failed realloc whose free was recorded: it records the
 * old block allocated again by realloc (RESTORED), so what is live stays
 * right (memcheck counts neither).
 *
 * What is chosen (transport_header.alloc_scheme): every allocation; or each
 * with probability RATE (Julia's Profile.Allocs: uniform over allocations);
 * or each byte with probability 1/N (tcmalloc, Go): an allocation of s bytes
 * is chosen with probability 1 - exp(-s/N), which analyze turns into its
 * weight. Both are a per-thread countdown drawn once per chosen allocation:
 * of allocations, geometric (the number of Bernoulli(RATE) trials to the
 * first success: the same choice as a draw per allocation, which with its
 * call was 3% of lua's time at 1%), or of exponentially distributed bytes;
 * so an unchosen allocation costs the hook one decrement, which says what
 * the countdown was, and a compare (alloc_seen in agent.h). A program's
 * signal handler that allocates may interrupt a hook anywhere: the decrement
 * is one instruction, a countdown found at or below 0 (a choice in progress
 * on the thread) is decided by a draw of its own, and no random number is
 * ever handed out twice (alloc_choice.h), so every allocation is chosen on
 * its own with its probability, nested or not. When not every allocation is chosen,
 * the chosen live blocks are kept in a set (alloc_live.c), so only their
 * frees are recorded: an unchosen block's free costs a lookup and never
 * shows in leaks, peak or temporaries. A free is TEMPORARY when its block is
 * its thread's latest allocation (no allocation by that thread since: the
 * agent remembers each thread's latest block, chosen or not).
 *
 * Stacks. capture_stack (the agent's frame tables, libunwind where they
 * cannot answer: capture.c) from the hook, without the agent's frames;
 * --max-frames applies. Measured (bench/alloc-overhead, one thread, CPU time
 * of the program and collect), each change on its own branch against the
 * same base: the frame tables 0.40 us per allocation and its free at 9
 * frames, 0.51 at 21, 1.03 at 69 (0.49, 0.63, 1.19 with libunwind's
 * unw_backtrace in the same session); the write path below 0.47, 0.61, 1.06
 * (0.48, 0.63, 1.17 before). What an event costs besides its stack: the
 * ring write (transport.h's inline producer path, which reads collect's
 * tail only when the tail it saw says full, and divides nothing), the
 * stack's hash (two running sums: a multiply per frame was 4-5% of the
 * time), the seq, a coarse clock read; in collect, the drain's copy
 * (fixed-size for small records), the ordering (drain_heap.c) and the
 * writer (one probe of its live table per allocation, prefetched eight
 * events ahead; column loops over index lists). The walk follows the
 * chains of the thread's recent walks where the stack is theirs, and a stack
 * that is all a chain's recalls its id (frametab_chain.c, stacks.c): 0.20,
 * 0.19, 0.27 us at 9, 21, 69 frames (the base of that branch, same session:
 * 0.26, 0.32, 0.73). Inside
 * dl_iterate_phdr (a program's callback holding the loader's
 * lock) there is no unwinding at all: the stack is the caller of
 * dl_iterate_phdr alone (unwinder.c says why).
 *
 * Nesting without system calls. A ring has one writer, its thread; a writer
 * reserves room, fills it, commits. What can interrupt a writer on its own
 * thread is a signal: the sampling signal, or a program's handler that
 * allocates. Blocking signals around each event would cost two system calls
 * per malloc, so instead a writer raises agent_self.depth (agent_enter) and
 * whoever finds it raised writes nothing to the ring:
 *  - the sampling handler adds its periods to hook_weight: the time is the
 *    profiler's ("[ipscope: recording allocations]", the marker's stack),
 *    never the program's function's, and no unwinding happens in there;
 *  - a nested allocation or free takes its seq at once and goes into the
 *    thread's side buffer with its caller as its stack: 32 events in TLS,
 *    then 256 in a mapping of the thread's (nested_more). A handler that
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
 * Waiting. Allocation records are never dropped: outside signal handlers a
 * thread whose ring is full wakes collect and waits for room (while collect
 * lives). The agent's own allocations (agent_self.internal: module scans,
 * the thread trampoline, libunwind) are not recorded, nor anything before
 * the agent attached, nor in the forking thread between fork's prepare and
 * child handlers (a followed child starts anew from there: alloc_hooks.c): a
 * block allocated before and freed after (in a child: one inherited from its
 * parent) is a free of nothing analyze knows in that process, and ignored
 * there.
 */
#include "agent.h"

#include <dlfcn.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "trace.h"

#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#define NOINLINE __attribute__((noinline))

/* Per process: a forked child clears it (alloc_forget). */
struct alloc_state alloc_state;
/* The image's event numbers, on a cache line of its own: every recorded event takes one. */
struct agent_alloc_seq agent_alloc_seq;

/* ---- per-thread choices ---- */

/* Whether the allocation of size bytes is chosen; before: what alloc_seen's choice_take (which skips most
 * of them) found, at most the step. */
static int chosen(struct agent_thread *self, size_t size, int64_t before)
{
	/* Every allocation: no countdown to keep (alloc_seen's decrements leave it below 0, 2^63
	 * allocations from wrapping). Keeping one was wrong: a signal handler that allocated between
	 * its read and its write left it at 1 after this allocation had taken it to 0, so this one
	 * was "not chosen" and silently lost, while its free was recorded (1 to 2 of 200050 in a
	 * third of the ASan runs of alloc_cases signal). Sampled schemes never write back what they
	 * read: alloc_choice.h says how a handler between any two instructions leaves them exact. */
	if (!alloc_state.sampled)
		return 1;
	/* The key is the same whoever computes it first (a handler in between included). */
	if (UNLIKELY(!self->prng.key))
		self->prng.key = choice_key(agent_gettid(), (uint64_t)(uintptr_t)self, alloc_state.start_ns);
	return choice_decide(&self->countdown, before, choice_step(alloc_state.by_bytes, size), &alloc_state.choice,
			     &self->prng);
}

static uint64_t coarse_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t take_seq(void)
{
	return atomic_fetch_add_explicit(&agent_alloc_seq.n, 1, memory_order_relaxed) + 1;
}

/* ---- the ring ---- */

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

static void write_event(uint32_t ring, uint64_t seq, uint64_t time_ns, uint64_t address, uint64_t size,
			uint32_t stack, uint16_t kind, uint16_t flags)
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

/* The agent's own function whose pc stands for time spent recording allocations. */
NOINLINE void agent_recording_allocations(void)
{
	__asm__ volatile("");
}

uint64_t alloc_marker_pc(void)
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
	uint64_t pc = alloc_marker_pc();
	uint32_t id = stack_table_id(&agent_self.stacks, ring, &pc, 1, TRACE_STACK_LEAF_EXACT);
	struct tr_sample *s = id == UINT32_MAX ? NULL : transport_reserve(&agent_transport, ring, TR_SAMPLE, sizeof *s);
	if (!s) {
		atomic_fetch_add(&transport_ring(&agent_transport, ring)->lost, 1);
		return;
	}
	s->time_ns = agent_self.hook_time_ns;
	s->tid = agent_gettid();
	s->stack_id = id;
	s->weight = weight;
	s->state = 0;
	transport_commit(&agent_transport, ring);
}

/* One-frame stack of a caller (events inside the loader, nested events). */
static uint32_t caller_stack(uint32_t ring, uint64_t caller)
{
	return stack_table_id(&agent_self.stacks, ring, &caller, 1, TRACE_STACK_TRUNCATED);
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

/* Write what nested writers left, in their order. */
#define NESTED_MORE_BYTES 12288u
#define NESTED_MORE (NESTED_MORE_BYTES / sizeof(struct agent_nested_event))

/* The side buffer's slot i; NULL past its end. */
static struct agent_nested_event *nested_slot(struct agent_thread *self, uint32_t i)
{
	if (i < AGENT_NESTED_EVENTS)
		return &self->nested[i];
	struct agent_nested_event *more = self->nested_more;
	return more && i - AGENT_NESTED_EVENTS < NESTED_MORE ? &more[i - AGENT_NESTED_EVENTS] : NULL;
}

void alloc_thread_begin(void)
{
	if (agent_self.nested_more || !(agent_transport.header->mode & TRANSPORT_MODE_ALLOCS))
		return; /* a fork child keeps its copy */
	void *m = mmap(NULL, NESTED_MORE_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m != MAP_FAILED)
		agent_self.nested_more = m;
}

void alloc_thread_end(void)
{
	struct agent_nested_event *more = agent_self.nested_more;
	agent_self.nested_more = NULL; /* before it is unmapped: no handler may find it after */
	atomic_signal_fence(memory_order_seq_cst);
	if (more)
		munmap(more, NESTED_MORE_BYTES);
}

static void write_nested(uint32_t ring)
{
	struct agent_thread *self = &agent_self;
	uint64_t restorable = 0; /* the block of the latest recorded free by a realloc */
	for (;;) {
		uint32_t n = atomic_load_explicit(&self->nested_count, memory_order_relaxed);
		atomic_signal_fence(memory_order_acquire);
		if (self->nested_done == n) {
			/* Reset unless a handler added one meanwhile (a CAS: signal-atomic). */
			if (atomic_compare_exchange_strong(&self->nested_count, &n, 0)) {
				self->nested_done = 0;
				return;
			}
			continue;
		}
		struct agent_nested_event *e = nested_slot(self, self->nested_done++);
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
		/* Not counted internal: caller_stack never allocates (stacks.c maps its memory), and a
		 * signal handler's allocation meanwhile must be nested here, not taken for the agent's. */
		uint32_t stack = kind != TR_HEAP_FREE && kind != TR_HEAP_NONE ? caller_stack(ring, e->caller) : 0;
		write_event(ring, e->seq, e->time_ns, e->address, e->size, stack == UINT32_MAX ? 0 : stack, kind,
			    e->flags);
	}
}

void agent_enter(void)
{
	agent_self.depth++;
	atomic_signal_fence(memory_order_seq_cst);
}

void agent_leave(void)
{
	struct agent_thread *self = &agent_self;
	if (self->depth > 1) {
		self->depth--;
		return;
	}
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

/* agent_leave for a hook's writer: nothing nested left behind (nearly always) costs no call. */
static inline void leave_hook(void)
{
	struct agent_thread *self = &agent_self;
	if (self->depth == 1 && !atomic_load_explicit(&self->nested_count, memory_order_relaxed) &&
	    !atomic_load_explicit(&self->hook_weight, memory_order_relaxed)) {
		atomic_signal_fence(memory_order_seq_cst);
		self->depth = 0;
		atomic_signal_fence(memory_order_seq_cst);
		/* A handler between the check and depth = 0 left something: agent_leave writes it. */
		if (LIKELY(!atomic_load_explicit(&self->nested_count, memory_order_relaxed) &&
			   !atomic_load_explicit(&self->hook_weight, memory_order_relaxed)))
			return;
		self->depth = 1;
		atomic_signal_fence(memory_order_seq_cst);
	}
	agent_leave();
}

/* Inside another writer on this thread: leave the event for it. */
static void push_nested(uint64_t seq, uint64_t address, uint64_t size, uint64_t caller, uint16_t kind,
			uint16_t flags, uint32_t decide)
{
	struct agent_thread *self = &agent_self;
	uint32_t n = atomic_load_explicit(&self->nested_count, memory_order_relaxed);
	struct agent_nested_event *e = nested_slot(self, n);
	if (!e) {
		atomic_fetch_add(&agent_transport.header->alloc_events_lost, 1);
		return;
	}
	e->seq = seq;
	e->time_ns = coarse_now();
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

/* The thread's ring, waiting for one if all are taken (never in a handler: hooks only). */
static uint32_t heap_ring(void)
{
	if (LIKELY(agent_self.ring != AGENT_NO_RING && !agent_self.start_pending))
		return agent_self.ring; /* what agent_thread_ring would say, without the call */
	return agent_ring_waiting();
}

static void note_seen(struct agent_thread *self)
{
	if (UNLIKELY(!self->allocs_noted)) {
		self->allocs_noted = 1;
		atomic_store(&agent_transport.header->allocs_seen, 1);
	}
}

static void write_alloc(struct agent_thread *self, void *p, size_t size, uint16_t kind, uint16_t flags,
			uint64_t caller);

/* An allocation returned p (not NULL); caller: the hook's return address. */
NOINLINE void record_alloc(void *p, size_t size, uint16_t kind, uint16_t flags, uint64_t caller, int64_t before)
{
	struct agent_thread *self = &agent_self;
	note_seen(self);
	self->last_alloc = (uint64_t)(uintptr_t)p;
	if (!chosen(self, size, before))
		return;
	write_alloc(self, p, size, kind, flags, caller);
}

/* A failed realloc left p live, its free recorded: allocated again, chosen as its free was. */
NOINLINE void record_restored(void *p, uint16_t kind, uint64_t caller)
{
	write_alloc(&agent_self, p, 0, kind, TR_HEAP_RESTORED, caller);
}

static void write_alloc(struct agent_thread *self, void *p, size_t size, uint16_t kind, uint16_t flags,
			uint64_t caller)
{
	int decide = alloc_state.sampled;
	if (self->depth) {
		push_nested(take_seq(), (uint64_t)(uintptr_t)p, size, caller, kind, flags,
			    (uint32_t)decide | (self->capturing ? 2u : 0u));
		return;
	}
	agent_enter();
	uint32_t ring = heap_ring();
	if (ring == AGENT_NO_RING) {
		atomic_fetch_add(&agent_transport.header->alloc_events_lost, 1);
		leave_hook();
		return;
	}
	if (decide)
		live_insert((uint64_t)(uintptr_t)p);
	uint32_t stack;
	self->capturing = 1;
	if (self->in_loader) {
		stack = caller_stack(ring, self->loader_caller);
		atomic_fetch_add_explicit(&agent_transport.header->alloc_unwind_skipped, 1, memory_order_relaxed);
	} else {
		stack = capture_stack(ring, NULL, CAPTURE_SKIP_AGENT);
	}
	self->capturing = 0;
	write_event(ring, take_seq(), coarse_now(), (uint64_t)(uintptr_t)p, size, stack == UINT32_MAX ? 0 : stack,
		    kind, flags);
	leave_hook();
}

/* p (not NULL) is about to be freed (flags: BY_REALLOC); whether its free was recorded (or left
 * for the outer writer, which decides). */
NOINLINE int record_free(void *p, uint16_t flags)
{
	struct agent_thread *self = &agent_self;
	uint64_t address = (uint64_t)(uintptr_t)p;
	if (address == self->last_alloc) {
		flags |= TR_HEAP_TEMPORARY;
		self->last_alloc = 0;
	}
	int decide = alloc_state.sampled;
	if (self->depth) {
		push_nested(take_seq(), address, 0, 0, TR_HEAP_FREE, flags, (uint32_t)decide);
		return 1;
	}
	if (decide && !live_remove(address))
		return 0; /* not a chosen block: nothing to say */
	agent_enter();
	uint32_t ring = heap_ring();
	if (ring != AGENT_NO_RING)
		write_event(ring, take_seq(), coarse_now(), address, 0, 0, TR_HEAP_FREE, flags);
	else
		atomic_fetch_add(&agent_transport.header->alloc_events_lost, 1);
	leave_hook();
	return 1;
}
