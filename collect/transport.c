/*
 * transport.c - the shared memory rings between agent and collect (see
 * transport.h). The producer side runs inside signal handlers: no locks, no
 * allocation, only loads and stores on memory both processes map.
 */
#include "transport.h"

#include <string.h>

#define RECORD_ALIGN 8u

static size_t align_up(size_t n, size_t a)
{
	return (n + a - 1) & ~(a - 1);
}

static size_t header_bytes(uint32_t nrings)
{
	return align_up(sizeof(struct transport_header), 64) + (size_t)nrings * sizeof(struct transport_ring);
}

size_t transport_size(uint32_t nrings, uint32_t ring_bytes)
{
	return align_up(header_bytes(nrings), 4096) + (size_t)nrings * ring_bytes;
}

void transport_init(struct transport *t, void *mapping, uint32_t nrings, uint32_t ring_bytes)
{
	t->header = mapping;
	t->rings = (struct transport_ring *)((char *)mapping + align_up(sizeof(struct transport_header), 64));
	t->data = (uint8_t *)mapping + align_up(header_bytes(nrings), 4096);
	t->nrings = nrings;
	t->ring_bytes = ring_bytes;
	t->size = transport_size(nrings, ring_bytes);
}

void *transport_reserve(const struct transport *t, uint32_t ring, uint32_t type, uint32_t payload_size)
{
	struct transport_ring *r = &t->rings[ring];
	uint64_t size = align_up(sizeof(struct tr_header) + (uint64_t)payload_size, RECORD_ALIGN);
	uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	uint64_t offset = head & (t->ring_bytes - 1);
	uint64_t to_end = t->ring_bytes - offset;
	uint64_t pad = size > to_end ? to_end : 0;

	if (size > t->ring_bytes / 2 || head + pad + size - tail > t->ring_bytes)
		return NULL;
	uint8_t *data = t->data + (size_t)ring * t->ring_bytes;
	if (pad) {
		/* A record never wraps: fill the end of the ring and start at 0. */
		struct tr_header filler = { TR_PAD, (uint32_t)(pad - sizeof(struct tr_header)) };
		memcpy(data + offset, &filler, sizeof filler);
		head += pad;
		offset = 0;
	}
	struct tr_header rh = { type, payload_size };
	memcpy(data + offset, &rh, sizeof rh);
	r->reserved_head = head + size;
	/* Publish the filler now; the record itself only at commit. */
	if (pad)
		atomic_store_explicit(&r->head, head, memory_order_release);
	return data + offset + sizeof(struct tr_header);
}

void transport_commit(const struct transport *t, uint32_t ring)
{
	struct transport_ring *r = &t->rings[ring];
	atomic_store_explicit(&r->head, r->reserved_head, memory_order_release);
}

int64_t transport_drain(const struct transport *t, uint32_t ring, uint8_t *scratch, transport_record_fn fn,
			void *ctx)
{
	struct transport_ring *r = &t->rings[ring];
	uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	const uint8_t *data = t->data + (size_t)ring * t->ring_bytes;
	int64_t seen = 0;

	if (head < tail || head - tail > t->ring_bytes)
		return -1;
	while (tail < head) {
		struct tr_header rh;
		uint64_t offset = tail & (t->ring_bytes - 1);
		memcpy(&rh, data + offset, sizeof rh);
		uint64_t size = align_up(sizeof rh + (uint64_t)rh.size, RECORD_ALIGN);
		if (size > head - tail || size > t->ring_bytes - offset)
			return -1;
		if (rh.type != TR_PAD) {
			/* The program may still write here: parse a private copy only. */
			memcpy(scratch, data + offset + sizeof rh, rh.size);
			fn(ctx, ring, rh.type, scratch, rh.size);
			seen++;
		}
		tail += size;
	}
	atomic_store_explicit(&r->tail, tail, memory_order_release);
	return seen;
}

uint64_t transport_hash_stack(const uint64_t *ips, uint32_t n, uint32_t flags)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n ^ ((uint64_t)flags << 32);
	for (uint32_t i = 0; i < n; i++) {
		h ^= ips[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return h;
}
