/*
 * load_alloc_keys.c - the keys allocations are counted under (load_allocs.c):
 * a site (stack and function), the thread, the size (exact while the site
 * has at most SITE_SIZES of them, a power-of-two range after) and the heap.
 * Two hash tables (sites, keys) behind two caches: a dense array by stack id
 * with each stack's site and latest key, and a direct-mapped cache of recent
 * keys. load_allocs.c tests the first cache inline; the rest is here.
 */
#include "load_allocs_internal.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"

struct site_want {
	const struct site *sites;
	uint32_t stack, kind;
};

static int site_eq(const void *ctx, uint32_t id)
{
	const struct site_want *w = ctx;
	return w->sites[id].stack == w->stack && w->sites[id].kind == w->kind;
}

static uint32_t site_of(struct loader *L, struct allocs_state *st, uint32_t stack, uint32_t kind)
{
	struct site_want want = { st->sites, stack, kind };
	uint64_t h = hash_combine(hash_u64(stack), kind);
	uint32_t id = hashmap_find(&st->site_index, h, site_eq, &want);
	if (id != HASHMAP_NONE)
		return id;
	/* The stack's addresses are its process's (as a sample's are: load_samples.c). */
	struct raw_stack *rs = &L->raw[stack];
	uint32_t pid = st->heaps[st->cur].pid;
	if (!rs->used) {
		rs->used = 1;
		rs->pid = pid;
	} else if (rs->pid != pid) {
		L->many_pid_stacks = 1;
	}
	ALLOC_GROW(st->sites, (uint64_t)st->nsites + 1, st->sites_cap);
	st->sites[st->nsites] = (struct site){ .stack = stack, .kind = kind };
	hashmap_insert(&st->site_index, h, st->nsites);
	return st->nsites++;
}

/* The size key of an allocation of size at site: exact while the site has few sizes. */
static uint64_t size_key(struct allocs_state *st, struct site *s, uint64_t size)
{
	if (!s->ranged) {
		for (uint32_t i = 0; i < s->nsizes; i++)
			if (s->sizes[i] == size)
				return size;
		if (s->nsizes < SITE_SIZES) {
			s->sizes[s->nsizes++] = size;
			return size;
		}
		s->ranged = 1;
		st->ranged_epoch++; /* its sizes' keys change: forget the stacks' latest */
	}
	return CLASS_BIT | (uint64_t)floor_log2(size);
}

struct key_want {
	const struct key *keys;
	uint32_t site, thread, heap;
	uint64_t size_key;
};

static int key_eq(const void *ctx, uint32_t id)
{
	const struct key_want *w = ctx;
	const struct key *k = &w->keys[id];
	return k->site == w->site && k->thread == w->thread && k->size_key == w->size_key && k->heap == w->heap;
}

static uint32_t key_of(struct allocs_state *st, uint32_t site, uint32_t thread, uint64_t size_key)
{
	struct key_want want = { st->keys, site, thread, st->cur, size_key };
	uint64_t h = hash_combine(hash_combine(hash_combine(hash_u64(site), thread), size_key), st->cur);
	uint32_t id = hashmap_find(&st->key_index, h, key_eq, &want);
	if (id != HASHMAP_NONE)
		return id;
	ALLOC_GROW(st->keys, (uint64_t)st->nkeys + 1, st->keys_cap);
	st->keys[st->nkeys] = (struct key){ .site = site, .thread = thread, .size_key = size_key, .heap = st->cur };
	hashmap_insert(&st->key_index, h, st->nkeys);
	return st->nkeys++;
}

/*
 * The key of an allocation event. Most events repeat a recent site (stack
 * and what) and key: a dense array by stack id remembers each stack's site
 * and latest key, and a direct-mapped cache of keys skips the site and key
 * tables (two hash lookups) for the others. Nothing here changes a key: a
 * key skipped to is the one the tables would give.
 */
uint32_t allocs_key_of_event(struct loader *L, struct allocs_state *st, uint32_t thread, const struct trace_heap_event *e)
{
	uint32_t id = e->stack_id, site;
	struct stack_site *ss = NULL;
	if (id < DENSE_SITE_IDS) { /* collect numbers stacks densely from 1 */
		if (id >= st->stack_site_cap) {
			uint32_t old = st->stack_site_cap;
			ALLOC_GROW(st->stack_site, (uint64_t)id + 1, st->stack_site_cap);
			memset(st->stack_site + old, 0xff, (st->stack_site_cap - old) * sizeof(*st->stack_site));
		}
		ss = &st->stack_site[id];
		if (ss->key != HASHMAP_NONE && ss->kind == e->kind && ss->size == e->size && ss->thread == thread &&
		    ss->heap == st->cur && ss->epoch == st->ranged_epoch)
			return ss->key;
		if (ss->site == HASHMAP_NONE || ss->kind != e->kind)
			*ss = (struct stack_site){ e->kind, site_of(L, st, loader_stack_index(L, id), e->kind),
						   .key = HASHMAP_NONE };
		site = ss->site;
	} else {
		site = site_of(L, st, loader_stack_index(L, id), e->kind);
	}
	uint64_t sk = size_key(st, &st->sites[site], e->size);
	uint64_t h = (site * 0x9e3779b97f4a7c15ull) ^ (sk * 0xc2b2ae3d27d4eb4full) ^ ((uint64_t)thread << 32);
	struct hot *c = &st->hot[(h * 0x94d049bb133111ebull) >> (64 - HOT_BITS)];
	if (c->key == HASHMAP_NONE || c->site != site || c->thread != thread || c->size_key != sk ||
	    c->heap != st->cur)
		*c = (struct hot){ sk, site, thread, key_of(st, site, thread, sk), st->cur };
	if (ss) {
		ss->thread = thread;
		ss->heap = st->cur;
		ss->key = c->key;
		ss->epoch = st->ranged_epoch;
		ss->size = e->size;
	}
	return c->key;
}
