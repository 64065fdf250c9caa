/*
 * alloc_record.c - recording one allocation event of the hooks
 * (alloc_hooks.c): whether it is chosen, its seq, its stack, its ring write.
 * An event made inside another writer on the same thread (a program's signal
 * handler that allocates) is left for that writer (nesting.c).
 *
 * What an event is. An allocation that returned memory is recorded after it
 * returned, a free before it is passed on; each takes the next number of the
 * process-wide alloc_seq then, so for one address its allocation's
 * seq is below its free's, which is below the next allocation's, whatever
 * threads they ran on: collect puts every thread's events in seq order
 * (drain_heap.c). One counter for every thread costs an atomic add on a
 * shared cache line per event, and per-thread numbers cannot order a free
 * after its allocation on another thread, nor give peak its one order of
 * all events; measured, a second such add per event on a line of its own
 * cost nothing that showed (bench/README.md), so the counter stays. The
 * numbers are the image's own (a forked child and an exec'd program count
 * from 1 again, in a stream of their own: lifecycle.c).
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
 * call cost lua time at 1%: bench/README.md), or of exponentially
 * distributed bytes; so an unchosen allocation costs the hook one
 * decrement, which says what the countdown was, and a compare (alloc_seen
 * in allocations.h). A program's signal handler that allocates may interrupt a hook anywhere: the decrement
 * is one instruction, a countdown found at or below 0 (a choice in progress
 * on the thread) is decided by a draw of its own, and no random number is
 * ever handed out twice (alloc_choice.h), so every allocation is chosen on
 * its own with its probability, nested or not. When not every allocation is chosen,
 * the chosen live blocks are kept in a set (alloc_live.c), so only their
 * frees are recorded: an unchosen block's free costs a lookup and never
 * shows in leaks, peak or temporaries. A free is TEMPORARY when its block is
 * its thread's latest allocation, with no allocation or free by that thread
 * in between (the agent remembers each thread's latest block, chosen or not):
 * heaptrack's temporaries seen one thread at a time, which is what a sampled
 * trace shows (analyze finds heaptrack's own in the order of an exact trace's
 * events: load_allocs.c).
 *
 * Stacks. capture_stack (the agent's frame tables, libunwind where they
 * cannot answer: capture.c) from the hook, without the agent's frames;
 * --max-frames applies. What an allocation and its free cost, with the
 * frame tables against libunwind's unw_backtrace and this write path
 * against the one before it, is measured by bench/alloc-overhead
 * (bench/README.md). What an event costs besides its stack: the ring write
 * (transport.h's inline producer path, which reads collect's tail only
 * when the tail it saw says full, and divides nothing), the stack's hash
 * (two running sums: a multiply per frame cost more, bench/README.md), the
 * seq, a coarse clock read; in collect, the drain's copy (fixed-size for
 * small records), the ordering (drain_heap.c) and the writer (one probe of
 * its live table per allocation, prefetched eight events ahead; column
 * loops over index lists). The walk follows the chains of the thread's
 * recent walks where the stack is theirs, and a stack that is all a chain's
 * recalls its id (frametab_chain.c, stacks.c). Inside dl_iterate_phdr (a
 * program's callback holding the loader's lock) there is no unwinding at
 * all: the stack is the caller of dl_iterate_phdr alone (loader.c says
 * why).
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
#include "allocations.h"

#include "trace.h"
#include "unwinding.h"

#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#define NOINLINE __attribute__((noinline))

/* Per process: a forked child clears it (alloc_forget). */
struct alloc_state alloc_state;
/* The image's seq of allocation events (tr_heap.seq), on a cache line of its own: every recorded event takes
 * one. A forked child's counts from 1 again. */
static struct {
	_Alignas(64) _Atomic uint64_t n;
	char pad[56];
} alloc_seq;

/* What recording an event keeps of the calling thread besides agent_self's countdown and latest block. */
static AGENT_TLS __thread struct record_thread {
	volatile sig_atomic_t capturing; /* unwinding: a nested allocation is libunwind's or a handler's */
	int allocs_noted; /* header.allocs_seen was set for this thread */
	struct choice_stream prng; /* the countdown's random numbers (alloc_choice.h); key 0: not keyed */
} record_self;

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
	if (UNLIKELY(!record_self.prng.key))
		record_self.prng.key = choice_key(agent_gettid(), (uint64_t)(uintptr_t)self, alloc_state.start_ns);
	return choice_decide(&self->countdown, before, choice_step(alloc_state.by_bytes, size), &alloc_state.choice,
			     &record_self.prng);
}

static uint64_t take_seq(void)
{
	return atomic_fetch_add_explicit(&alloc_seq.n, 1, memory_order_relaxed) + 1;
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

/* The thread's ring, waiting for one if all are taken (never in a handler: hooks only). */
static uint32_t heap_ring(void)
{
	if (LIKELY(agent_self.ring != AGENT_NO_RING && !agent_self.start_pending))
		return agent_self.ring; /* what agent_thread_ring would say, without the call */
	return agent_ring_waiting();
}

static void note_seen(void)
{
	if (UNLIKELY(!record_self.allocs_noted)) {
		record_self.allocs_noted = 1;
		atomic_store(&agent_transport.header->allocs_seen, 1);
	}
}

static void write_alloc(struct agent_thread *self, void *p, size_t size, uint16_t kind, uint16_t flags,
			uint64_t caller);

/* An allocation returned p (not NULL); caller: the hook's return address. */
NOINLINE void record_alloc(void *p, size_t size, uint16_t kind, uint16_t flags, uint64_t caller, int64_t before)
{
	struct agent_thread *self = &agent_self;
	note_seen();
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
		agent_nest_heap(take_seq(), (uint64_t)(uintptr_t)p, size, caller, kind, flags,
				(uint32_t)decide | (record_self.capturing ? 2u : 0u));
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
	record_self.capturing = 1;
	if (self->in_loader) {
		stack = stack_table_caller(ring, self->loader_caller);
		atomic_fetch_add_explicit(&agent_transport.header->alloc_unwind_skipped, 1, memory_order_relaxed);
	} else {
		stack = capture_stack(ring, NULL, CAPTURE_SKIP_AGENT);
	}
	record_self.capturing = 0;
	agent_write_heap(ring, take_seq(), agent_coarse_ns(), (uint64_t)(uintptr_t)p, size,
			 stack == UINT32_MAX ? 0 : stack, kind, flags);
	leave_hook();
}

/* p (not NULL) is about to be freed (flags: BY_REALLOC); whether its free was recorded (or left
 * for the outer writer, which decides). */
NOINLINE int record_free(void *p, uint16_t flags)
{
	struct agent_thread *self = &agent_self;
	uint64_t address = (uint64_t)(uintptr_t)p;
	if (address == self->last_alloc)
		flags |= TR_HEAP_TEMPORARY;
	self->last_alloc = 0;
	int decide = alloc_state.sampled;
	if (self->depth) {
		agent_nest_heap(take_seq(), address, 0, 0, TR_HEAP_FREE, flags, (uint32_t)decide);
		return 1;
	}
	if (decide && !live_remove(address))
		return 0; /* not a chosen block: nothing to say */
	agent_enter();
	uint32_t ring = heap_ring();
	if (ring != AGENT_NO_RING)
		agent_write_heap(ring, take_seq(), agent_coarse_ns(), address, 0, 0, TR_HEAP_FREE, flags);
	else
		atomic_fetch_add(&agent_transport.header->alloc_events_lost, 1);
	leave_hook();
	return 1;
}

void record_forget(void)
{
	atomic_store(&alloc_seq.n, 0);
	record_self.prng.count = 0;
	record_self.prng.key = 0; /* keyed again with the child's thread id */
	record_self.allocs_noted = 0;
}
