/*
 * load_allocs_internal.h - what the allocation consumer's two halves share:
 * load_allocs.c (events matched in one pass) and load_alloc_rows.c (the
 * profile's rows once the stacks are resolved). Not for other files.
 */
#ifndef IPSCOPE_LOAD_ALLOCS_INTERNAL_H
#define IPSCOPE_LOAD_ALLOCS_INTERNAL_H

#include "load_internal.h"

#include "hashmap.h"
#include "load_alloc_live.h"

#define SITE_SIZES 4
#define MAX_BINS 256u
#define LIVE_PREFETCH 16
#define FIRST_BIN_NS 1000000ull
#define CLASS_BIT ALLOC_SIZE_CLASS
#define HOT_BITS 10
#define DENSE_SITE_IDS (1u << 20) /* a site by stack id in an array below this */
#define HOT_SLOTS (1u << HOT_BITS)

/* On a hot loop that GCC's SLP vectorizer slows down: it packed pairs of the
 * running figures into vector registers and shuffled them at every event
 * (bench/README.md, "analyze: reading traces"). Other compilers take the loop
 * as it is. */
#if defined(__GNUC__) && !defined(__clang__)
#define NO_SLP_VECTORIZE __attribute__((optimize("no-tree-slp-vectorize")))
#else
#define NO_SLP_VECTORIZE
#endif

enum { V_ALLOC_O, V_ALLOC_B, V_INUSE_O, V_INUSE_B, V_PEAK_O, V_PEAK_B, V_TEMP_O, V_TEMP_B, NV };

struct site {
	uint32_t stack, kind;
	uint64_t sizes[SITE_SIZES];
	uint32_t nsizes;
	int ranged;
};

struct key {
	uint32_t site, thread;
	uint64_t size_key; /* the exact size, or CLASS_BIT | k for [2^k, 2^(k+1)) */
	uint64_t changed_seq; /* the event count at its latest live change */
	uint32_t heap; /* the program image it was allocated in */
	double v[NV];
};

/* A recent key by its site, thread and size key (see key_of_event). */
struct hot {
	uint64_t size_key;
	uint32_t site, thread, key; /* key HASHMAP_NONE: empty */
	uint32_t heap;
};

/* The site of a stack for the kind seen last with it, and the key of its
 * latest allocation: the next one of the same size, thread and heap has it
 * too while no site became ranged since (epoch). */
struct stack_site {
	uint32_t kind, site; /* site HASHMAP_NONE: none yet */
	uint32_t thread, heap, key, epoch; /* key HASHMAP_NONE: none */
	uint64_t size;
};

struct row {
	uint32_t key, bin;
	double v[6]; /* alloc, inuse and temporary: the first six of V_* but peak's */
};

/* realloc's free of a block, kept per thread in case the realloc failed (RESTORED). */
struct undo {
	uint64_t address, size;
	uint32_t key;
	int valid;
};

/* One program image's heap: its live blocks and figures. */
struct heap {
	struct live_table live;
	double live_o, live_b, peak_o, peak_b;
	uint64_t peak_seq, peak_time; /* the event count and time of its highest live heap */
	uint32_t pid;
	/* The size and site (stack and function) of its latest event if that was an allocation
	 * (heaptrack's temporaries). */
	int last_valid;
	uint32_t last_site;
	uint64_t last_size;
};

struct allocs_state {
	int seen;
	uint32_t scheme; /* PROFILE_ALLOCS_ALL, _RATE or _BYTES */
	double rate, mean;
	int scale;
	struct site *sites;
	uint32_t nsites, sites_cap;
	struct hashmap site_index;
	struct key *keys;
	uint32_t nkeys, keys_cap;
	struct hashmap key_index;
	struct heap *heaps;
	uint32_t nheaps, heaps_cap;
	struct hashmap heap_index; /* pid << 32 | image -> heaps[] */
	uint32_t cur; /* the heap of the record being read */
	uint64_t events; /* events so far: the order live changes and peaks are compared in */
	struct hot hot[HOT_SLOTS];
	struct stack_site *stack_site; /* by trace stack id */
	uint32_t stack_site_cap;
	uint32_t ranged_epoch; /* sites that became ranged so far */
	struct row *rows;
	uint32_t nrows, rows_cap;
	struct hashmap row_index;
	uint64_t t0, bin_ns;
	struct undo *undo;
	uint32_t undo_cap;
	double allocs, alloc_bytes, frees, freed_bytes, temp, temp_bytes;
	uint64_t unmatched, repeated;
};

static inline int floor_log2(uint64_t x)
{
	return x ? 63 - __builtin_clzll(x) : 0;
}

/* The key of allocation event e of thread (an index of the loader's threads) in
 * heap st->cur, made when first seen (load_alloc_keys.c). */
uint32_t allocs_key_of_event(struct loader *L, struct allocs_state *st, uint32_t thread,
			     const struct trace_heap_event *e);
/* Keys that did not change after their heap's last peak take their live figures then (the end of the pass). */
void allocs_finish(struct loader *L, void *state);
/* The load_stats figures and one profile sample per key (or per key and time bin). */
void allocs_resolved(struct loader *L, void *state);

#endif
