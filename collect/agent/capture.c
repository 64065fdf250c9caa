/*
 * capture.c - one backtrace of the calling thread, as a stack id: the one
 * function every kind of record calls (the sampling handler today, the
 * allocation hooks next), so unwinding, trimming and deduplication are done
 * one way.
 *
 * Unwinding is libunwind's unw_backtrace: its fast path walks a per-thread
 * cache of frame descriptions (no lock, no allocation; the caching policy is
 * UNW_CACHE_PER_THREAD, set in sampler_init). It starts from its own frame,
 * so the agent's frames come first: from a signal handler they end at the
 * interrupted pc, which the ucontext gives exactly (the frames before it are
 * the handler and the kernel's __restore_rt); elsewhere the caller says how
 * many of its own frames to drop. The buffer is on the stack: capture never
 * allocates, so it is safe in a signal handler and inside malloc. No unwind
 * starts while a fork is under way (process.c): libunwind's lock, taken in
 * another thread at that moment, would stay taken in the child.
 */
#include "agent.h"

#include <libunwind.h>

#include "trace.h"

/* The agent's frames before the interrupted pc: capture, the handler, __restore_rt, and slack. */
#define HANDLER_FRAMES 8

void capture_warm_up(void)
{
	void *ips[64];
	unw_backtrace(ips, 64);
}

uint32_t capture_stack(uint32_t ring, const ucontext_t *uc, uint32_t skip)
{
	uint32_t max = agent_config.max_frames; /* collect keeps it <= 1024 */
	/* frames of the agent (and caller) to find or drop */
	uint32_t lead = uc ? HANDLER_FRAMES : skip == CAPTURE_SKIP_AGENT ? 8 : 1 + skip;
	void *ips[max + lead];
	/* A fork in progress: libunwind's lock must not be held across it. A hook (not a signal
	 * handler) waits for it to end, so another thread's allocations during a fork keep their stacks. */
	if (process_unwind_begin() < 0 && (uc || process_unwind_wait() < 0))
		return UINT32_MAX;
	int n = unw_backtrace(ips, (int)(max + lead));
	process_unwind_end();
	uint64_t *frames = (uint64_t *)ips;
	uint32_t flags = 0, nframes;
	int first = -1;
	if (uc) {
		uint64_t pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
		flags = TRACE_STACK_LEAF_EXACT;
		for (int i = 0; i < n && i < HANDLER_FRAMES; i++)
			if ((uint64_t)ips[i] == pc) {
				first = i;
				break;
			}
		if (first < 0) {
			/* No unwind info where it stopped: keep the pc alone. */
			frames[0] = pc;
			n = 1;
			first = 0;
		}
	} else if (skip == CAPTURE_SKIP_AGENT) {
		/* The hooks' frames, however the compiler inlined them. */
		first = 0;
		while (first < n && agent_own_text((uint64_t)ips[first]))
			first++;
	} else {
		first = n < (int)lead ? n : (int)lead;
	}
	frames += first;
	nframes = (uint32_t)(n - first);
	if (nframes > max) {
		nframes = max;
		flags |= TRACE_STACK_TRUNCATED;
	}
	return stack_table_id(&agent_self.stacks, ring, frames, nframes, flags);
}
