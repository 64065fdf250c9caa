/*
 * load_alloc_live.h - the allocation consumer's table of live blocks
 * (load_allocs.c): a block (its address, or its ALLOCS_IDS identity) -> the
 * key it was allocated under and its size. See load_alloc_live.c.
 */
#ifndef IPSCOPE_LOAD_ALLOC_LIVE_H
#define IPSCOPE_LOAD_ALLOC_LIVE_H

#include <stdint.h>

#include "hashmap.h"
#include "trace.h"

#define LIVE_BIG UINT32_MAX /* a slot's size: at least that, the size is in big (by block) */

/* 16 bytes, four to a cache line. */
struct live {
	uint64_t block; /* 0: empty */
	uint32_t key;
	uint32_t size; /* LIVE_BIG: see big */
};

struct live_table {
	struct live *recent; /* identities by their low bits (see load_alloc_live.c) */
	uint64_t recent_cap, nrecent;
	uint64_t highest; /* the highest block ever put: none above it is live */
	struct live *hash; /* the other blocks: open addressing, Fibonacci hashing */
	uint64_t hash_cap, nhash;
	int hash_shift; /* 64 - log2(hash_cap) */
	struct hashmap big_index; /* block -> its size in big, for sizes of LIVE_BIG and more */
	uint64_t *big;
	uint32_t nbig, big_cap;
};

/* An empty table. */
void live_init(struct live_table *t);
/* Free the table's memory; t is then empty. */
void live_free(struct live_table *t);
/* Live blocks in the table. */
static inline uint64_t live_count(const struct live_table *t)
{
	return t->nrecent + t->nhash;
}
/* live_put and live_take past their common cases (inline below). */
int live_put_slow(struct live_table *t, uint64_t block, uint32_t key, uint64_t size, uint32_t *old_key,
		  uint64_t *old_size);
int live_take_slow(struct live_table *t, uint64_t block, uint32_t *key, uint64_t *size);
/* Whether block is live. */
int live_has(const struct live_table *t, uint64_t block);

/* Identities (bit 63: TRACE_FORMAT.md, ALLOCS_IDS) go to the recent array by their low bits. */
static inline int live_is_identity(uint64_t block)
{
	return (int)(block >> 63);
}

/*
 * Block (nonzero) is live now with key and size: 1 and the block it
 * replaced's key and size when it was live already, else 0. Inline for its
 * common case, an identity above every block so far (a new one: nothing to
 * look up) whose slot is free.
 */
static inline int live_put(struct live_table *t, uint64_t block, uint32_t key, uint64_t size, uint32_t *old_key,
			   uint64_t *old_size)
{
	if (live_is_identity(block) && block > t->highest && t->recent_cap && size < LIVE_BIG) {
		struct live *r = &t->recent[block & (t->recent_cap - 1)];
		if (!r->block) {
			*r = (struct live){ block, key, (uint32_t)size };
			t->nrecent++;
			t->highest = block;
			return 0;
		}
	}
	return live_put_slow(t, block, key, size, old_key, old_size);
}

/* 1 and block's key and size when it is live (it is no longer), else 0. Inline for a block in its recent slot. */
static inline int live_take(struct live_table *t, uint64_t block, uint32_t *key, uint64_t *size)
{
	if (live_is_identity(block) && t->recent_cap) {
		struct live *r = &t->recent[block & (t->recent_cap - 1)];
		if (r->block == block && r->size != LIVE_BIG) {
			*key = r->key;
			*size = r->size;
			r->block = 0;
			t->nrecent--;
			return 1;
		}
	}
	return live_take_slow(t, block, key, size);
}

/* Bring block's first slot into the cache ahead of its look-up (a hint only). */
static inline void live_prefetch(const struct live_table *t, uint64_t block)
{
	if (live_is_identity(block) && t->recent_cap)
		__builtin_prefetch(&t->recent[block & (t->recent_cap - 1)]);
	else if (t->hash_cap)
		__builtin_prefetch(&t->hash[(block * 0x9e3779b97f4a7c15ull) >> t->hash_shift]);
}

/* live_prefetch of the blocks of events [from, to). */
static inline void live_prefetch_events(const struct live_table *t, const struct trace_heap_event *e, uint32_t from,
					uint32_t to)
{
	const struct live *recent = t->recent, *hash = t->hash;
	uint64_t mask = t->recent_cap - 1;
	int shift = t->hash_shift;
	for (uint32_t j = from; j < to; j++) {
		uint64_t block = e[j].address;
		if (live_is_identity(block) && recent)
			__builtin_prefetch(&recent[block & mask]);
		else if (hash)
			__builtin_prefetch(&hash[(block * 0x9e3779b97f4a7c15ull) >> shift]);
	}
}

#endif
