/*
 * alloc_hooks.c - the malloc family interposed: malloc, calloc, realloc,
 * reallocarray, free, posix_memalign, aligned_alloc, memalign, valloc and
 * pvalloc (glibc's valloc and pvalloc do not go through the others; C++
 * new/delete, strdup, getline... reach these through libc's PLT).
 *
 * Each hook calls the real function and hands what it did to the fast
 * paths in allocations.h (alloc_seen, free_seen: at RATE < 1 most calls end
 * there, a decrement or a filter load) and from them to alloc_record.c
 * (record_alloc, record_free), which says what an event is, what is chosen
 * and how stacks are taken. realloc is a free of the old block (its seq
 * taken before the real realloc) and an allocation of the new one, as
 * memcheck counts them.
 *
 * Bootstrap: until dlsym found the real functions, allocations (dlsym's own)
 * come from a small static arena that is never handed to the real free.
 */
#include "allocations.h"

#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lifecycle.h"
#include "trace.h"

#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ---- bootstrap ---- */

static _Alignas(64) unsigned char arena[64 << 10];
static _Atomic size_t arena_used;
static _Atomic int resolving;

static int in_arena(const void *p)
{
	return (const unsigned char *)p >= arena && (const unsigned char *)p < arena + sizeof arena;
}

/* 16-byte aligned (or align), the size just before it; NULL when the arena is spent. */
static void *arena_alloc(size_t size, size_t align)
{
	if (align < 16)
		align = 16;
	size_t used = atomic_load(&arena_used), start, end;
	do {
		start = (used + 16 + align - 1) & ~(align - 1);
		end = start + size;
		if (end > sizeof arena || end < start)
			return NULL;
	} while (!atomic_compare_exchange_weak(&arena_used, &used, end));
	memcpy(arena + start - sizeof(size_t), &size, sizeof size);
	return arena + start;
}

static size_t arena_size(const void *p)
{
	size_t size;
	memcpy(&size, (const unsigned char *)p - sizeof size, sizeof size);
	return size;
}

static void resolve_real(void)
{
	if (atomic_exchange(&resolving, 1))
		return;
/* Into agent_real (interpose.h), malloc's entry last. */
#define RESOLVE(name) agent_real.name = (__typeof__(agent_real.name))dlsym(RTLD_NEXT, #name);
	AGENT_MALLOC_OTHERS(RESOLVE)
	RESOLVE(malloc)
#undef RESOLVE
	atomic_store(&resolving, 0);
}

/* The real functions, or NULL while dlsym runs (then the arena serves). */
static int ready(void)
{
	if (LIKELY(agent_real.malloc != NULL))
		return 1;
	resolve_real();
	return agent_real.malloc != NULL;
}

#define CALLER ((uint64_t)(uintptr_t)__builtin_return_address(0))

/* ---- before the start ---- */

/* Allocations the agent could not record (before it started: lifecycle_start_early), until it attached. */
static _Atomic uint64_t unrecorded_allocs, unrecorded_bytes;

static void count_unrecorded(size_t size)
{
	struct transport_header *h = agent_transport.header;
	if (h) {
		atomic_fetch_add(&h->allocs_unrecorded, 1);
		atomic_fetch_add(&h->alloc_bytes_unrecorded, size);
	} else {
		atomic_fetch_add(&unrecorded_allocs, 1);
		atomic_fetch_add(&unrecorded_bytes, size);
	}
}

/* An allocation of size bytes while not recording: the agent not started yet, it starts here; whether this
 * allocation is recorded. */
static __attribute__((noinline)) int first_use(size_t size)
{
	if (lifecycle_start_early())
		return alloc_recording(&agent_self);
	if (!lifecycle_starting_here() && agent_allocs_requested())
		count_unrecorded(size);
	return 0;
}

/* Whether the allocation of size bytes the hook made is recorded (alloc_recording, or the start it made). */
static inline int recording(struct agent_thread *self, size_t size)
{
	if (LIKELY(alloc_recording(self)))
		return 1;
	if (LIKELY(atomic_load_explicit(&lifecycle_start_state, memory_order_relaxed) == 2))
		return 0;
	return first_use(size);
}

/* ---- the hooks ---- */

AGENT_EXPORT void *malloc(size_t size)
{
	if (UNLIKELY(!ready()))
		return arena_alloc(size, 16);
	void *p = REAL(malloc)(size);
	if (p && recording(&agent_self, size))
		alloc_seen(&agent_self, p, size, TR_HEAP_MALLOC, 0, CALLER);
	return p;
}

AGENT_EXPORT void *calloc(size_t n, size_t size)
{
	if (UNLIKELY(!ready())) {
		size_t bytes;
		if (__builtin_mul_overflow(n, size, &bytes))
			return NULL;
		return arena_alloc(bytes, 16); /* static memory is zeroed */
	}
	void *p = REAL(calloc)(n, size);
	if (p && recording(&agent_self, n * size))
		alloc_seen(&agent_self, p, n * size, TR_HEAP_CALLOC, 0, CALLER);
	return p;
}

AGENT_EXPORT void free(void *p)
{
	if (UNLIKELY(!p || in_arena(p)))
		return;
	if (UNLIKELY(!ready()))
		return; /* cannot happen: p came from somewhere */
	struct agent_thread *self = &agent_self;
	if (alloc_recording(self))
		free_seen(self, p, 0);
	REAL(free)(p);
}

AGENT_EXPORT void *realloc(void *p, size_t size)
{
	if (UNLIKELY(in_arena(p) || !ready())) {
		void *q = ready() ? malloc(size) : arena_alloc(size, 16);
		if (q && p) {
			size_t old = arena_size(p);
			memcpy(q, p, old < size ? old : size);
		}
		return q;
	}
	struct agent_thread *self = &agent_self;
	if (!recording(self, size))
		return REAL(realloc)(p, size);
	int freed = p && free_seen(self, p, TR_HEAP_BY_REALLOC);
	void *q = REAL(realloc)(p, size);
	if (q)
		alloc_seen(self, q, size, TR_HEAP_REALLOC, p && q != p ? TR_HEAP_MOVED : 0, CALLER);
	else if (freed && size)
		record_restored(p, TR_HEAP_REALLOC, CALLER); /* failed: p lives on */
	return q;
}

AGENT_EXPORT void *reallocarray(void *p, size_t n, size_t size)
{
	size_t bytes;
	if (__builtin_mul_overflow(n, size, &bytes)) {
		errno = ENOMEM;
		return NULL;
	}
	if (UNLIKELY(in_arena(p) || !ready()))
		return realloc(p, bytes);
	/* glibc's reallocarray calls realloc through the PLT, which would be this
	 * agent's realloc: the real realloc instead, so the call counts once. */
	struct agent_thread *self = &agent_self;
	if (!recording(self, bytes))
		return REAL(realloc)(p, bytes);
	int freed = p && free_seen(self, p, TR_HEAP_BY_REALLOC);
	void *q = REAL(realloc)(p, bytes);
	if (q)
		alloc_seen(self, q, bytes, TR_HEAP_REALLOCARRAY, p && q != p ? TR_HEAP_MOVED : 0, CALLER);
	else if (freed && bytes)
		record_restored(p, TR_HEAP_REALLOCARRAY, CALLER);
	return q;
}

AGENT_EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
	if (UNLIKELY(!ready())) {
		*out = arena_alloc(size, align);
		return *out ? 0 : ENOMEM;
	}
	int rc = REAL(posix_memalign)(out, align, size);
	if (rc == 0 && *out && recording(&agent_self, size))
		alloc_seen(&agent_self, *out, size, TR_HEAP_POSIX_MEMALIGN, 0, CALLER);
	return rc;
}

#define ALIGNED_HOOK(name, KIND)                                                \
	AGENT_EXPORT void *name(size_t align, size_t size)                     \
	{                                                                       \
		if (UNLIKELY(!ready()))                                         \
			return arena_alloc(size, align);                        \
		void *p = REAL(name)(align, size);                              \
		if (p && recording(&agent_self, size))                          \
			alloc_seen(&agent_self, p, size, KIND, 0, CALLER);      \
		return p;                                                       \
	}
ALIGNED_HOOK(aligned_alloc, TR_HEAP_ALIGNED_ALLOC)
ALIGNED_HOOK(memalign, TR_HEAP_MEMALIGN)

AGENT_EXPORT void *valloc(size_t size)
{
	if (UNLIKELY(!ready()))
		return arena_alloc(size, 4096);
	void *p = REAL(valloc)(size);
	if (p && recording(&agent_self, size))
		alloc_seen(&agent_self, p, size, TR_HEAP_VALLOC, 0, CALLER);
	return p;
}

AGENT_EXPORT void *pvalloc(size_t size)
{
	if (UNLIKELY(!ready()))
		return arena_alloc(size, 4096);
	void *p = REAL(pvalloc)(size);
	if (p && recording(&agent_self, size))
		alloc_seen(&agent_self, p, size, TR_HEAP_PVALLOC, 0, CALLER);
	return p;
}

/* ---- set-up ---- */

/* The hooks themselves, not what the program's symbols resolve to (allocations.h). */
#define HOOK_ALIAS(name) \
	extern __typeof__(name) agent_hook_##name __attribute__((alias(#name), copy(name), visibility("hidden")));
AGENT_MALLOC_FAMILY(HOOK_ALIAS)
#undef HOOK_ALIAS

/* Between fork's prepare and parent/child handlers the forking thread records nothing: counted
 * in internal, so a hook tests one flag for both. */
static AGENT_TLS __thread volatile sig_atomic_t forking;

static void fork_prepare(void)
{
	forking = 1;
	agent_self.internal++;
}

static void fork_parent(void)
{
	if (forking) {
		forking = 0;
		agent_self.internal--;
	}
}

int alloc_init(void)
{
	struct transport_header *h = agent_transport.header;
	/* Every process of the tree that attached (a fork child starts anew in alloc_start): each
	 * image numbers its own events (alloc_record.c's seq), collect orders them per image. */
	if (!(h->mode & TRANSPORT_MODE_ALLOCS))
		return 0;
	ready();
	void *found = dlsym(RTLD_DEFAULT, "malloc");
	/* The first process alone speaks for the run in the header (collect's message names it). */
	if (found && found != (void *)&agent_hook_malloc && h->pid == (uint32_t)getpid()) {
		Dl_info info;
		const char *where = dladdr(found, &info) && info.dli_fname && *info.dli_fname ? info.dli_fname
											     : "the program";
		size_t len = strlen(where);
		if (len > 180)
			where += len - 180;
		strcpy(h->agent_error, "malloc is defined by ");
		strcat(h->agent_error, where);
		atomic_store(&h->allocator_elsewhere, 1);
	}
	atomic_fetch_add(&h->allocs_unrecorded, atomic_exchange(&unrecorded_allocs, 0));
	atomic_fetch_add(&h->alloc_bytes_unrecorded, atomic_exchange(&unrecorded_bytes, 0));
	alloc_state.scheme = h->alloc_scheme;
	alloc_state.sampled = h->alloc_scheme != TRANSPORT_ALLOC_ALL;
	alloc_state.by_bytes = h->alloc_scheme == TRANSPORT_ALLOC_BYTES;
	/* RATE = threshold / 2^64, what a 64-bit draw below the threshold used to choose with */
	alloc_state.choice.by_bytes = alloc_state.by_bytes;
	alloc_state.choice.log_keep = choice_log1p(-(double)h->alloc_threshold * (1.0 / 18446744073709551616.0));
	alloc_state.choice.mean_bytes = h->alloc_mean_bytes ? (double)h->alloc_mean_bytes : 1;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	alloc_state.start_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	pthread_atfork(fork_prepare, fork_parent, NULL);
	alloc_state.wanted = 1;
	return 0;
}

/*
 * Allocators that are libraries (jemalloc, mimalloc, tcmalloc) replace
 * malloc and its family when a program links them (allocator_elsewhere, in
 * alloc_init); loaded beside libc's, they also offer calls of their own that
 * no hook sees: what a program allocates through those is not recorded, and
 * collect says so, naming the first such API and its library.
 */
void alloc_check_apis(void *scope)
{
	static const char *const apis[] = { "mallocx", "mi_malloc", "tc_malloc" };
	struct transport_header *h = agent_transport.header;
	if (!h || atomic_load(&h->allocator_api))
		return;
	sigset_t old;
	agent_internal_begin(&old); /* dlsym of a name not found allocates its error: the agent's */
	for (size_t i = 0; i < sizeof apis / sizeof *apis; i++) {
		void *found = dlsym(scope, apis[i]);
		Dl_info info;
		if (!found || !dladdr(found, &info) || !info.dli_fname || atomic_exchange(&h->allocator_api, 1))
			continue;
		const char *where = info.dli_fname;
		size_t len = strlen(where), room = sizeof h->allocator_api_text - strlen(apis[i]) - 5;
		if (len > room)
			where += len - room;
		snprintf(h->allocator_api_text, sizeof h->allocator_api_text, "%s in %s", apis[i], where);
		break;
	}
	agent_internal_end(&old);
}

void alloc_start(void)
{
	agent_flags->alloc_on = alloc_state.wanted;
}

int alloc_enabled(void)
{
	return agent_flags->alloc_on;
}

/* The child's copy of the parent's figures: its own events count from 1, its choices are its own. */
void alloc_forget(void)
{
	agent_flags->alloc_on = 0;
	fork_parent(); /* the child's copy of the forking state, undone as in the parent */
	record_forget();
	agent_self.last_alloc = 0;
	agent_self.countdown = 0;
	live_forget();
}
