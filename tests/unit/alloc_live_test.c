/*
 * alloc_live_test.c - the allocation consumer's table of live blocks
 * (analyze/load/load_alloc_live.c) against a plain array of the same blocks:
 * identities allocated in order and freed young, old and at random (so the
 * recent array wraps onto live blocks, moves them to the hash part and
 * grows), identities allocated again while live (replaced), freed identities
 * allocated again below the highest, addresses that collide in the hash
 * part, identities of a second process, sizes of 4 GiB and more, block 0.
 */
#include <stdint.h>

#include "check.h"
#include "load_alloc_live.h"

#define N 300000u /* blocks in the universe */
#define ID(base, o) ((1ull << 63) | (uint64_t)(base) << 40 | (o))

static uint64_t block_of(uint32_t i)
{
	if (i < N / 2)
		return ID(0, i); /* identities of the first process, by ordinal */
	if (i < N / 2 + N / 8)
		return ID(1, i - N / 2); /* a second process's */
	return 0x7f0000000000ull + ((uint64_t)(i - N / 2 - N / 8) << 4); /* 1.3 addresses, 16 apart */
}

struct model {
	uint8_t live[N];
	uint32_t key[N];
	uint64_t size[N];
	uint64_t count;
};

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint64_t a_size(void)
{
	uint64_t r = next();
	return r % 97 == 0 ? (1ull << 32) + r % 1000 : r % 97 == 1 ? UINT32_MAX : r % 5000;
}

static void put(struct live_table *t, struct model *m, uint32_t i)
{
	uint32_t key = (uint32_t)(next() % 1000), okey = 0;
	uint64_t size = a_size(), osize = 0;
	int was = live_put(t, block_of(i), key, size, &okey, &osize);
	CHECKF(was == m->live[i], "put %u: %d, model %d", i, was, m->live[i]);
	if (was && m->live[i])
		CHECKF(okey == m->key[i] && osize == m->size[i], "put %u replaced %u/%llu, model %u/%llu", i, okey,
		       (unsigned long long)osize, m->key[i], (unsigned long long)m->size[i]);
	m->count += !m->live[i];
	m->live[i] = 1;
	m->key[i] = key;
	m->size[i] = size;
}

static void take(struct live_table *t, struct model *m, uint32_t i)
{
	uint32_t key = 0;
	uint64_t size = 0;
	CHECKF(live_has(t, block_of(i)) == m->live[i], "has %u", i);
	int was = live_take(t, block_of(i), &key, &size);
	CHECKF(was == m->live[i], "take %u: %d, model %d", i, was, m->live[i]);
	if (was && m->live[i])
		CHECKF(key == m->key[i] && size == m->size[i], "take %u: %u/%llu, model %u/%llu", i, key,
		       (unsigned long long)size, m->key[i], (unsigned long long)m->size[i]);
	m->count -= m->live[i];
	m->live[i] = 0;
}

int main(void)
{
	static struct model m;
	struct live_table t;
	live_init(&t);
	uint32_t next_id[3] = { 0, N / 2, N / 2 + N / 8 }, end[3] = { N / 2, N / 2 + N / 8, N };
	for (uint32_t step = 0; step < 4 * N; step++) {
		uint64_t r = next() % 100;
		int part = r < 70 ? 0 : r < 85 ? 1 : 2;
		uint32_t lo = part == 0 ? 0 : end[part - 1], hi = next_id[part];
		if (r % 3 == 0 && next_id[part] < end[part]) {
			put(&t, &m, next_id[part]++); /* a new block */
		} else if (hi > lo) {
			uint64_t x = next();
			/* young blocks mostly, any block sometimes (long-lived ones sit in the hash part) */
			uint32_t back = x % 4 ? (uint32_t)(x >> 8) % 64 : (uint32_t)(x >> 8) % (hi - lo);
			uint32_t i = hi - 1 - (back < hi - lo ? back : 0);
			if (x % 11 == 0)
				put(&t, &m, i); /* again: replaces it when live, else below the highest */
			else
				take(&t, &m, i);
		}
		if (step % 1000 == 0)
			CHECKF(live_count(&t) == m.count, "step %u: %llu live, model %llu", step,
			       (unsigned long long)live_count(&t), (unsigned long long)m.count);
	}
	CHECK(t.recent_cap > 4096); /* it grew */
	CHECK(t.nhash > 0);         /* and blocks moved to the hash part */
	/* Block 0 is never live; nor are blocks never put. */
	uint32_t key;
	uint64_t size;
	CHECK(live_put(&t, 0, 1, 1, &key, &size) == 0 && !live_has(&t, 0) && !live_take(&t, 0, &key, &size));
	CHECK(!live_has(&t, ID(0, N)) && !live_has(&t, ID(5, 3)) && !live_has(&t, 0x10));
	for (uint32_t i = 0; i < N; i++)
		take(&t, &m, i);
	CHECK(live_count(&t) == 0 && m.count == 0);
	live_free(&t);
	return check_exit_status();
}
