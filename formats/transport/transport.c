/*
 * transport.c - the shared memory rings between agent and collect (see
 * transport.h, which has the producer's side inline: it runs at every
 * allocation, and inside signal handlers: no locks, no allocation, only loads
 * and stores on memory both processes map).
 */
#include "transport.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define RECORD_ALIGN 8u
#define PAGE_BYTES 4096u

static size_t align_up(size_t n, size_t a)
{
	return (n + a - 1) & ~(a - 1);
}

static size_t descriptor_bytes(uint32_t rings_per_chunk)
{
	return align_up((size_t)rings_per_chunk * sizeof(struct transport_ring), PAGE_BYTES);
}

size_t transport_chunk_bytes(uint32_t rings_per_chunk, uint32_t ring_bytes)
{
	return descriptor_bytes(rings_per_chunk) + (size_t)rings_per_chunk * ring_bytes;
}

size_t transport_size(uint32_t nchunks, uint32_t rings_per_chunk, uint32_t ring_bytes)
{
	return TRANSPORT_HEADER_BYTES + (size_t)nchunks * transport_chunk_bytes(rings_per_chunk, ring_bytes);
}

size_t transport_chunk_offset(const struct transport *t, uint32_t c)
{
	return TRANSPORT_HEADER_BYTES + (size_t)c * t->chunk_bytes;
}

static int power_of_two(uint32_t n)
{
	return n && (n & (n - 1)) == 0;
}

int transport_init(struct transport *t, struct transport_header *header, uint32_t ring_bytes,
		   uint32_t rings_per_chunk, uint32_t max_chunks)
{
	_Static_assert(sizeof(struct transport_header) <= TRANSPORT_HEADER_BYTES, "header fits its page");
	memset(t, 0, sizeof *t);
	if (!power_of_two(ring_bytes) || ring_bytes < PAGE_BYTES || ring_bytes > (64u << 20) ||
	    !power_of_two(rings_per_chunk) || rings_per_chunk > 4096 || !max_chunks ||
	    max_chunks > TRANSPORT_MAX_CHUNKS)
		return -1;
	t->header = header;
	t->ring_bytes = ring_bytes;
	t->rings_per_chunk = rings_per_chunk;
	t->max_chunks = max_chunks;
	t->chunk_bytes = transport_chunk_bytes(rings_per_chunk, ring_bytes);
	t->descriptor_bytes = descriptor_bytes(rings_per_chunk);
	t->chunk_shift = (uint32_t)__builtin_ctz(rings_per_chunk);
	return 0;
}

int transport_add_chunk(struct transport *t, uint32_t c, void *mapping)
{
	uint8_t *expected = NULL;
	if (c >= t->max_chunks || !atomic_compare_exchange_strong(&t->chunks[c], &expected, mapping))
		return 0;
	/* nmapped only counts a prefix of mapped chunks. */
	uint32_t n = atomic_load(&t->nmapped);
	while (n < t->max_chunks && atomic_load(&t->chunks[n])) {
		if (atomic_compare_exchange_weak(&t->nmapped, &n, n + 1))
			n++;
	}
	return 1;
}

uint32_t transport_nrings(const struct transport *t)
{
	return atomic_load_explicit(&t->nmapped, memory_order_acquire) * t->rings_per_chunk;
}

uint32_t transport_chunks_wanted(const struct transport *t)
{
	uint32_t n = atomic_load(&t->nmapped);
	uint32_t free_rings = 0, total = transport_nrings(t);
	for (uint32_t i = 0; i < total; i++)
		free_rings += atomic_load_explicit(&transport_ring(t, i)->state, memory_order_relaxed) == RING_FREE;
	/* A burst of new threads doubles what is taken between two drains: keep that much free. */
	uint32_t taken = total - free_rings;
	uint32_t margin = taken > t->rings_per_chunk / 4 ? taken : t->rings_per_chunk / 4;
	if (free_rings >= margin)
		return 0;
	uint32_t want = (margin - free_rings + t->rings_per_chunk - 1) / t->rings_per_chunk;
	return want < t->max_chunks - n ? want : t->max_chunks - n;
}

void transport_rings_changed(struct transport_header *h)
{
	/* The rings' new states before the count of waiters is read: a thread that counted itself in after
	 * this read looks for a ring after it, and finds these. */
	atomic_thread_fence(memory_order_seq_cst);
	if (!atomic_load(&h->ring_waiters))
		return;
	atomic_fetch_add(&h->rings_changed, 1);
	/* Not private: the waiters are other processes' threads. (Inside the agent's signal handler too,
	 * which keeps the interrupted code's errno.) */
	syscall(SYS_futex, &h->rings_changed, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

int transport_rings_wait(struct transport_header *h, uint32_t seen, uint64_t deadline_ns)
{
	struct timespec ts = { (time_t)(deadline_ns / 1000000000u), (long)(deadline_ns % 1000000000u) };
	if (syscall(SYS_futex, &h->rings_changed, FUTEX_WAIT_BITSET, seen, &ts, NULL, FUTEX_BITSET_MATCH_ANY) == 0)
		return 0;
	return errno == ETIMEDOUT || errno == EAGAIN || errno == EINTR ? 0 : -1;
}

/* A draining consumer hands room back to the producer every this many bytes. */
#define TRANSPORT_RELEASE_BYTES (64u << 10)

int64_t transport_drain(const struct transport *t, uint32_t ring, uint8_t *scratch, transport_record_fn fn,
			void *ctx)
{
	struct transport_ring *r = transport_ring(t, ring);
	uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	const uint8_t *data = transport_ring_data(t, ring);
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
			/* The program may still write here: parse a private copy only. A small
			 * record is copied by a copy of fixed size (a few wide moves, which its
			 * parser's loads then read whole: a copy of the exact size cost those
			 * loads a stall each). */
			if (rh.size <= 64 && offset + sizeof rh + 64 <= t->ring_bytes)
				memcpy(scratch, data + offset + sizeof rh, 64);
			else
				memcpy(scratch, data + offset + sizeof rh, rh.size);
			fn(ctx, ring, rh.type, scratch, rh.size);
			seen++;
		}
		tail += size;
		/* Room goes back as it is read, not only at the end: a producer waiting on a full
		 * ring (allocation records wait, never drop) resumes after the first part instead of
		 * after all of it (a full ring of allocations is milliseconds of parsing:
		 * bench/README.md, "Allocation profiling"). */
		if ((tail & (TRANSPORT_RELEASE_BYTES - 1)) < size)
			atomic_store_explicit(&r->tail, tail, memory_order_release);
	}
	atomic_store_explicit(&r->tail, tail, memory_order_release);
	return seen;
}

/* Two running sums of the frames, each frame mixed with its depth first (a multiply and a shift),
 * the plain sum and the sum of it (order matters), mixed once at the end. The frames' multiplies
 * do not depend on each other, so they overlap: a multiply chained through every frame was 4-5%
 * of a program's time under collect --allocs (bench/README.md, "Allocation profiling"). The mix
 * per frame is what keeps stacks apart whose frames are one of two return addresses at each
 * depth (a recursive descent: the same call in two callers): plain sums of such addresses take a
 * few thousand values over 2^17 stacks, and every lookup then walked a cluster of equal hashes.
 * Equal hashes are compared frame by frame anyway (stacks.c, drain.c). */
uint64_t transport_hash_stack(const uint64_t *ips, uint32_t n, uint32_t flags)
{
	uint64_t a = 0x9e3779b97f4a7c15ull, b = (uint64_t)n ^ ((uint64_t)flags << 32), depth = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t x = (ips[i] + depth) * 0xbf58476d1ce4e5b9ull;
		depth += 0x9e3779b97f4a7c15ull;
		a += x ^ (x >> 31);
		b += a;
	}
	uint64_t h = (a ^ (b << 32 | b >> 32)) * 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h = (h ^ b) * 0xc4ceb9fe1a85ec53ull;
	return h ^ h >> 29;
}
