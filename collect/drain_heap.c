/*
 * drain_heap.c - allocation events from every thread's ring into the
 * trace, in the process's seq order (collect/agent/alloc_hooks.c).
 *
 * Each thread's ring holds its own events; the agent numbers every event of
 * the process from one counter, taken after an allocation returned and
 * before a free was passed on, so the seq order is an order in which the
 * events really happened. Every seq taken is written (a free that turned
 * out to be of no recorded block is written as kind NONE), so the numbers
 * are dense: events are placed in a window indexed by seq and written out as
 * soon as the run of numbers from the last one written is complete. A gap
 * lasts as long as a thread takes between its seq and its ring write
 * (nanoseconds, or a preemption): the window grows as far as it must, up to
 * WINDOW_MAX events, past which the oldest gap is given up on (an event
 * that arrives after its turn is written late and counted). An event whose
 * turn it is skips the window (with one thread, every event), and takes out
 * the run that waited behind it: the events of one ring drained after
 * another's mostly fill the gaps the other left, so half of two threads'
 * events never touch the window.
 *
 * So the trace's ALLOCS records are in seq order, and analyze matches frees
 * to allocations with one pass and a table of live blocks: memory goes with
 * live allocations and distinct stacks, never with the number of events.
 */
#include "collect.h"

#include "alloc.h"

#include <stdlib.h>
#include <string.h>

#define WINDOW_FIRST (1u << 16)
#define WINDOW_MAX (1u << 24)
#define BATCH 4096u

struct heap_order {
	struct trace_heap_event *window; /* slot seq & (cap - 1); seq 0: empty */
	uint64_t cap;
	uint64_t next; /* the lowest seq not written yet */
	uint64_t highest; /* the highest seq placed */
	uint64_t late; /* events that came after their turn */
	struct trace_heap_event batch[BATCH];
	uint32_t nbatch;
	struct heap_totals totals;
};

struct heap_order *heap_order_new(void)
{
	struct heap_order *h = calloc_or_abort(1, sizeof *h);
	h->cap = WINDOW_FIRST;
	h->window = calloc_or_abort(h->cap, sizeof *h->window);
	h->next = 1;
	return h;
}

void heap_order_free(struct heap_order *h)
{
	if (h) {
		free(h->window);
		free(h);
	}
}

static int write_batch(struct heap_order *h, struct trace_writer *w, uint32_t pid)
{
	int rc = 0;
	if (h->nbatch && w)
		rc = trace_writer_allocs(w, pid, h->batch, h->nbatch);
	h->nbatch = 0;
	return rc;
}

static int emit(struct heap_order *h, const struct trace_heap_event *e, struct trace_writer *w, uint32_t pid)
{
	if (e->kind == TRACE_HEAP_NONE)
		return 0;
	if (e->kind == TRACE_HEAP_FREE)
		h->totals.frees++;
	else if (!(e->flags & TRACE_HEAP_RESTORED)) {
		h->totals.allocs++;
		h->totals.bytes += e->size;
	}
	h->batch[h->nbatch++] = *e;
	return h->nbatch == BATCH ? write_batch(h, w, pid) : 0;
}

/* Write every event from next on that is there, stopping at the first gap (or at limit). */
static int advance(struct heap_order *h, struct trace_writer *w, uint32_t pid, uint64_t limit)
{
	int rc = 0;
	uint64_t mask = h->cap - 1;
	while (h->next <= h->highest) {
		struct trace_heap_event *slot = &h->window[h->next & mask];
		if (slot->seq != h->next) {
			if (h->next >= limit)
				break;
			h->next++; /* given up on: never came */
			continue;
		}
		if (emit(h, slot, w, pid) < 0)
			rc = -1;
		slot->seq = 0;
		h->next++;
	}
	return rc;
}

static void grow(struct heap_order *h)
{
	uint64_t cap = h->cap * 2, mask = cap - 1;
	struct trace_heap_event *window = calloc_or_abort(cap, sizeof *window);
	for (uint64_t i = 0; i < h->cap; i++)
		if (h->window[i].seq)
			window[h->window[i].seq & mask] = h->window[i];
	free(h->window);
	h->window = window;
	h->cap = cap;
}

int heap_order_add(struct heap_order *h, const struct trace_heap_event *e, struct trace_writer *w, uint32_t pid)
{
	if (!e->seq || e->seq < h->next) {
		/* Its turn passed (or a scribbled number): written now, out of order. */
		h->late++;
		return emit(h, e, w, pid);
	}
	int rc = 0;
	if (e->seq == h->next && h->highest < h->next) {
		/* Its turn and nothing waits: straight to the batch (one thread's events all come so). */
		h->next++;
		return emit(h, e, w, pid);
	}
	if (e->seq == h->next && h->window[e->seq & (h->cap - 1)].seq != e->seq) {
		/* Its turn: written now, then whatever waited behind it. */
		h->next++;
		rc = emit(h, e, w, pid);
		return advance(h, w, pid, 0) < 0 ? -1 : rc;
	}
	while (e->seq - h->next >= h->cap) {
		if (h->cap < WINDOW_MAX) {
			grow(h);
			continue;
		}
		/* Give up on the oldest gaps until this one fits. */
		if (advance(h, w, pid, e->seq - h->cap + 1) < 0)
			rc = -1;
		if (e->seq - h->next >= h->cap)
			h->next = e->seq - h->cap + 1;
	}
	struct trace_heap_event *slot = &h->window[e->seq & (h->cap - 1)];
	if (slot->seq == e->seq) {
		h->late++; /* the same number twice: a scribbled ring; keep the first */
		return rc;
	}
	*slot = *e;
	if (e->seq > h->highest)
		h->highest = e->seq;
	return rc;
}

int heap_order_write(struct heap_order *h, struct trace_writer *w, uint32_t pid, int final)
{
	int rc = advance(h, w, pid, final ? UINT64_MAX : 0);
	if (write_batch(h, w, pid) < 0)
		rc = -1;
	return rc;
}

void heap_order_totals(const struct heap_order *h, struct heap_totals *out)
{
	*out = h->totals;
	out->late = h->late;
}
