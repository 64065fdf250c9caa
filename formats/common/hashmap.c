/*
 * hashmap.c - u64map and idmap (see hashmap.h).
 */
#include "hashmap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

static void *alloc_slots(uint64_t n, size_t size)
{
	void *p = realloc_or_abort(NULL, n * size);
	/* Every empty slot has value/id HASHMAP_NONE: all bits set. */
	memset(p, 0xff, n * size);
	return p;
}

static uint64_t slots_for(uint64_t expected)
{
	uint64_t n = 16;
	while (n < expected * 2)
		n *= 2;
	return n;
}

void u64map_init(struct u64map *m, uint64_t expected)
{
	uint64_t n = slots_for(expected);
	m->slots = alloc_slots(n, sizeof(*m->slots));
	m->mask = n - 1;
	m->used = 0;
}

void u64map_free(struct u64map *m)
{
	free(m->slots);
	m->slots = NULL;
}

uint32_t u64map_get(const struct u64map *m, uint64_t key)
{
	uint64_t j = hash_u64(key) & m->mask;
	for (;;) {
		const struct u64map_slot *s = &m->slots[j];
		if (s->value == HASHMAP_NONE || s->key == key)
			return s->value;
		j = (j + 1) & m->mask;
	}
}

static void u64map_grow(struct u64map *m)
{
	struct u64map old = *m;
	uint64_t n = (old.mask + 1) * 2;
	m->slots = alloc_slots(n, sizeof(*m->slots));
	m->mask = n - 1;
	for (uint64_t i = 0; i <= old.mask; i++) {
		if (old.slots[i].value == HASHMAP_NONE)
			continue;
		uint64_t j = hash_u64(old.slots[i].key) & m->mask;
		while (m->slots[j].value != HASHMAP_NONE)
			j = (j + 1) & m->mask;
		m->slots[j] = old.slots[i];
	}
	free(old.slots);
}

uint32_t *u64map_slot(struct u64map *m, uint64_t key)
{
	uint64_t j = hash_u64(key) & m->mask;
	for (;;) {
		struct u64map_slot *s = &m->slots[j];
		if (s->value == HASHMAP_NONE)
			break;
		if (s->key == key)
			return &s->value;
		j = (j + 1) & m->mask;
	}
	/*
	 * Absent: the caller will fill the value in, so count it as used now.
	 * Grow first when that would pass half full, then find the new slot.
	 */
	if ((m->used + 1) * 2 > m->mask + 1) {
		u64map_grow(m);
		j = hash_u64(key) & m->mask;
		while (m->slots[j].value != HASHMAP_NONE)
			j = (j + 1) & m->mask;
	}
	m->used++;
	m->slots[j].key = key;
	return &m->slots[j].value;
}

void idmap_init(struct idmap *m, uint32_t expected)
{
	uint64_t n = slots_for(expected);
	m->slots = alloc_slots(n, sizeof(*m->slots));
	m->mask = (uint32_t)(n - 1);
	m->used = 0;
}

void idmap_free(struct idmap *m)
{
	free(m->slots);
	m->slots = NULL;
}

/*
 * A slot keeps 32 bits of the key's hash, and the probe starts from those
 * same bits, so growing can re-place entries without asking for keys again.
 */
uint32_t idmap_find(const struct idmap *m, uint64_t hash, idmap_eq eq, const void *ctx)
{
	uint32_t h = (uint32_t)(hash ^ (hash >> 32));
	uint32_t j = h & m->mask;
	for (;;) {
		const struct idmap_slot *s = &m->slots[j];
		if (s->id == HASHMAP_NONE)
			return HASHMAP_NONE;
		if (s->hash == h && eq(ctx, s->id))
			return s->id;
		j = (j + 1) & m->mask;
	}
}

static void idmap_place(struct idmap_slot *slots, uint32_t mask, struct idmap_slot entry)
{
	uint32_t j = entry.hash & mask;
	while (slots[j].id != HASHMAP_NONE)
		j = (j + 1) & mask;
	slots[j] = entry;
}

void idmap_insert(struct idmap *m, uint64_t hash, uint32_t id)
{
	if ((uint64_t)(m->used + 1) * 2 > (uint64_t)m->mask + 1) {
		uint64_t n = ((uint64_t)m->mask + 1) * 2;
		if (n > (1ull << 32)) {
			fputs("ipscope: hash table overflow\n", stderr);
			abort();
		}
		struct idmap_slot *slots = alloc_slots(n, sizeof(*slots));
		for (uint64_t i = 0; i <= m->mask; i++)
			if (m->slots[i].id != HASHMAP_NONE)
				idmap_place(slots, (uint32_t)(n - 1), m->slots[i]);
		free(m->slots);
		m->slots = slots;
		m->mask = (uint32_t)(n - 1);
	}
	struct idmap_slot e = {.hash = (uint32_t)(hash ^ (hash >> 32)), .id = id};
	idmap_place(m->slots, m->mask, e);
	m->used++;
}
