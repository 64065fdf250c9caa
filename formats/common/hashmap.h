/*
 * hashmap.h - the one hash table of analyze and the profile library:
 * open addressing, linear probing, load factor <= 1/2, slots of a 64-bit key
 * and a 32-bit value. Two ways to use a map (one per map, never mixed):
 *
 *  - keyed: the key is the whole key (an address, a trace stack id, a
 *    (parent, frame) tree edge packed in 64 bits): hashmap_get, hashmap_slot;
 *  - by hash: the key is a 64-bit hash of a row that lives in the caller's
 *    table (a function, a frame, a stack, a string) and the value is the
 *    row's id; equal hashes are told apart by the caller's eq():
 *    hashmap_find, hashmap_insert.
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

/* A well-spread hash of n bytes (names, paths). */
uint64_t hash_bytes(const void *data, size_t n);

struct hashmap_slot {
	uint64_t key;
	uint32_t value; /* HASHMAP_NONE: empty */
};

struct hashmap {
	struct hashmap_slot *slots;
	uint64_t mask;
	uint64_t used;
};

/* Empty map sized for about expected entries (it grows as needed). */
void hashmap_init(struct hashmap *m, uint64_t expected);
void hashmap_free(struct hashmap *m);
/* Empty m, keeping its slots: refilling it then costs no new memory. */
void hashmap_clear(struct hashmap *m);

/* Keyed: the value of key, or HASHMAP_NONE. */
uint32_t hashmap_get(const struct hashmap *m, uint64_t key);
/*
 * Keyed: pointer to key's value, inserting it with value HASHMAP_NONE if
 * absent (the caller stores the value). Valid until the next insertion.
 */
uint32_t *hashmap_slot(struct hashmap *m, uint64_t key);

/* By hash: does row id equal the key being sought (ctx says which)? */
typedef int (*hashmap_eq)(const void *ctx, uint32_t id);
/* By hash: the id under hash for which eq holds, or HASHMAP_NONE. */
uint32_t hashmap_find(const struct hashmap *m, uint64_t hash, hashmap_eq eq, const void *ctx);
/* By hash: add row id under hash (the caller has checked it is not there). */
void hashmap_insert(struct hashmap *m, uint64_t hash, uint32_t id);

#endif
