/*
 * stacks.c - per-thread deduplication of backtraces in the agent, so each
 * distinct stack crosses to collect once and a sample is a 32-byte record.
 *
 * The table belongs to one thread and is only touched from that thread (in
 * its signal handler, or with the signal blocked), so it needs no lock. Its
 * memory comes from mmap, which is async-signal-safe, never from malloc. Ids
 * come from one counter shared by all threads; collect merges equal stacks of
 * different threads into one trace stack.
 *
 * A caller that can tell a stack is one it asked about lately (capture.c: the
 * table walk's token says its frames are those of an earlier walk) recalls
 * that stack's id by a key instead: no hash, no probe, no compare of frames.
 * The keys live in the table, so a table made anew (a fork child's, a
 * thread's) forgets them; one that grows keeps them.
 */
#include "agent.h"

#include <string.h>
#include <sys/mman.h>

#include "trace.h"

#define RECALL 16u /* keys remembered (capture.c's are a thread's walks' tokens, which count up) */

struct stack_entry {
	uint64_t hash;
	uint64_t offset; /* into the ip pool */
	uint32_t nframes;
	uint32_t id; /* 0: empty slot (ids start at 1) */
};

struct stack_table {
	size_t bytes; /* the whole mapping */
	uint32_t capacity; /* slots, power of two */
	uint32_t count;
	uint64_t pool_capacity; /* ips */
	uint64_t pool_used;
	struct stack_entry *entries;
	uint64_t *pool;
	struct {
		uint64_t key; /* stack_table_remember's, by its low bits; 0: none */
		uint32_t id;
		uint32_t entry; /* its entry's index then (a grown table moves it: checked by id) */
	} recall[RECALL];
	uint32_t last_entry; /* the entry of the last id answered (stack_table_last) */
};

static struct stack_table *table_create(uint32_t capacity, uint64_t pool_capacity)
{
	size_t bytes = sizeof(struct stack_table) + capacity * sizeof(struct stack_entry) +
		       pool_capacity * sizeof(uint64_t);
	void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return NULL;
	struct stack_table *t = mem;
	t->bytes = bytes;
	t->capacity = capacity;
	t->pool_capacity = pool_capacity;
	t->entries = (struct stack_entry *)(t + 1);
	t->pool = (uint64_t *)(t->entries + capacity);
	return t;
}

void stack_table_free(struct stack_table *t)
{
	if (t)
		munmap(t, t->bytes);
}

static struct stack_entry *find_slot(struct stack_table *t, uint64_t hash, const uint64_t *ips, uint32_t n)
{
	uint32_t mask = t->capacity - 1;
	for (uint32_t i = (uint32_t)hash & mask;; i = (i + 1) & mask) {
		struct stack_entry *e = &t->entries[i];
		if (!e->id)
			return e;
		if (e->hash == hash && e->nframes == n &&
		    memcmp(t->pool + e->offset, ips, n * sizeof *ips) == 0)
			return e;
	}
}

/* Double whatever ran out; the old table is copied over and unmapped. */
static struct stack_table *table_grow(struct stack_table *old, uint32_t need_frames)
{
	uint32_t capacity = old ? old->capacity : 1024;
	uint64_t pool = old ? old->pool_capacity : 16384;
	if (old && old->count + 1 > old->capacity / 2)
		capacity *= 2;
	while (old && old->pool_used + need_frames > pool)
		pool *= 2;
	if (pool < need_frames)
		pool = need_frames;
	struct stack_table *t = table_create(capacity, pool);
	if (!t || !old)
		return t;
	memcpy(t->pool, old->pool, old->pool_used * sizeof(uint64_t));
	memcpy(t->recall, old->recall, sizeof t->recall);
	t->pool_used = old->pool_used;
	for (uint32_t i = 0; i < old->capacity; i++) {
		struct stack_entry *e = &old->entries[i];
		if (!e->id)
			continue;
		*find_slot(t, e->hash, t->pool + e->offset, e->nframes) = *e;
		t->count++;
	}
	stack_table_free(old);
	return t;
}

/* Send the definition; on a full ring the id is not remembered, so it is sent again next time.
 * An allocation hook's (a writer outside the sampling handler: its event waits for room too)
 * waits instead, so no allocation loses its stack. */
static int write_definition(uint32_t ring, uint32_t id, const uint64_t *ips, uint32_t n, uint32_t flags)
{
	uint32_t size = (uint32_t)(sizeof(struct tr_stack) + n * sizeof(uint64_t));
	int may_wait = agent_self.depth && !agent_self.in_handler;
	struct tr_stack *s = may_wait ? agent_reserve_waiting(ring, TR_STACK, size)
				      : transport_reserve(&agent_transport, ring, TR_STACK, size);
	if (!s)
		return -1;
	s->id = id;
	s->flags = flags;
	s->nframes = n;
	s->reserved = 0;
	memcpy(s + 1, ips, n * sizeof(uint64_t));
	transport_commit(&agent_transport, ring);
	return 0;
}

int stack_table_reserve(struct stack_table **table, uint32_t n)
{
	struct stack_table *t = *table;
	if (!t || t->count + 1 > t->capacity / 2 || t->pool_used + n > t->pool_capacity) {
		struct stack_table *grown = table_grow(t, n);
		if (!grown)
			return -1;
		*table = grown;
	}
	return 0;
}

uint32_t stack_table_id(struct stack_table **table, uint32_t ring, const uint64_t *ips, uint32_t n,
			uint32_t flags)
{
	struct stack_table *t = *table;
	uint64_t hash = transport_hash_stack(ips, n, flags);
	if (t) {
		struct stack_entry *e = find_slot(t, hash, ips, n);
		if (e->id) {
			t->last_entry = (uint32_t)(e - t->entries);
			return e->id;
		}
	}
	if (!t || t->count + 1 > t->capacity / 2 || t->pool_used + n > t->pool_capacity) {
		struct stack_table *grown = table_grow(t, n);
		if (grown)
			*table = t = grown;
	}
	uint32_t id = atomic_fetch_add(&agent_transport.header->next_stack_id, 1) + 1;
	if (write_definition(ring, id, ips, n, flags) < 0)
		return UINT32_MAX;
	if (!t || t->count + 1 > t->capacity / 2 || t->pool_used + n > t->pool_capacity)
		return id; /* out of memory: correct, just not deduplicated */
	struct stack_entry *e = find_slot(t, hash, ips, n);
	e->hash = hash;
	e->offset = t->pool_used;
	e->nframes = n;
	e->id = id;
	memcpy(t->pool + t->pool_used, ips, n * sizeof(uint64_t));
	t->pool_used += n;
	t->count++;
	t->last_entry = (uint32_t)(e - t->entries);
	return id;
}

uint32_t stack_table_last(const struct stack_table *t)
{
	return t ? t->last_entry : 0;
}

uint32_t stack_table_frames(const struct stack_table *t, uint32_t id, uint32_t hint, const uint64_t **ips)
{
	if (t && id && hint < t->capacity && t->entries[hint].id == id) {
		*ips = t->pool + t->entries[hint].offset;
		return t->entries[hint].nframes;
	}
	for (uint32_t i = 0; t && id && i < t->capacity; i++)
		if (t->entries[i].id == id) {
			*ips = t->pool + t->entries[i].offset;
			return t->entries[i].nframes;
		}
	return 0;
}

uint32_t stack_table_recall(struct stack_table *t, uint64_t key)
{
	if (!t || !key || t->recall[key % RECALL].key != key)
		return UINT32_MAX;
	t->last_entry = t->recall[key % RECALL].entry;
	return t->recall[key % RECALL].id;
}

void stack_table_remember(struct stack_table *t, uint64_t key, uint32_t id)
{
	if (t && key && id != UINT32_MAX) {
		t->recall[key % RECALL].key = key;
		t->recall[key % RECALL].id = id;
		t->recall[key % RECALL].entry = t->last_entry; /* the caller's stack_table_id just answered id */
	}
}

uint32_t stack_table_caller(uint32_t ring, uint64_t caller)
{
	return stack_table_id(&agent_self.stacks, ring, &caller, 1, TRACE_STACK_TRUNCATED);
}
