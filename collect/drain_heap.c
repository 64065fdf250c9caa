/*
 * drain_heap.c - allocation events from every thread's ring into the
 * trace, each program image's in its own seq order
 * (collect/agent/alloc_record.c).
 *
 * Each thread's ring holds its own events; the agent numbers every event of
 * a program image from one counter of its own, taken after an allocation
 * returned and before a free was passed on, so the seq order is an order in
 * which the events really happened. An image is a stream (the number its
 * rings carry, transport_ring.stream): the first process, each forked child
 * and each program exec'd in the tree, numbering from 1. Every seq taken is
 * written (a free that turned out to be of no recorded block is written as
 * kind NONE), so a stream's numbers are dense: its events are placed in a
 * window indexed by seq and written out as soon as the run of numbers from
 * the last one written is complete. A gap lasts as long as a thread takes
 * between its seq and its ring write (nanoseconds, or a preemption): the
 * window grows as far as it must, up to WINDOW_MAX events, past which the
 * oldest gap is given up on (an event that arrives after its turn is
 * written late and counted). A gap of one stream (a process killed in the
 * middle of an event) never holds up another's.
 *
 * A stream ends when a new image of its pid starts (an exec in place, or
 * the pid used again): its events were all drained by then (the new image
 * waits for that, agent.c), and are written before anything of the new one.
 * Windows are small at first and given back while their stream is idle, so
 * a tree of many short processes costs little.
 *
 * So the trace's ALLOCS records of a pid are in seq order, image after
 * image, and analyze matches frees to allocations with one pass and a table
 * of live blocks per process: memory goes with live allocations and
 * distinct stacks, never with the number of events.
 */
#include "collect.h"

#include "alloc.h"
#include "hashmap.h"

#include <stdlib.h>
#include <string.h>

#define WINDOW_FIRST (1u << 12)
#define WINDOW_MAX (1u << 24)
#define BATCH 4096u
#define MAX_STREAMS (1u << 20) /* more images than this: the numbers are garbage, later ones share one */

struct stream {
	uint32_t id, pid;
	struct trace_heap_event *window; /* slot seq & (cap - 1); seq 0: empty; NULL until needed */
	uint64_t cap;
	uint64_t next; /* the lowest seq not written yet */
	uint64_t highest; /* the highest seq placed */
	int touched; /* an event came since the last write */
	int ended; /* a later image of its pid started: whatever comes now is late */
};

struct heap_order {
	struct stream *streams;
	uint32_t nstreams, cap;
	struct hashmap index; /* stream id -> streams[] */
	struct hashmap by_pid; /* pid -> streams[] of its latest image */
	uint32_t last; /* streams[last] took the latest event (runs of one ring's) */
	uint64_t late; /* events that came after their turn */
	struct trace_heap_event batch[BATCH]; /* events of batch_pid waiting for one record */
	uint32_t nbatch, batch_pid;
	struct heap_totals totals;
};

struct heap_order *heap_order_new(void)
{
	struct heap_order *h = calloc_or_abort(1, sizeof *h);
	hashmap_init(&h->index, 16);
	hashmap_init(&h->by_pid, 16);
	h->last = UINT32_MAX;
	return h;
}

void heap_order_free(struct heap_order *h)
{
	if (!h)
		return;
	for (uint32_t i = 0; i < h->nstreams; i++)
		free(h->streams[i].window);
	free(h->streams);
	hashmap_free(&h->index);
	hashmap_free(&h->by_pid);
	free(h);
}

static int write_batch(struct heap_order *h, struct trace_writer *w)
{
	int rc = 0;
	if (h->nbatch && w)
		rc = trace_writer_allocs(w, h->batch_pid, h->batch, h->nbatch);
	h->nbatch = 0;
	return rc;
}

static int emit(struct heap_order *h, const struct stream *s, const struct trace_heap_event *e,
		struct trace_writer *w)
{
	if (e->kind == TRACE_HEAP_NONE)
		return 0;
	int rc = 0;
	if (h->nbatch && h->batch_pid != s->pid)
		rc = write_batch(h, w);
	if (e->kind == TRACE_HEAP_FREE)
		h->totals.frees++;
	else if (!(e->flags & TRACE_HEAP_RESTORED)) {
		h->totals.allocs++;
		h->totals.bytes += e->size;
	}
	h->batch_pid = s->pid;
	h->batch[h->nbatch++] = *e;
	if (h->nbatch == BATCH && write_batch(h, w) < 0)
		rc = -1;
	return rc;
}

/* Write every event of s from next on that is there, stopping at the first gap (or at limit). */
static int advance(struct heap_order *h, struct stream *s, struct trace_writer *w, uint64_t limit)
{
	int rc = 0;
	uint64_t mask = s->cap - 1;
	while (s->window && s->next <= s->highest) {
		struct trace_heap_event *slot = &s->window[s->next & mask];
		if (slot->seq != s->next) {
			if (s->next >= limit)
				break;
			s->next++; /* given up on: never came */
			continue;
		}
		if (emit(h, s, slot, w) < 0)
			rc = -1;
		slot->seq = 0;
		s->next++;
	}
	return rc;
}

static void grow(struct stream *s)
{
	uint64_t cap = s->window ? s->cap * 2 : WINDOW_FIRST, mask = cap - 1;
	struct trace_heap_event *window = calloc_or_abort(cap, sizeof *window);
	for (uint64_t i = 0; s->window && i < s->cap; i++)
		if (s->window[i].seq)
			window[s->window[i].seq & mask] = s->window[i];
	free(s->window);
	s->window = window;
	s->cap = cap;
}

static int write_stream(struct heap_order *h, struct stream *s, struct trace_writer *w, int final);

/* The latest image of pid ends unless it is stream keep: everything it holds is written. */
static int end_image(struct heap_order *h, uint32_t pid, uint32_t keep, struct trace_writer *w)
{
	uint32_t i = hashmap_get(&h->by_pid, pid);
	if (i == HASHMAP_NONE || h->streams[i].id == keep || h->streams[i].ended)
		return 0;
	int rc = write_stream(h, &h->streams[i], w, 1);
	h->streams[i].ended = 1;
	return rc;
}

/* The stream of that id, made when first seen (ending the image of its pid before it). */
static struct stream *stream_of(struct heap_order *h, uint32_t id, uint32_t pid, struct trace_writer *w, int *rc)
{
	if (h->last != UINT32_MAX && h->streams[h->last].id == id)
		return &h->streams[h->last];
	uint32_t *slot = hashmap_slot(&h->index, id);
	if (*slot == HASHMAP_NONE) {
		if (h->nstreams >= MAX_STREAMS)
			return &h->streams[h->nstreams - 1];
		if (end_image(h, pid, id, w) < 0)
			*rc = -1;
		ALLOC_GROW(h->streams, (uint64_t)h->nstreams + 1, h->cap);
		h->streams[h->nstreams] = (struct stream){ .id = id, .pid = pid, .next = 1 };
		*slot = h->nstreams;
		*hashmap_slot(&h->by_pid, pid) = h->nstreams++;
	}
	h->last = *slot;
	return &h->streams[*slot];
}

int heap_order_add(struct heap_order *h, uint32_t stream, uint32_t pid, const struct trace_heap_event *e,
		   struct trace_writer *w)
{
	int rc = 0;
	struct stream *s = stream_of(h, stream, pid, w, &rc);
	s->touched = 1;
	if (!e->seq || e->seq < s->next || s->ended) {
		/* Its turn passed (or a scribbled number): written now, out of order. */
		h->late++;
		return emit(h, s, e, w) < 0 ? -1 : rc;
	}
	if (!s->window)
		grow(s);
	while (e->seq - s->next >= s->cap) {
		if (s->cap < WINDOW_MAX) {
			grow(s);
			continue;
		}
		/* Give up on the oldest gaps until this one fits. */
		if (advance(h, s, w, e->seq - s->cap + 1) < 0)
			rc = -1;
		if (e->seq - s->next >= s->cap)
			s->next = e->seq - s->cap + 1;
	}
	struct trace_heap_event *slot = &s->window[e->seq & (s->cap - 1)];
	if (slot->seq == e->seq) {
		h->late++; /* the same number twice: a scribbled ring; keep the first */
		return rc;
	}
	*slot = *e;
	if (e->seq > s->highest)
		s->highest = e->seq;
	return rc;
}

/* Write what s holds (final: all of it) and give its window back once it is empty and idle. */
static int write_stream(struct heap_order *h, struct stream *s, struct trace_writer *w, int final)
{
	int rc = advance(h, s, w, final ? UINT64_MAX : 0);
	if (s->window && s->next > s->highest && (!s->touched || final)) {
		free(s->window);
		s->window = NULL;
	}
	s->touched = 0;
	return rc;
}

int heap_order_write(struct heap_order *h, struct trace_writer *w, int final)
{
	int rc = 0;
	for (uint32_t i = 0; i < h->nstreams; i++)
		if (write_stream(h, &h->streams[i], w, final) < 0)
			rc = -1;
	if (write_batch(h, w) < 0)
		rc = -1;
	return rc;
}

int heap_order_end_pid(struct heap_order *h, uint32_t pid, uint32_t keep, struct trace_writer *w)
{
	int rc = end_image(h, pid, keep, w);
	if (write_batch(h, w) < 0)
		rc = -1;
	return rc;
}

void heap_order_totals(const struct heap_order *h, struct heap_totals *out)
{
	*out = h->totals;
	out->late = h->late;
}
