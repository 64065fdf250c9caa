/*
 * load_internal.h - the loader's state and its record consumers, shared by
 * load.c (the driver: reading, dispatch, the run's META/THREAD/END and the
 * module records), load_samples.c (stacks, samples, losses and the checks of
 * what a trace cannot truthfully say), load_jit.c (JIT_MAP records) and
 * load_procs.c (PROCESS records) and load_stacks.c (raw stacks to profile
 * stacks through the resolver).
 *
 * Dispatch: load.c keeps a table from record type to consumer, each with
 * callbacks and a state of its own. Adding a record type (as ALLOCS and
 * PROCESS were) is one more consumer in that table: a start that makes its
 * state, a record callback for its types, and a finish that runs after the
 * last record (when the run's duration is known) and before stacks are
 * resolved. Consumers share the stack table (raw stacks by trace id) through
 * loader_stack_index().
 */
#ifndef IPSCOPE_LOAD_INTERNAL_H
#define IPSCOPE_LOAD_INTERNAL_H

#include <stdint.h>

#include "hashmap.h"
#include "load.h"
#include "profile.h"
#include "resolve.h"
#include "trace.h"

struct loader;

struct record_consumer {
	const char *name;
	const enum trace_type *types; /* the record types it takes, 0-terminated */
	void *(*start)(struct loader *L);
	void (*record)(struct loader *L, void *state, const struct trace_record *rec);
	void (*finish)(struct loader *L, void *state); /* may be NULL */
	/* After the stacks are built (profile stack i is raw stack i): samples
	 * that need resolved frames, such as allocations' leaves. May be NULL. */
	void (*resolved)(struct loader *L, void *state);
	void (*free)(void *state);                      /* may be NULL */
};

/* The consumers load.c dispatches to (load_samples.c, load_jit.c, load_allocs.c, load_procs.c). */
extern const struct record_consumer load_samples_consumer;
extern const struct record_consumer load_jit_consumer;
extern const struct record_consumer load_allocs_consumer;
extern const struct record_consumer load_procs_consumer;

/* load_alloc_leaves.c: the frames of allocation profiles (load_allocs.c). */
/* A size key of a power-of-two range [2^k, 2^(k+1)): ALLOC_SIZE_CLASS | k; else the exact size. */
#define ALLOC_SIZE_CLASS (1ull << 63)
/* Whether a function is the allocator's own, stripped at an allocation stack's leaf side (libc's
 * malloc family and internals, operator new/new[]/delete, their PLT stubs); *new_kind is set to
 * "new" or "new[]" for operator new. */
int alloc_allocator_function(const char *name, const char **new_kind);
/* The profile stack of an allocation of kind (TRACE_HEAP_*) and size_key at raw stack: its leaf
 * (unless no_leaves), then stack without the allocator's frames; memo (by stack and leaf) and
 * the scratch locs and cap are the caller's, shared across calls. */
uint32_t alloc_leaf_stack(struct profile *p, uint32_t stack, uint32_t kind, uint64_t size_key, int no_leaves,
			  struct hashmap *memo, uint32_t **locs, uint32_t *cap);
/* Names the agent's marker function "[ipscope: recording allocations]" and adds its CPU weight to
 * stats->hook_samples. */
void alloc_name_marker(struct profile *p, struct load_stats *stats);

struct raw_stack {
	uint64_t first; /* into loader.ips */
	uint32_t depth;
	uint32_t flags;   /* TRACE_STACK_* */
	uint32_t defined; /* a STACK record gave its frames */
	uint32_t pid;     /* the process of the first sample that used it */
	uint32_t used;    /* some sample used it */
};

struct loader {
	const char *path;
	struct profile *p;
	struct load_stats *stats; /* never NULL inside the loader */
	const struct load_options *o;
	const struct diag_sink *diag;
	struct resolver *resolver;
	uint32_t samples_value; /* the samples/count type CPU samples' weights go to */
	/*
	 * trace stack id -> raw stack index. collect numbers stacks 1, 2, 3...
	 * so small ids go through a plain array (one load per sample, not a
	 * hash probe); other ids through the map.
	 */
	uint32_t *stack_by_id;
	uint32_t stack_by_id_cap;
	struct hashmap stack_ids;
	struct raw_stack *raw;
	uint32_t nraw, raw_cap;
	uint64_t *ips;
	uint64_t nips, ips_cap;
	struct hashmap threads; /* pid << 32 | tid -> thread index */
	/* pid -> the number of its latest program image: a fork or an exec (PROCESS records,
	 * load_procs.c) starts a new one, whose allocations are its own (load_allocs.c). */
	struct hashmap images;
	uint32_t nimages;
	/* Samples of a few threads interleave: remember the last few. */
	uint64_t recent_thread_key[4];
	uint32_t recent_thread[4];
	uint32_t recent_next;
	uint64_t samples_read;  /* samples of SAMPLES records so far (for progress) */
	uint64_t last_time_ns;  /* latest time any record carried */
	uint64_t end_time_ns;   /* the END record's, 0 without one */
	uint64_t end_lost;      /* the END record's lost_samples */
	/* MODULE_UNLOAD times read so far, sorted: aggregated samples are never
	 * merged across one (load_samples.c), so each row lies in one epoch. */
	uint64_t *unloads_seen;
	uint32_t nunloads_seen, unloads_seen_cap;
	int many_pid_stacks;    /* some raw stack is used by samples of two processes */
	int saw_allocs;         /* pass 1 read an ALLOCS record (load_allocs.c) */
	uint32_t truncated_location; /* the [truncated] frame's location, UINT32_MAX until made */
	uint32_t exit_charge_location; /* the [thread exit: unsampled] leaf's, UINT32_MAX until made */
};

/* Thread index of (pid, tid), adding the thread if new. */
uint32_t loader_thread_index(struct loader *L, uint32_t pid, uint32_t tid);
/* Raw stack index of a trace stack id; a placeholder if not defined yet. */
uint32_t loader_stack_index(struct loader *L, uint32_t id);
/* Timer periods that fit in the run (duration / period + 1), or 0 when the
 * trace does not say enough (no END, no start, no interval) to bound them. */
uint64_t loader_periods_in_run(const struct loader *L);

/* Passes 2 and 3 (load_stacks.c): resolve the distinct addresses, build the stacks. */
void loader_build_stacks(struct loader *L);

#endif
