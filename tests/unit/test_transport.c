/*
 * test_transport.c - the agent-to-collect rings: records of every size come
 * out in order, whole, across wrap-arounds; a full ring refuses instead of
 * overwriting; a record never straddles the end of the ring; positions a
 * crashed or hostile program scribbled make the consumer give up, not loop;
 * chunks of rings added later are addressed like the first, and collect asks
 * for one only when few rings are free; a thread of another process waiting
 * for a ring is woken when rings change, and nothing is bumped without one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "transport.h"

#define RING_BYTES 4096u

#include "check.h"

struct expect {
	uint32_t next_seq; /* sequence number the next record must carry */
	uint32_t seen;
};

static void on_record(void *ctx, uint32_t ring, uint32_t type, const void *payload, uint32_t size)
{
	struct expect *e = ctx;
	(void)ring;
	uint32_t seq;
	CHECK(type == TR_SAMPLE);
	CHECK(size >= sizeof seq);
	memcpy(&seq, payload, sizeof seq);
	CHECK(seq == e->next_seq);
	/* Every payload byte after the sequence number is seq's low byte. */
	for (uint32_t i = sizeof seq; i < size; i++)
		CHECK(((const uint8_t *)payload)[i] == (uint8_t)seq);
	e->next_seq = seq + 1;
	e->seen++;
}

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static uint8_t scratch[RING_BYTES];

static int64_t drain(const struct transport *t, uint32_t ring, struct expect *e)
{
	return transport_drain(t, ring, scratch, on_record, e);
}

static int produce(const struct transport *h, uint32_t seq, uint32_t size)
{
	uint8_t *p = transport_reserve(h, 0, TR_SAMPLE, size);
	if (!p)
		return -1;
	memcpy(p, &seq, sizeof seq);
	memset(p + sizeof seq, (uint8_t)seq, size - sizeof seq);
	transport_commit(h, 0);
	return 0;
}

static struct transport t;

/* Chunks of 4 rings: ring 0..3 in chunk 0, 4..7 in chunk 1. */
static void *new_chunk(void)
{
	size_t bytes = transport_chunk_bytes(4, RING_BYTES);
	void *chunk = aligned_alloc(4096, bytes);
	memset(chunk, 0, bytes);
	return chunk;
}

static void check_growth(void)
{
	/* collect keeps as many rings free as are taken: two of four taken is enough, all four is not. */
	CHECK(transport_nrings(&t) == 4);
	CHECK(transport_chunks_wanted(&t) == 0);
	for (uint32_t i = 0; i < 2; i++)
		atomic_store(&transport_ring(&t, i)->state, RING_OWNED);
	CHECK(transport_chunks_wanted(&t) == 0);
	for (uint32_t i = 2; i < 4; i++)
		atomic_store(&transport_ring(&t, i)->state, RING_OWNED);
	CHECK(transport_chunks_wanted(&t) == 1);
	void *second = new_chunk();
	CHECK(transport_add_chunk(&t, 1, second) == 1);
	CHECK(transport_add_chunk(&t, 1, second) == 0); /* another thread was first */
	CHECK(transport_nrings(&t) == 8);
	CHECK(transport_chunks_wanted(&t) == 0);
	for (uint32_t i = 4; i < 8; i++)
		atomic_store(&transport_ring(&t, i)->state, RING_OWNED);
	CHECK(transport_chunks_wanted(&t) == 2); /* eight taken: eight more */
	for (uint32_t i = 4; i < 8; i++)
		atomic_store(&transport_ring(&t, i)->state, RING_FREE);
	/* Ring 5 is the second ring of chunk 1, its data after chunk 1's descriptor page. */
	CHECK((uint8_t *)transport_ring(&t, 5) == (uint8_t *)second + sizeof(struct transport_ring));
	uint8_t *p = transport_reserve(&t, 5, TR_SAMPLE, 8);
	CHECK(p == (uint8_t *)second + 4096 + RING_BYTES + sizeof(struct tr_header));
	memcpy(p, &(uint32_t){ 0 }, sizeof(uint32_t));
	memset(p + 4, 0, 4);
	transport_commit(&t, 5);
	struct expect e = { 0, 0 };
	CHECK(transport_drain(&t, 5, scratch, on_record, &e) == 1);
	/* A chunk beyond the geometry is refused; a gap keeps nrings at the prefix. */
	CHECK(transport_add_chunk(&t, 9, second) == 0);
	void *fourth = new_chunk();
	CHECK(transport_add_chunk(&t, 3, fourth) == 1);
	CHECK(transport_nrings(&t) == 8);
	CHECK(transport_size(3, 4, RING_BYTES) == 4096 + 3 * (4096 + 4 * (size_t)RING_BYTES));
	free(second);
	free(fourth);
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The waiting protocol (agent_ring_waiting against transport_rings_changed), across processes as
 * between a program and collect: the waiter counts itself in, reads rings_changed, looks (here: a
 * flag standing for a free ring), and waits; the other side publishes, then calls
 * transport_rings_changed. The waiter must be woken long before its 20 s deadline. */
static void check_ring_wait(void)
{
	struct shared {
		struct transport_header h;
		_Atomic int ring_free;
	} *s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(s != MAP_FAILED);
	/* No waiter: nothing bumped. */
	transport_rings_changed(&s->h);
	CHECK(atomic_load(&s->h.rings_changed) == 0);
	pid_t child = fork();
	CHECK(child >= 0);
	if (child == 0) {
		uint64_t start = monotonic_ns(), deadline = start + 20000000000ull;
		atomic_fetch_add(&s->h.ring_waiters, 1);
		for (;;) {
			uint32_t seen = atomic_load(&s->h.rings_changed);
			if (atomic_load(&s->ring_free))
				break;
			if (monotonic_ns() >= deadline || transport_rings_wait(&s->h, seen, deadline) < 0)
				_exit(1);
		}
		atomic_fetch_sub(&s->h.ring_waiters, 1);
		_exit(monotonic_ns() - start < 10000000000ull ? 0 : 2);
	}
	for (int waited = 0; !atomic_load(&s->h.ring_waiters); waited++) {
		int status;
		if (waited >= 10000 || waitpid(child, &status, WNOHANG) != 0) {
			CHECK(!"the child counted itself in among the waiters");
			return;
		}
		usleep(1000);
	}
	usleep(50000); /* most likely asleep in the futex by now; either way it must see the change */
	atomic_store(&s->ring_free, 1);
	transport_rings_changed(&s->h);
	int status;
	CHECK(waitpid(child, &status, 0) == child);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK(atomic_load(&s->h.rings_changed) == 1);
	CHECK(atomic_load(&s->h.ring_waiters) == 0);
	munmap(s, sizeof *s);
}

int main(void)
{
	check_ring_wait();
	static struct transport_header header;
	CHECK(transport_init(&t, &header, RING_BYTES, 3, 8) < 0); /* not a power of two */
	CHECK(transport_init(&t, &header, RING_BYTES, 4, 8) == 0);
	void *mapping = new_chunk();
	CHECK(transport_add_chunk(&t, 0, mapping) == 1);
	const struct transport *h = &t;

	/* Sizes that do and do not divide the ring, drained in uneven steps. */
	struct expect e = { 0, 0 };
	uint32_t seq = 0;
	unsigned rng = 12345;
	for (int round = 0; round < 20000; round++) {
		rng = rng * 1103515245u + 12345u;
		uint32_t size = 4 + (rng >> 16) % 300;
		if (produce(h, seq, size) == 0)
			seq++;
		else
			CHECK(e.seen < seq); /* full only while something is unread */
		if ((rng >> 8) % 3 == 0)
			drain(h, 0, &e);
	}
	drain(h, 0, &e);
	CHECK(e.seen == seq);
	CHECK(seq > 15000);

	/* A full ring refuses; draining makes room again. */
	uint32_t accepted = 0;
	while (produce(h, seq, 100) == 0) {
		seq++;
		accepted++;
	}
	CHECK(accepted > 0 && accepted <= RING_BYTES / 104 + 1);
	drain(h, 0, &e);
	CHECK(produce(h, seq++, 100) == 0);
	drain(h, 0, &e);
	CHECK(e.seen == seq);

	/* More than half a ring at once is refused: it could never wrap safely. */
	CHECK(transport_reserve(h, 0, TR_SAMPLE, RING_BYTES / 2) == NULL);
	/* Ring 1 is untouched by all of this. */
	struct expect none = { 0, 0 };
	CHECK(drain(h, 1, &none) == 0);

	/* A ring collect freed (head and tail back to 0) serves its next owner from 0, whatever
	 * tail its last owner saw; filled again it refuses only when really full. */
	struct transport_ring *r0 = transport_ring(h, 0);
	CHECK(atomic_load(&r0->head) == atomic_load(&r0->tail));
	atomic_store(&r0->head, 0);
	atomic_store(&r0->tail, 0);
	CHECK(produce(h, seq++, 100) == 0);
	CHECK(drain(h, 0, &e) == 1 && atomic_load(&r0->head) == 112);
	while (produce(h, seq, 100) == 0)
		seq++;
	CHECK(atomic_load(&r0->head) - atomic_load(&r0->tail) + 112 > RING_BYTES);
	drain(h, 0, &e);
	CHECK(e.seen == seq);

	CHECK(transport_hash_stack((const uint64_t[]){ 1, 2 }, 2, 0) !=
	      transport_hash_stack((const uint64_t[]){ 2, 1 }, 2, 0));
	/* Frames of one chain (0 and 2) and of the two (0 and 1) swapped, a frame more or less. */
	uint64_t h123 = transport_hash_stack((const uint64_t[]){ 1, 2, 3 }, 3, 0);
	CHECK(h123 != transport_hash_stack((const uint64_t[]){ 3, 2, 1 }, 3, 0));
	CHECK(h123 != transport_hash_stack((const uint64_t[]){ 2, 1, 3 }, 3, 0));
	CHECK(h123 != transport_hash_stack((const uint64_t[]){ 1, 2, 3, 0 }, 4, 0));
	CHECK(h123 != transport_hash_stack((const uint64_t[]){ 1, 2, 3 }, 3, 1));
	/* 2^16 stacks of 16 frames, each frame one of two return addresses 0x40 apart (a recursive
	 * descent), hash apart: the two plain sums of the frames gave them 697 hashes. */
	uint64_t *hashes = malloc(65536 * sizeof *hashes);
	for (uint32_t k = 0; k < 65536; k++) {
		uint64_t ips[16];
		for (uint32_t j = 0; j < 16; j++)
			ips[j] = 0x555555555000ull + (k >> j & 1) * 0x40;
		hashes[k] = transport_hash_stack(ips, 16, 0);
	}
	qsort(hashes, 65536, sizeof *hashes, compare_u64);
	uint32_t equal = 0;
	for (uint32_t k = 1; k < 65536; k++)
		equal += hashes[k] == hashes[k - 1];
	CHECK(equal == 0);
	free(hashes);
	/* Scribbled positions: head behind tail, or further ahead than the ring holds. */
	struct transport_ring *r1 = transport_ring(h, 1);
	atomic_store(&r1->head, 100);
	atomic_store(&r1->tail, 200);
	CHECK(drain(h, 1, &none) == -1);
	atomic_store(&r1->head, 10 * RING_BYTES);
	atomic_store(&r1->tail, 0);
	CHECK(drain(h, 1, &none) == -1);
	/* A record header claiming more than was published. */
	atomic_store(&r1->head, 16);
	memcpy((uint8_t *)mapping + 4096 + RING_BYTES, &(struct tr_header){ TR_SAMPLE, 4000 }, sizeof(struct tr_header));
	CHECK(drain(h, 1, &none) == -1);
	CHECK(none.seen == 0);
	atomic_store(&r1->head, 0);
	atomic_store(&r1->tail, 0);
	check_growth();
	free(mapping);
	if (!check_failures)
		printf("unit_transport: %u records through a %u-byte ring\n", seq, RING_BYTES);
	return check_exit_status();
}
