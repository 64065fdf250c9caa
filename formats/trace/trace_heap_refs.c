/*
 * trace_heap_refs.c - the live-block tables behind the free references of
 * ALLOCS_PACKED and ALLOCS_IDS (TRACE_FORMAT.md, records 13 and 14). The
 * writer maps each live block's address to its allocation's ordinal (the
 * process's count of allocation entries before it) and writes a free as a
 * small delta of ordinals instead of an address; the reader keeps the inverse
 * map, ordinal to address (ALLOCS_IDS: to the block's identity), and hands it
 * out again. Both sides see the same entries in the same order, so their
 * tables agree without anything else in the trace.
 *
 * One open-addressing table per process (backward-shift deletion, keys never
 * 0), so memory goes with live blocks, never with the number of events.
 *
 * The reader's side is mostly not a hash table: ordinals are consecutive and
 * most blocks are freed soon, so the latest 2^window_bits ordinals' addresses
 * sit in an array at ordinal % 2^window_bits (an allocation writes the next
 * slot, a free reads one near it: cache lines are shared, where hashing the
 * ordinals put every event in a random line). A block still live when its
 * slot comes round again moves to the table (hashed by ordinal + 1). The
 * window doubles when the table holds more than an eighth as many blocks as
 * the window has slots (a block in the table costs a random line twice, where
 * its slot in a larger window costs one at most: lua5.4's binary trees keep a
 * hundred thousand blocks alive over 2^17 allocations and more) and more than
 * half the window's slots are live: blocks outlive a lap of the window, which
 * a larger one would hold. Old blocks alone, a window mostly empty (a
 * program's long-lived data, allocated once), stay in the table: doubling the
 * window for them bought nothing and cost sixteen slots per block there
 * (lua5.4 binary-trees 16: a window of 2^21 slots, 16 MiB, for 800,000 live
 * blocks, against 2^20 now, as fast: bench/README.md, "Allocation profiling").
 * The window is counted only when the first test holds, and at most once a
 * lap after it was found sparse, so counting costs at most a read of the
 * window per lap.
 *
 * The window's side of adding and taking an ordinal is in the reader's
 * decoding loop (trace_allocs.c: window_add, window_take, on the window's
 * fields in locals): it runs for every event, and a call into this file
 * for each was a measurable part of reading lua5.4's allocation trace
 * (bench/README.md, "analyze: reading traces").
 */
#include "trace_internal.h"

#include <errno.h>
#include <stdlib.h>

static uint64_t home(const struct trace_heap_table *t, uint64_t key)
{
	return trace_heap_table_home(t, key);
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

int trace_heap_table_swap(struct trace_heap_table *t, uint64_t key, uint64_t val, uint64_t *old)
{
	if ((!t->slots || (t->count + 1) * 4 > ((uint64_t)3 << t->bits)) && grow(t) < 0) {
		errno = ENOMEM;
		return -1;
	}
	uint64_t i = find(t, key);
	int found = t->slots[i].key != 0;
	if (found)
		*old = t->slots[i].val;
	else {
		t->slots[i].key = key;
		t->count++;
	}
	t->slots[i].val = val;
	return found;
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

#define WINDOW_FIRST_BITS 12
#define WINDOW_MAX_BITS 30

/* Double the window: it then covers [next - 2w, next), from the old window and
 * from the table's blocks in [next - 2w, next - w), which leave the table. */
static int window_grow(struct trace_heap_proc *p)
{
	uint64_t w = (uint64_t)1 << p->window_bits, next = p->next_ordinal;
	uint64_t *win = calloc(2 * w, sizeof *win);
	if (!win)
		return -1;
	uint64_t lo = next > w ? next - w : 0, lo2 = next > 2 * w ? next - 2 * w : 0;
	for (uint64_t o = lo; o < next; o++)
		win[o & (2 * w - 1)] = p->window[o & (w - 1)];
	/* As large as the table was: taken in slot order, keys come sorted by
	 * hash, and in a smaller table they would all pile up at its start. */
	struct trace_heap_table kept = { 0 };
	if (p->live.slots) {
		kept = (struct trace_heap_table){ calloc((size_t)1 << p->live.bits, sizeof *kept.slots), 0, p->live.bits };
		if (!kept.slots) {
			free(win);
			return -1;
		}
	}
	for (uint64_t i = 0; p->live.slots && i < ((uint64_t)1 << p->live.bits); i++) {
		const struct trace_heap_slot *s = &p->live.slots[i];
		if (!s->key)
			continue;
		if (s->key - 1 >= lo2 && s->key - 1 < lo)
			win[(s->key - 1) & (2 * w - 1)] = s->val;
		else if (trace_heap_table_put(&kept, s->key, s->val) < 0) {
			free(kept.slots);
			free(win);
			return -1;
		}
	}
	free(p->live.slots);
	p->live = kept;
	free(p->window);
	p->window = win;
	p->window_bits++;
	return 0;
}

/* Whether more than half the window's slots hold live blocks (see the top);
 * once it was not, not counted again until the window has gone round once. */
static int window_dense(struct trace_heap_proc *p)
{
	uint64_t w = (uint64_t)1 << p->window_bits, live = 0;
	if (p->window_counted && p->next_ordinal - p->window_counted < w)
		return 0;
	for (uint64_t i = 0; i < w; i++)
		live += p->window[i] != 0;
	if (live * 2 > w)
		return 1;
	p->window_counted = p->next_ordinal;
	return 0;
}

int trace_heap_ordinal_add_slow(struct trace_heap_proc *p, uint64_t address)
{
	if (!p->window) {
		p->window = calloc((size_t)1 << WINDOW_FIRST_BITS, sizeof *p->window);
		if (!p->window) {
			errno = ENOMEM;
			return -1;
		}
		p->window_bits = WINDOW_FIRST_BITS;
	}
	uint64_t o = p->next_ordinal;
	uint64_t *slot = &p->window[o & (((uint64_t)1 << p->window_bits) - 1)];
	if (*slot && (p->live.count + 1) * 8 > ((uint64_t)1 << p->window_bits) && p->window_bits < WINDOW_MAX_BITS &&
	    window_dense(p)) {
		if (window_grow(p) < 0) {
			errno = ENOMEM;
			return -1;
		}
		slot = &p->window[o & (((uint64_t)1 << p->window_bits) - 1)];
	}
	if (*slot && trace_heap_table_put(&p->live, o - ((uint64_t)1 << p->window_bits) + 1, *slot) < 0)
		return -1;
	*slot = address;
	p->next_ordinal++;
	return 0;
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
	*p = (struct trace_heap_proc){ .pid = pid, .index = ps->count - 1 };
	return p;
}

void trace_heap_procs_free(struct trace_heap_procs *ps)
{
	for (uint32_t i = 0; i < ps->count; i++) {
		free(ps->procs[i].live.slots);
		free(ps->procs[i].window);
	}
	free(ps->procs);
	*ps = (struct trace_heap_procs){ 0 };
}
