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

struct transport_ring *transport_rings(struct transport_header *h)
{
	return (struct transport_ring *)((char *)h + align_up(sizeof(struct transport_header), 64));
}

uint8_t *transport_ring_data(struct transport_header *h, uint32_t ring)
{
	return (uint8_t *)h + align_up(header_bytes(h->nrings), 4096) + (size_t)ring * h->ring_bytes;
}

void *transport_reserve(struct transport_header *h, uint32_t ring, uint32_t type, uint32_t payload_size)
{
	struct transport_ring *r = &transport_rings(h)[ring];
	uint64_t size = align_up(sizeof(struct tr_header) + (uint64_t)payload_size, RECORD_ALIGN);
	uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	uint64_t offset = head & (h->ring_bytes - 1);
	uint64_t to_end = h->ring_bytes - offset;
	uint64_t pad = size > to_end ? to_end : 0;

	if (size > h->ring_bytes / 2 || head + pad + size - tail > h->ring_bytes)
		return NULL;
	uint8_t *data = transport_ring_data(h, ring);
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

void transport_commit(struct transport_header *h, uint32_t ring)
{
	struct transport_ring *r = &transport_rings(h)[ring];
	atomic_store_explicit(&r->head, r->reserved_head, memory_order_release);
}

uint64_t transport_drain(struct transport_header *h, uint32_t ring, transport_record_fn fn, void *ctx)
{
	struct transport_ring *r = &transport_rings(h)[ring];
	uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	const uint8_t *data = transport_ring_data(h, ring);
	uint64_t seen = 0;

	while (tail < head) {
		struct tr_header rh;
		uint64_t offset = tail & (h->ring_bytes - 1);
		memcpy(&rh, data + offset, sizeof rh);
		uint64_t size = align_up(sizeof rh + (uint64_t)rh.size, RECORD_ALIGN);
		if (size > head - tail || size > h->ring_bytes - offset)
			break; /* cannot happen with a sane producer; never read past head */
		if (rh.type != TR_PAD) {
			fn(ctx, ring, rh.type, data + offset + sizeof rh, rh.size);
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
