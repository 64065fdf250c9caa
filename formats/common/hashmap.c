/*
 * hashmap.c - the one hash table (see hashmap.h).
 */
#include "hashmap.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"

uint64_t hash_bytes(const void *data, size_t n)
{
	/* 64-bit multiply-mix over 8-byte words: a few ns per name. */
	const unsigned char *s = data;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ (n * 0xff51afd7ed558ccdull);
	while (n >= 8) {
		uint64_t w;
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
		h ^= h >> 31;
		s += 8;
		n -= 8;
	}
	uint64_t w = 0;
	memcpy(&w, s, n);
	h = (h ^ w) * 0x94d049bb133111ebull;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	return h;
}

static struct hashmap_slot *alloc_slots(uint64_t n)
{
	if (n > SIZE_MAX / sizeof(struct hashmap_slot))
		abort_out_of_memory();
	struct hashmap_slot *s = realloc_or_abort(NULL, n * sizeof(*s));
	for (uint64_t i = 0; i < n; i++)
		s[i].value = HASHMAP_NONE;
	return s;
}

void hashmap_init(struct hashmap *m, uint64_t expected)
{
	uint64_t n = 16;
	while (n < expected * 2)
		n *= 2;
	m->slots = alloc_slots(n);
	m->mask = n - 1;
	m->used = 0;
}

void hashmap_clear(struct hashmap *m)
{
	for (uint64_t i = 0; i <= m->mask; i++)
		m->slots[i].value = HASHMAP_NONE;
	m->used = 0;
}

void hashmap_free(struct hashmap *m)
{
	free(m->slots);
	m->slots = NULL;
}

/* Where a key's probe starts: keyed maps hash the key, by-hash maps use it as is. */
static uint64_t start_of(const struct hashmap *m, uint64_t key, int keyed)
{
	return (keyed ? hash_u64(key) : key) & m->mask;
}

/* Double the table; keyed says how entries' probes start. */
static void grow(struct hashmap *m, int keyed)
{
	struct hashmap old = *m;
	uint64_t n = (old.mask + 1) * 2;
	m->slots = alloc_slots(n);
	m->mask = n - 1;
	for (uint64_t i = 0; i <= old.mask; i++) {
		if (old.slots[i].value == HASHMAP_NONE)
			continue;
		uint64_t j = start_of(m, old.slots[i].key, keyed);
		while (m->slots[j].value != HASHMAP_NONE)
			j = (j + 1) & m->mask;
		m->slots[j] = old.slots[i];
	}
	free(old.slots);
}

uint32_t hashmap_get(const struct hashmap *m, uint64_t key)
{
	for (uint64_t j = start_of(m, key, 1);; j = (j + 1) & m->mask) {
		const struct hashmap_slot *s = &m->slots[j];
		if (s->value == HASHMAP_NONE || s->key == key)
			return s->value;
	}
}

uint32_t *hashmap_slot(struct hashmap *m, uint64_t key)
{
	uint64_t j = start_of(m, key, 1);
	for (;; j = (j + 1) & m->mask) {
		struct hashmap_slot *s = &m->slots[j];
		if (s->value == HASHMAP_NONE)
			break;
		if (s->key == key)
			return &s->value;
	}
	/* Absent: the caller fills the value in, so count it as used now;
	 * grow first when that would pass half full, then find the new slot. */
	if ((m->used + 1) * 2 > m->mask + 1) {
		grow(m, 1);
		j = start_of(m, key, 1);
		while (m->slots[j].value != HASHMAP_NONE)
			j = (j + 1) & m->mask;
	}
	m->used++;
	m->slots[j].key = key;
	return &m->slots[j].value;
}

uint32_t hashmap_find(const struct hashmap *m, uint64_t hash, hashmap_eq eq, const void *ctx)
{
	for (uint64_t j = start_of(m, hash, 0);; j = (j + 1) & m->mask) {
		const struct hashmap_slot *s = &m->slots[j];
		if (s->value == HASHMAP_NONE)
			return HASHMAP_NONE;
		if (s->key == hash && eq(ctx, s->value))
			return s->value;
	}
}

void hashmap_insert(struct hashmap *m, uint64_t hash, uint32_t id)
{
	if ((m->used + 1) * 2 > m->mask + 1)
		grow(m, 0);
	uint64_t j = start_of(m, hash, 0);
	while (m->slots[j].value != HASHMAP_NONE)
		j = (j + 1) & m->mask;
	m->slots[j].key = hash;
	m->slots[j].value = id;
	m->used++;
}
