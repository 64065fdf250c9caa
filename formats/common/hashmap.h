/*
 * hashmap.h - the two hash tables analyze's hot loops need, so no file grows
 * its own: u64map (64-bit key -> 32-bit value: addresses, trace stack ids,
 * (parent, frame) tree edges) and idmap (a set of table row ids looked up by
 * a caller-defined key: functions, frames, stacks).
 *
 * Both are open addressing with linear probing at load factor <= 1/2.
 */
#ifndef IPSCOPE_HASHMAP_H
#define IPSCOPE_HASHMAP_H

#include <stddef.h>
#include <stdint.h>

#define HASHMAP_NONE UINT32_MAX

/* Mix a 64-bit value into a well-spread hash (splitmix64 finalizer). */
static inline uint64_t hash_u64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

/* Fold one more value into a running hash. */
static inline uint64_t hash_combine(uint64_t h, uint64_t v)
{
	return hash_u64(h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2)));
}

struct u64map_slot {
	uint64_t key;
	uint32_t value; /* HASHMAP_NONE: empty */
};

struct u64map {
	struct u64map_slot *slots;
	uint64_t mask;
	uint64_t used;
};

void u64map_init(struct u64map *m, uint64_t expected);
void u64map_free(struct u64map *m);
/* Value of key, or HASHMAP_NONE. */
uint32_t u64map_get(const struct u64map *m, uint64_t key);
/*
 * Pointer to key's value, inserting it with value HASHMAP_NONE if absent:
 * the caller stores the value. The pointer is valid until the next call.
 */
uint32_t *u64map_slot(struct u64map *m, uint64_t key);

/*
 * idmap: the keys live in the caller's table; the map only holds row ids and
 * their hashes. eq(ctx, id) answers whether row id equals the key sought.
 */
typedef int (*idmap_eq)(const void *ctx, uint32_t id);

struct idmap_slot {
	uint32_t hash;
	uint32_t id; /* HASHMAP_NONE: empty */
};

struct idmap {
	struct idmap_slot *slots;
	uint32_t mask;
	uint32_t used;
};

void idmap_init(struct idmap *m, uint32_t expected);
void idmap_free(struct idmap *m);
/* The row id whose key matches, or HASHMAP_NONE. */
uint32_t idmap_find(const struct idmap *m, uint64_t hash, idmap_eq eq, const void *ctx);
/* Add row id under hash (the caller has checked it is not there yet). */
void idmap_insert(struct idmap *m, uint64_t hash, uint32_t id);

#endif
