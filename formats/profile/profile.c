/*
 * profile.c - the profile data model's storage: growable tables and string
 * interning (see profile.h for the model itself), and the walks every report
 * and exporter shares: a stack as root-first frames, a thread's title.
 *
 * Interning is on the hot path of loading (every symbolized frame interns its
 * function and file names) and of every filter that rebuilds a profile, so it
 * is an open-addressing hash table of string ids with the full hash and length
 * kept beside each id: a probe rarely touches the string bytes. String bytes
 * live in large arena blocks, not one malloc per string.
 */
#include "profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

#define ARENA_BLOCK_SIZE (256u * 1024u)

struct arena_block {
	struct arena_block *next;
	size_t used;
	size_t size;
	char data[];
};

/* The string pointer sits in the slot so a hit costs one slot read and one
 * compare, not three dependent loads through the id. */
struct string_slot {
	uint32_t id; /* 0: empty (id 0, "", is never stored in the table) */
	uint32_t hash;
	const char *str;
};

struct string_index {
	struct string_slot *slots;
	uint32_t mask; /* slot count - 1, a power of two */
	uint32_t used;
	struct arena_block *arena;
};

/* Grow *table (of elem bytes each) so that index n fits; capacities double. */
static void *grow(void *table, uint64_t *cap, uint64_t n, size_t elem)
{
	if (n < *cap)
		return table;
	uint64_t c = *cap ? *cap : 16;
	while (c <= n)
		c *= 2;
	if (c > SIZE_MAX / elem)
		abort_out_of_memory();
	table = realloc_or_abort(table, c * elem);
	*cap = c;
	return table;
}

/* Same for the 32-bit capacities of the id-indexed tables. */
static void *grow32(void *table, uint32_t *cap, uint32_t n, size_t elem)
{
	if (n == UINT32_MAX) {
		fputs("ipscope: profile table overflow\n", stderr);
		abort();
	}
	uint64_t c = *cap;
	table = grow(table, &c, n, elem);
	*cap = c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
	return table;
}

/* 64-bit multiply-mix hash over 8-byte words; good spread, a few ns per name. */
static uint32_t hash_bytes(const char *s, size_t n)
{
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
	return (uint32_t)h;
}

static char *arena_copy(struct string_index *ix, const char *s, size_t n)
{
	struct arena_block *b = ix->arena;
	if (!b || b->size - b->used < n + 1) {
		size_t size = n + 1 > ARENA_BLOCK_SIZE ? n + 1 : ARENA_BLOCK_SIZE;
		b = malloc(sizeof(*b) + size);
		if (!b)
			abort_out_of_memory();
		b->next = ix->arena;
		b->used = 0;
		b->size = size;
		ix->arena = b;
	}
	char *dst = b->data + b->used;
	memcpy(dst, s, n);
	dst[n] = '\0';
	b->used += n + 1;
	return dst;
}

static void index_rehash(struct string_index *ix, uint32_t nslots)
{
	struct string_slot *slots = calloc(nslots, sizeof(*slots));
	if (!slots)
		abort_out_of_memory();
	for (uint32_t i = 0; ix->slots && i <= ix->mask; i++) {
		if (!ix->slots[i].id)
			continue;
		uint32_t j = ix->slots[i].hash & (nslots - 1);
		while (slots[j].id)
			j = (j + 1) & (nslots - 1);
		slots[j] = ix->slots[i];
	}
	free(ix->slots);
	ix->slots = slots;
	ix->mask = nslots - 1;
}

struct profile *profile_new(void)
{
	struct profile *p = calloc(1, sizeof(*p));
	struct string_index *ix = calloc(1, sizeof(*ix));
	if (!p || !ix) {
		free(p);
		free(ix);
		return NULL;
	}
	p->string_index = ix;
	index_rehash(ix, 1024);
	p->strings = realloc_or_abort(NULL, 1024 * sizeof(*p->strings));
	p->strings_capacity = 1024;
	p->strings[0] = arena_copy(ix, "", 0);
	p->nstrings = 1;
	return p;
}

void profile_free(struct profile *p)
{
	if (!p)
		return;
	struct string_index *ix = p->string_index;
	if (ix) {
		for (struct arena_block *b = ix->arena, *next; b; b = next) {
			next = b->next;
			free(b);
		}
		free(ix->slots);
		free(ix);
	}
	free(p->strings);
	free(p->modules);
	free(p->functions);
	free(p->lines);
	free(p->locations);
	free(p->stacks);
	free(p->stack_locations);
	free(p->threads);
	free(p->samples);
	free(p);
}

uint32_t profile_intern_n(struct profile *p, const char *s, size_t n)
{
	if (n == 0)
		return 0;
	if (n > UINT32_MAX - 1) {
		fputs("ipscope: string too long to intern\n", stderr);
		abort();
	}
	struct string_index *ix = p->string_index;
	uint32_t h = hash_bytes(s, n);
	uint32_t j = h & ix->mask;
	for (;;) {
		struct string_slot *slot = &ix->slots[j];
		if (!slot->id)
			break;
		if (slot->hash == h && memcmp(slot->str, s, n) == 0 && slot->str[n] == '\0')
			return slot->id;
		j = (j + 1) & ix->mask;
	}
	uint32_t id = p->nstrings;
	p->strings = grow32(p->strings, &p->strings_capacity, id, sizeof(*p->strings));
	p->strings[id] = arena_copy(ix, s, n);
	p->nstrings = id + 1;
	ix->slots[j].id = id;
	ix->slots[j].hash = h;
	ix->slots[j].str = p->strings[id];
	/* Keep the load factor under 1/2 so probe runs stay short. */
	if (++ix->used * 2 > ix->mask)
		index_rehash(ix, (ix->mask + 1) * 2);
	return id;
}

uint32_t profile_intern(struct profile *p, const char *s)
{
	return s ? profile_intern_n(p, s, strlen(s)) : 0;
}

uint32_t profile_add_module(struct profile *p, const struct profile_module *m)
{
	p->modules = grow32(p->modules, &p->modules_cap, p->nmodules, sizeof(*m));
	p->modules[p->nmodules] = *m;
	return p->nmodules++;
}

uint32_t profile_add_function(struct profile *p, const struct profile_function *f)
{
	p->functions = grow32(p->functions, &p->functions_cap, p->nfunctions, sizeof(*f));
	p->functions[p->nfunctions] = *f;
	return p->nfunctions++;
}

uint32_t profile_add_line(struct profile *p, const struct profile_line *l)
{
	p->lines = grow32(p->lines, &p->lines_cap, p->nlines, sizeof(*l));
	p->lines[p->nlines] = *l;
	return p->nlines++;
}

uint32_t profile_add_location(struct profile *p, const struct profile_location *l)
{
	p->locations = grow32(p->locations, &p->locations_cap, p->nlocations, sizeof(*l));
	p->locations[p->nlocations] = *l;
	return p->nlocations++;
}

uint32_t profile_add_thread(struct profile *p, const struct profile_thread *t)
{
	p->threads = grow32(p->threads, &p->threads_cap, p->nthreads, sizeof(*t));
	p->threads[p->nthreads] = *t;
	return p->nthreads++;
}

uint32_t profile_add_stack(struct profile *p, const uint32_t *locations, uint32_t depth)
{
	uint32_t first = p->nstack_locations;
	if ((uint64_t)first + depth >= UINT32_MAX) {
		fputs("ipscope: profile stack table overflow\n", stderr);
		abort();
	}
	if (depth)
		p->stack_locations = grow32(p->stack_locations, &p->stack_locations_cap,
					    first + depth - 1, sizeof(*locations));
	if (depth)
		memcpy(p->stack_locations + first, locations, depth * sizeof(*locations));
	p->nstack_locations = first + depth;
	p->stacks = grow32(p->stacks, &p->stacks_cap, p->nstacks, sizeof(*p->stacks));
	p->stacks[p->nstacks].first = first;
	p->stacks[p->nstacks].depth = depth;
	return p->nstacks++;
}

void profile_add_sample(struct profile *p, const struct profile_sample *s)
{
	p->samples = grow(p->samples, &p->samples_cap, p->nsamples, sizeof(*s));
	p->samples[p->nsamples++] = *s;
	if (s->thread < p->nthreads) {
		p->threads[s->thread].samples++;
		p->threads[s->thread].weight += s->weight;
	}
	p->total_weight += s->weight;
}

uint32_t profile_stack_nframes(const struct profile *p, uint32_t stack)
{
	const struct profile_stack *st = &p->stacks[stack];
	uint32_t n = 0;
	for (uint32_t i = 0; i < st->depth; i++)
		n += p->locations[p->stack_locations[st->first + i]].nlines;
	return n;
}

uint32_t profile_max_stack_frames(const struct profile *p)
{
	uint32_t max = 0;
	for (uint32_t s = 0; s < p->nstacks; s++) {
		uint32_t n = profile_stack_nframes(p, s);
		if (n > max)
			max = n;
	}
	return max;
}

uint32_t profile_stack_frames(const struct profile *p, uint32_t stack, uint32_t *frames)
{
	const struct profile_stack *st = &p->stacks[stack];
	uint32_t n = 0;
	/* Locations are stored leaf first and each inline chain innermost
	 * first, so root first means walking both backwards. */
	for (uint32_t i = st->depth; i-- > 0;) {
		const struct profile_location *loc = &p->locations[p->stack_locations[st->first + i]];
		for (uint32_t l = loc->nlines; l-- > 0;)
			frames[n++] = loc->first_line + l;
	}
	return n;
}

const char *profile_thread_title(const struct profile *p, uint32_t thread, char *buf, size_t len)
{
	const struct profile_thread *t = &p->threads[thread];
	/* Id 0 is the one empty string: interning "" always gives 0. */
	if (t->name)
		snprintf(buf, len, "%u (%s)", t->tid, profile_string(p, t->name));
	else
		snprintf(buf, len, "%u", t->tid);
	return buf;
}
