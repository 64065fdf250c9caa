/*
 * test_transport.c - the agent-to-collect rings: records of every size come
 * out in order, whole, across wrap-arounds; a full ring refuses instead of
 * overwriting; a record never straddles the end of the ring; positions a
 * crashed or hostile program scribbled make the consumer give up, not loop.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int main(void)
{
	size_t bytes = transport_size(2, RING_BYTES);
	void *mapping = aligned_alloc(4096, bytes);
	memset(mapping, 0, bytes);
	struct transport t;
	transport_init(&t, mapping, 2, RING_BYTES);
	const struct transport *h = &t;
	CHECK(t.data + 2 * RING_BYTES == (uint8_t *)mapping + bytes);
	CHECK(t.data >= (uint8_t *)(t.rings + 2));

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

	CHECK(transport_hash_stack((const uint64_t[]){ 1, 2 }, 2, 0) !=
	      transport_hash_stack((const uint64_t[]){ 2, 1 }, 2, 0));
	/* Scribbled positions: head behind tail, or further ahead than the ring holds. */
	atomic_store(&t.rings[1].head, 100);
	atomic_store(&t.rings[1].tail, 200);
	CHECK(drain(h, 1, &none) == -1);
	atomic_store(&t.rings[1].head, 10 * RING_BYTES);
	atomic_store(&t.rings[1].tail, 0);
	CHECK(drain(h, 1, &none) == -1);
	/* A record header claiming more than was published. */
	atomic_store(&t.rings[1].head, 16);
	memcpy(t.data + RING_BYTES, &(struct tr_header){ TR_SAMPLE, 4000 }, sizeof(struct tr_header));
	CHECK(drain(h, 1, &none) == -1);
	CHECK(none.seen == 0);
	free(mapping);
	if (!check_failures)
		printf("unit_transport: %u records through a %u-byte ring\n", seq, RING_BYTES);
	return check_exit_status();
}
