/*
 * allocations.h - the agent's allocation recording: the malloc family
 * interposed (alloc_hooks.c), with the hooks' fast paths inline here, and
 * one event recorded (alloc_record.c); which allocations a sampled scheme
 * chooses (alloc_choice.h) and the live chosen blocks (alloc_live.h). Calls
 * the core and unwinding.
 */
#ifndef IPSCOPE_ALLOCATIONS_H
#define IPSCOPE_ALLOCATIONS_H

#include "agent.h"
#include "alloc_choice.h"
#include "alloc_live.h"

/* Per process (alloc_record.c; alloc_init sets it, a forked child clears it). */
struct alloc_state {
	/* What every hook reads (besides agent_flags->alloc_on and agent_real's malloc family), in one cache line. */
	_Alignas(64) int wanted;          /* allocations are recorded in this image once alloc_start runs */
	int sampled;         /* scheme is not TRANSPORT_ALLOC_ALL: frees are looked up in the live set */
	int by_bytes;        /* scheme is TRANSPORT_ALLOC_BYTES: the countdown counts bytes */
	uint32_t scheme;     /* TRANSPORT_ALLOC_* */
	struct choice_scheme choice; /* what the countdown counts, and its distribution */
	uint64_t start_ns;   /* CLOCK_REALTIME at alloc_init, in every thread's random key */
};
extern struct alloc_state alloc_state;

/* alloc_hooks.c */
/* Each hook by a name of its own (agent_hook_malloc...): the agent's definition, whatever the name resolves to. */
#define ALLOC_HOOK_DECLARE(name) extern __typeof__(name) agent_hook_##name __attribute__((visibility("hidden")));
AGENT_MALLOC_FAMILY(ALLOC_HOOK_DECLARE)
#undef ALLOC_HOOK_DECLARE
/* Set up allocation recording from the header (after attach), not started yet; 0, or -1 with agent_error set. */
int alloc_init(void);
/* Start recording (this image's PROCESS record written first, so its events follow it). */
void alloc_start(void);
/* Whether allocations are being recorded in this process. */
int alloc_enabled(void);
/* A forked child: record nothing, touch no shared state (alloc_start, once attached, starts it anew). */
void alloc_forget(void);
/* Whether an allocator's own API (jemalloc's mallocx, mimalloc's mi_malloc...), which the hooks do not
 * see, is in scope (RTLD_DEFAULT at the start, a dlopen's handle): say so in the header. */
void alloc_check_apis(void *scope);

/* alloc_rebind.c */
/* The objects loaded before a dlopen (by program header address), on the caller's stack. */
struct alloc_loaded {
	const void *phdr[512];
	size_t n;
	int overflow; /* more than fit */
};
/* Before a dlopen with RTLD_DEEPBIND: note the objects loaded so far. */
void alloc_rebind_note(struct alloc_loaded *before);
/* After it returned handle: in the objects it loaded, point the malloc family's GOT entries bound to libc's at the hooks. */
void alloc_rebind(void *handle, const struct alloc_loaded *before);
/* The same for libc's other names of the family (__libc_malloc...), in the objects loaded since before (NULL: all). */
void alloc_rebind_aliases(const struct alloc_loaded *before);

/* alloc_record.c */
/* An allocation returned p (not NULL), chosen or not (alloc_seen's slow path: before is its choice_take's answer,
 * at most its step); caller: the hook's return address. */
void record_alloc(void *p, size_t size, uint16_t kind, uint16_t flags, uint64_t caller, int64_t before);
/* A failed realloc left p live whose free record_free recorded: p allocated again (RESTORED). */
void record_restored(void *p, uint16_t kind, uint64_t caller);
/* p (not NULL) is about to be freed (flags: TR_HEAP_BY_REALLOC or 0); whether it was recorded. */
int record_free(void *p, uint16_t flags);
/* A forked child: its events count from 1 again, its thread's choices are its own. */
void record_forget(void);

/*
 * The hooks' fast paths (alloc_hooks.c), inline so that at RATE < 1 an
 * unchosen allocation costs a decrement and a compare (one xadd: a signal
 * handler's allocation can run between any two instructions, alloc_choice.h)
 * and a free of an unchosen block a filter load; anything else goes to
 * alloc_record.c. self is &agent_self, read once by the hook.
 */
/* Whether this thread's allocations are being recorded now. */
static inline int alloc_recording(const struct agent_thread *self)
{
	return agent_flags->alloc_on && !self->internal; /* internal counts forking too (alloc_hooks.c) */
}
/* The allocation of size bytes that returned p (not NULL), while alloc_recording. */
static inline void alloc_seen(struct agent_thread *self, void *p, size_t size, uint16_t kind, uint16_t flags,
			      uint64_t caller)
{
	self->last_alloc = (uint64_t)(uintptr_t)p;
	int64_t step = choice_step(alloc_state.by_bytes, size);
	int64_t before = choice_take(&self->countdown, step);
	if (__builtin_expect(before > step, 1))
		return; /* not chosen (a thread's first allocation never ends here: 0) */
	record_alloc(p, size, kind, flags, caller, before);
}
/* p (not NULL) is about to be freed, while alloc_recording; whether it was recorded. */
static inline int free_seen(struct agent_thread *self, void *p, uint16_t flags)
{
	uint64_t address = (uint64_t)(uintptr_t)p;
	if (alloc_state.sampled && !self->depth && !live_may_hold(address)) {
		self->last_alloc = 0; /* as record_free would: a free comes between */
		return 0;
	}
	return record_free(p, flags);
}

#endif
