/*
 * trace_heap_refs.c - the live-block tables behind ALLOCS_PACKED's free
 * references (TRACE_FORMAT.md, record 13). The writer maps each live block's
 * address to its allocation's ordinal (the process's count of allocation
 * entries before it) and writes a free as a small delta of ordinals instead
 * of an address; the reader keeps the inverse map, ordinal to address, and
 * hands out the address again. Both sides see the same entries in the same
 * order, so their tables agree without anything else in the trace.
 *
 * One open-addressing table per process (backward-shift deletion, keys never
 * 0), so memory goes with live blocks, never with the number of events.
 */
#include "trace_internal.h"

#include <errno.h>
#include <stdlib.h>

static uint64_t home(const struct trace_heap_table *t, uint64_t key)
{
	return (key * 0x9e3779b97f4a7c15ull) >> (64 - t->bits);
}

static uint64_t find(const struct trace_heap_table *t, uint64_t key)
{
	uint64_t mask = ((uint64_t)1 << t->bits) - 1;
	uint64_t i = home(t, key);
	while (t->slots[i].key && t->slots[i].key != key)
		i = (i + 1) & mask;
	return i;
}

static int grow(struct trace_heap_table *t)
{
	unsigned bits = t->slots ? t->bits + 1 : 10;
	if (bits > 40)
		return -1;
	uint64_t cap = (uint64_t)1 << bits;
	struct trace_heap_slot *slots = calloc(cap, sizeof *slots);
	if (!slots)
		return -1;
	struct trace_heap_table n = { slots, 0, bits };
	for (uint64_t i = 0; t->slots && i < ((uint64_t)1 << t->bits); i++)
		if (t->slots[i].key) {
			uint64_t j = find(&n, t->slots[i].key);
			n.slots[j] = t->slots[i];
			n.count++;
		}
	free(t->slots);
	*t = n;
	return 0;
}

int trace_heap_table_put(struct trace_heap_table *t, uint64_t key, uint64_t val)
{
	if ((!t->slots || (t->count + 1) * 4 > ((uint64_t)3 << t->bits)) && grow(t) < 0) {
		errno = ENOMEM;
		return -1;
	}
	uint64_t i = find(t, key);
	if (!t->slots[i].key) {
		t->slots[i].key = key;
		t->count++;
	}
	t->slots[i].val = val;
	return 0;
}

int trace_heap_table_take(struct trace_heap_table *t, uint64_t key, uint64_t *val)
{
	if (!t->slots || !key)
		return 0;
	uint64_t mask = ((uint64_t)1 << t->bits) - 1;
	uint64_t i = find(t, key);
	if (!t->slots[i].key)
		return 0;
	*val = t->slots[i].val;
	/* Backward shift: move later entries of the cluster into the hole when
	 * their home slot does not lie between the hole and them. */
	for (uint64_t j = (i + 1) & mask; t->slots[j].key; j = (j + 1) & mask) {
		uint64_t h = home(t, t->slots[j].key);
		if (((j - h) & mask) >= ((j - i) & mask)) {
			t->slots[i] = t->slots[j];
			i = j;
		}
	}
	t->slots[i].key = 0;
	t->count--;
	return 1;
}

struct trace_heap_proc *trace_heap_proc_get(struct trace_heap_procs *ps, uint32_t pid)
{
	if (ps->last < ps->count && ps->procs[ps->last].pid == pid)
		return &ps->procs[ps->last];
	for (uint32_t i = 0; i < ps->count; i++)
		if (ps->procs[i].pid == pid) {
			ps->last = i;
			return &ps->procs[i];
		}
	if (ps->count == ps->cap) {
		uint32_t cap = ps->cap ? ps->cap * 2 : 4;
		struct trace_heap_proc *p = realloc(ps->procs, cap * sizeof *p);
		if (!p) {
			errno = ENOMEM;
			return NULL;
		}
		ps->procs = p;
		ps->cap = cap;
	}
	ps->last = ps->count;
	struct trace_heap_proc *p = &ps->procs[ps->count++];
	*p = (struct trace_heap_proc){ .pid = pid };
	return p;
}

void trace_heap_procs_free(struct trace_heap_procs *ps)
{
	for (uint32_t i = 0; i < ps->count; i++) {
		free(ps->procs[i].live.slots);
	}
	free(ps->procs);
	*ps = (struct trace_heap_procs){ 0 };
}
