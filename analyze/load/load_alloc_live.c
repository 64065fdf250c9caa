/*
 * load_alloc_live.c - the allocation consumer's table of live blocks: every
 * allocation puts its block, every free takes it (load_allocs.c), so this is
 * the one structure touched at every event, and memory goes with the blocks
 * live, never with the events.
 *
 * Two parts. Blocks of ALLOCS_IDS traces (1.5) are identities whose low bits
 * count the process's allocations up (TRACE_FORMAT.md): they go first to the
 * recent array, at identity % recent_cap, so consecutive allocations fill
 * consecutive slots and the frees of young blocks (most of them) find theirs
 * in lines just used. A block that finds its slot taken by an older one takes
 * it, and the older one moves to the hash part; a look-up that misses in the
 * array asks the hash part. The array doubles (pulling back the blocks whose
 * new slot is free) when the hash part holds more than an eighth as many
 * blocks as the array has slots (a block there costs a random line when it
 * moves and when it is freed, where a slot of a larger array costs one at
 * most) and more than half its slots are taken: blocks outlive a lap of the
 * array, which a larger one would hold. Old blocks alone (a program's
 * long-lived data) in a mostly empty array stay in the hash part: doubling
 * for them cost sixteen slots per block there and bought nothing (lua5.4
 * binary-trees 16, 800,000 blocks live at its peak: an array of 2^21 slots,
 * 32 MiB, against 2^20 now, no slower: bench/README.md, "Allocation
 * profiling"). Hashing each identity into one table put every event at a
 * random line of a table larger than the cache (lua5.4's binary trees: 1 MiB
 * for 39000 live blocks).
 *
 * Everything else (addresses of 1.3 traces) goes to the hash part only:
 * open addressing with linear probing, 16-byte slots, Fibonacci hashing (one
 * multiply, the top bits: blocks are 16-byte aligned), at most three
 * quarters full, backward-shift deletion (no tombstones).
 *
 * Which part holds a block never changes what the table answers: a block is
 * in the array when its slot there holds it, else in the hash part or not
 * live. Sizes of 4 GiB and more live beside the table, in big.
 */
#include "load_alloc_live.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "alloc.h"

#define RECENT_FIRST 4096u
#define RECENT_MAX (1ull << 30)
#define HASH_FIRST 4096u

/* A zeroed table, every page touched: a prefetch into a page never touched
 * costs as much as the miss it was to hide. From 2 MiB on in huge pages where
 * the kernel has them (every event may miss the cache on it: TLB misses cost
 * as much again). */
static struct live *table_alloc(uint64_t n)
{
	size_t bytes = (size_t)n * sizeof(struct live);
	void *p = NULL;
	if (bytes < (2u << 20))
		return calloc_or_abort(1, bytes);
	if (posix_memalign(&p, 2u << 20, bytes))
		abort_out_of_memory();
	madvise(p, bytes, MADV_HUGEPAGE);
	memset(p, 0, bytes);
	return p;
}

void live_init(struct live_table *t)
{
	memset(t, 0, sizeof(*t));
	hashmap_init(&t->big_index, 16);
}

void live_free(struct live_table *t)
{
	free(t->recent);
	free(t->hash);
	free(t->big);
	hashmap_free(&t->big_index);
	memset(t, 0, sizeof(*t));
}

/* ---- the hash part ---- */

static inline uint64_t hash_home(const struct live_table *t, uint64_t block)
{
	return (block * 0x9e3779b97f4a7c15ull) >> t->hash_shift;
}

/* Block's slot, or the empty slot where it would go; NULL while there is no table. */
static struct live *hash_find(const struct live_table *t, uint64_t block)
{
	if (!t->hash_cap)
		return NULL;
	for (uint64_t i = hash_home(t, block);; i = (i + 1) & (t->hash_cap - 1)) {
		struct live *e = &t->hash[i];
		if (!e->block || e->block == block)
			return e;
	}
}

static void hash_grow(struct live_table *t)
{
	struct live *old = t->hash;
	uint64_t old_cap = t->hash_cap;
	t->hash_cap = old_cap ? 2 * old_cap : HASH_FIRST;
	t->hash_shift = 64 - __builtin_ctzll(t->hash_cap);
	t->hash = table_alloc(t->hash_cap);
	for (uint64_t i = 0; i < old_cap; i++)
		if (old[i].block)
			*hash_find(t, old[i].block) = old[i];
	free(old);
}

/* Add e, whose block is not in the hash part. */
static void hash_add(struct live_table *t, const struct live *e)
{
	if ((t->nhash + 1) * 4 > t->hash_cap * 3)
		hash_grow(t);
	*hash_find(t, e->block) = *e;
	t->nhash++;
}

static void hash_remove(struct live_table *t, struct live *e)
{
	uint64_t mask = t->hash_cap - 1, i = (uint64_t)(e - t->hash);
	for (uint64_t j = (i + 1) & mask; t->hash[j].block; j = (j + 1) & mask) {
		uint64_t home = hash_home(t, t->hash[j].block);
		if (((j - home) & mask) >= ((j - i) & mask)) {
			t->hash[i] = t->hash[j];
			i = j;
		}
	}
	t->hash[i].block = 0;
	t->nhash--;
}

/* ---- the recent array ---- */

/* Twice the slots: the array's blocks keep theirs (by one more bit), and the
 * hash part's identities whose new slot is free move there. */
static void recent_grow(struct live_table *t)
{
	uint64_t cap = t->recent_cap ? 2 * t->recent_cap : RECENT_FIRST;
	struct live *recent = table_alloc(cap);
	for (uint64_t i = 0; i < t->recent_cap; i++)
		if (t->recent[i].block)
			recent[t->recent[i].block & (cap - 1)] = t->recent[i];
	free(t->recent);
	t->recent = recent;
	t->recent_cap = cap;
	/* The hash part is rebuilt at its own size: inserted in the old table's
	 * order into a smaller one that grows, they would pile up at its first
	 * slots (sorted homes), quadratic in linear probing (bench/README.md,
	 * "analyze: reading traces"). Fewer blocks stay, so it never has to grow. */
	struct live *old = t->hash;
	uint64_t old_cap = t->hash_cap;
	t->hash = old_cap ? table_alloc(old_cap) : NULL;
	t->nhash = 0;
	for (uint64_t i = 0; i < old_cap; i++) {
		struct live *e = &old[i];
		if (!e->block)
			continue;
		struct live *r = &recent[e->block & (cap - 1)];
		if (live_is_identity(e->block) && !r->block) {
			*r = *e;
			t->nrecent++;
		} else {
			hash_add(t, e);
		}
	}
	free(old);
}

/* Block's slot in the recent array (identities only), NULL for other blocks. */
static inline struct live *recent_slot(const struct live_table *t, uint64_t block)
{
	return live_is_identity(block) && t->recent_cap ? &t->recent[block & (t->recent_cap - 1)] : NULL;
}

/* ---- the table ---- */

static uint64_t size_of(const struct live_table *t, const struct live *e)
{
	if (e->size != LIVE_BIG)
		return e->size;
	uint32_t id = hashmap_get(&t->big_index, e->block);
	return id == HASHMAP_NONE ? LIVE_BIG : t->big[id];
}

/* Fill e with block, key and size (a size too large for the slot goes to big). */
static void set(struct live_table *t, struct live *e, uint64_t block, uint32_t key, uint64_t size)
{
	*e = (struct live){ block, key, size < LIVE_BIG ? (uint32_t)size : LIVE_BIG };
	if (size >= LIVE_BIG) {
		uint32_t *id = hashmap_slot(&t->big_index, block);
		if (*id == HASHMAP_NONE) {
			ALLOC_GROW(t->big, (uint64_t)t->nbig + 1, t->big_cap);
			*id = t->nbig++;
		}
		t->big[*id] = size;
	}
}

int live_put_slow(struct live_table *t, uint64_t block, uint32_t key, uint64_t size, uint32_t *old_key,
		  uint64_t *old_size)
{
	if (!block) /* no block (0 marks an empty slot): never live */
		return 0;
	if (live_is_identity(block) && !t->recent_cap)
		recent_grow(t);
	struct live *r = recent_slot(t, block), *e;
	if (r && r->block == block) {
		*old_key = r->key;
		*old_size = size_of(t, r);
		set(t, r, block, key, size);
		return 1;
	}
	int unseen = block > t->highest; /* no block above the highest put is live */
	if (unseen)
		t->highest = block;
	if (!unseen && t->nhash && (e = hash_find(t, block))->block) {
		*old_key = e->key;
		*old_size = size_of(t, e);
		set(t, e, block, key, size);
		return 1;
	}
	if (!r) {
		if ((t->nhash + 1) * 4 > t->hash_cap * 3)
			hash_grow(t);
		set(t, hash_find(t, block), block, key, size);
		t->nhash++;
		return 0;
	}
	if (r->block) {
		hash_add(t, r); /* the older block moves out of the way */
		t->nrecent--;
	}
	set(t, r, block, key, size);
	t->nrecent++;
	if (t->nhash * 8 > t->recent_cap && t->nrecent * 2 > t->recent_cap && t->recent_cap < RECENT_MAX)
		recent_grow(t);
	return 0;
}

int live_take_slow(struct live_table *t, uint64_t block, uint32_t *key, uint64_t *size)
{
	struct live *r = recent_slot(t, block), *e;
	if (r && r->block == block) {
		*key = r->key;
		*size = size_of(t, r);
		r->block = 0;
		t->nrecent--;
		return 1;
	}
	if (!t->nhash || !block || !(e = hash_find(t, block))->block)
		return 0;
	*key = e->key;
	*size = size_of(t, e);
	hash_remove(t, e);
	return 1;
}

int live_has(const struct live_table *t, uint64_t block)
{
	const struct live *r = recent_slot(t, block), *e;
	if (r && r->block == block)
		return block != 0;
	return t->nhash && block && (e = hash_find(t, block))->block;
}
