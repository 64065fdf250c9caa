/*
 * alloc_live.c - the set of live chosen blocks, when only some allocations
 * are recorded (--allocs=RATE below 1, --alloc-bytes): a free is recorded
 * only when its block is in here, so frees of unchosen blocks never reach
 * the trace and cost a lookup only.
 *
 * Most frees at a low rate are of unchosen blocks, so a lookup starts with a
 * filter that fits in the cache: 65536 one-byte counters, one per hash of
 * an address, raised by an insert and lowered by a removal. A zero counter
 * says "not in the set" with one load and no lock. Otherwise the address is
 * looked up in one of 64 shards (hashed by address), each an
 * open-addressing table under a spin lock of its own, grown by mmap (never
 * malloc: this runs inside malloc). A counter that reached 255 stays there.
 *
 * Signals: a shard lock is only ever taken by a hook at depth 0 (nested
 * events are decided by the outer writer once it is done, alloc_hooks.c),
 * so a handler on the same thread never waits for a lock its thread holds.
 */
#include "agent.h"

#include <sched.h>
#include <string.h>
#include <sys/mman.h>

#define FILTER_SLOTS 65536u
#define SHARDS 64u
#define FIRST_CAPACITY 1024u

struct shard {
	_Atomic int lock;
	uint32_t count;
	uint64_t capacity; /* power of two; 0: no table yet */
	uint64_t *slots; /* 0: empty */
	char pad[64 - sizeof(int) - sizeof(uint32_t) - 2 * sizeof(uint64_t)];
};

static _Atomic uint8_t filter[FILTER_SLOTS];
static struct shard shards[SHARDS];

static uint64_t mix(uint64_t a)
{
	a ^= a >> 29;
	a *= 0xbf58476d1ce4e5b9ull;
	a ^= a >> 32;
	return a;
}

static void lock(struct shard *s)
{
	for (unsigned spins = 0; atomic_exchange_explicit(&s->lock, 1, memory_order_acquire); spins++)
		if (spins > 64)
			sched_yield();
}

static void unlock(struct shard *s)
{
	atomic_store_explicit(&s->lock, 0, memory_order_release);
}

static uint64_t *find(const struct shard *s, uint64_t address, uint64_t h)
{
	uint64_t mask = s->capacity - 1;
	for (uint64_t i = (h >> 6) & mask;; i = (i + 1) & mask)
		if (s->slots[i] == address || !s->slots[i])
			return &s->slots[i];
}

static int grow(struct shard *s)
{
	uint64_t capacity = s->capacity ? 2 * s->capacity : FIRST_CAPACITY;
	uint64_t *slots = mmap(NULL, capacity * sizeof *slots, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (slots == MAP_FAILED)
		return -1;
	struct shard grown = { .capacity = capacity, .slots = slots };
	for (uint64_t i = 0; i < s->capacity; i++)
		if (s->slots[i])
			*find(&grown, s->slots[i], mix(s->slots[i])) = s->slots[i];
	if (s->slots)
		munmap(s->slots, s->capacity * sizeof *s->slots);
	s->slots = slots;
	s->capacity = capacity;
	return 0;
}

int live_insert(uint64_t address)
{
	uint64_t h = mix(address);
	struct shard *s = &shards[h & (SHARDS - 1)];
	lock(s);
	if ((s->count + 1) * 2 > s->capacity && grow(s) < 0) {
		unlock(s);
		return -1;
	}
	uint64_t *slot = find(s, address, h);
	if (!*slot) {
		*slot = address;
		s->count++;
		_Atomic uint8_t *f = &filter[(h >> 40) & (FILTER_SLOTS - 1)];
		uint8_t c = atomic_load_explicit(f, memory_order_relaxed);
		while (c < 255 && !atomic_compare_exchange_weak(f, &c, (uint8_t)(c + 1)))
			;
	}
	unlock(s);
	return 0;
}

int live_remove(uint64_t address)
{
	uint64_t h = mix(address);
	_Atomic uint8_t *f = &filter[(h >> 40) & (FILTER_SLOTS - 1)];
	if (!atomic_load_explicit(f, memory_order_relaxed))
		return 0;
	struct shard *s = &shards[h & (SHARDS - 1)];
	lock(s);
	int found = 0;
	if (s->capacity) {
		uint64_t *slot = find(s, address, h);
		if (*slot) {
			found = 1;
			s->count--;
			/* Backward-shift deletion: no tombstones. */
			uint64_t mask = s->capacity - 1, i = (uint64_t)(slot - s->slots);
			for (uint64_t j = (i + 1) & mask; s->slots[j]; j = (j + 1) & mask) {
				uint64_t home = (mix(s->slots[j]) >> 6) & mask;
				if (((j - home) & mask) >= ((j - i) & mask)) {
					s->slots[i] = s->slots[j];
					i = j;
				}
			}
			s->slots[i] = 0;
			uint8_t c = atomic_load_explicit(f, memory_order_relaxed);
			while (c > 0 && c < 255 && !atomic_compare_exchange_weak(f, &c, (uint8_t)(c - 1)))
				;
		}
	}
	unlock(s);
	return found;
}

void live_forget(void)
{
	/* The child's copies of the tables are its own memory now; just start over. */
	memset(shards, 0, sizeof shards);
	memset((void *)filter, 0, sizeof filter);
}
