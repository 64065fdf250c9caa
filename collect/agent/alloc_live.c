/*
 * alloc_live.c - the set of live chosen blocks, when only some allocations
 * are recorded (--allocs=RATE below 1, --alloc-bytes): a free is recorded
 * only when its block is in here, so frees of unchosen blocks never reach
 * the trace and cost a lookup only.
 *
 * Most frees at a low rate are of unchosen blocks, so a lookup starts with a
 * filter (live_filter, read inline by free_seen in allocations.h): one bit per
 * 16-byte slot of address space modulo LIVE_FILTER_BITS slots (8 MiB), set
 * while some chosen live block starts in that slot. A clear bit says "not in
 * the set" with one load and no lock. The slot is the address itself, not a
 * hash of it: a program frees what it touched lately, so the filter's lines
 * it reads are near the ones it read last and stay in the cache (a hashed
 * 64 KiB filter missed it, and lua's time at 1% showed that one load:
 * bench/README.md).
 * Otherwise the address is looked up in one of 64 shards, each an
 * open-addressing table under a spin lock of its own, static at first,
 * grown by mmap (never malloc: this runs inside malloc). A slot's shard is
 * its number modulo 64, so one shard's lock guards the count of blocks in
 * each of its slots (a 16-bit counter that sticks at its maximum) and the
 * setting and clearing of their bits (atomic: the other 63 bits of a word
 * are other shards').
 *
 * Why a reader may go by the bit without the lock: a block is inserted
 * before its allocation returns, and the program's own synchronisation
 * orders that before any free of it, on whatever thread.
 *
 * Signals: a shard lock is only ever taken by a hook at depth 0 (nested
 * events are decided by the outer writer once it is done, nesting.c),
 * so a handler on the same thread never waits for a lock its thread holds.
 */
#include "alloc_live.h"

#include <sched.h>
#include <string.h>
#include <sys/mman.h>

#define SHARDS 64u
#define FIRST_CAPACITY 256u

struct shard {
	_Atomic int lock;
	uint32_t count;
	uint64_t capacity; /* power of two; 0: no table yet */
	uint64_t *slots; /* 0: empty */
	char pad[64 - sizeof(int) - sizeof(uint32_t) - 2 * sizeof(uint64_t)];
};

_Atomic uint64_t live_filter[LIVE_FILTER_BITS / 64];
static uint16_t slot_count[LIVE_FILTER_BITS]; /* under the slot's shard's lock */
static struct shard shards[SHARDS];
static _Atomic int used; /* anything was inserted (live_forget has something to clear) */

static uint64_t slot_of(uint64_t address)
{
	return (address >> 4) & (LIVE_FILTER_BITS - 1);
}

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

/* Each shard's first table: no system call for the few blocks a low rate keeps (64 mmaps showed in
 * lua's time at 1%: bench/README.md). */
static uint64_t first_tables[SHARDS][FIRST_CAPACITY];

static int grow(struct shard *s)
{
	if (!s->capacity) {
		s->slots = first_tables[s - shards];
		s->capacity = FIRST_CAPACITY;
		return 0;
	}
	uint64_t capacity = 2 * s->capacity;
	uint64_t *slots = mmap(NULL, capacity * sizeof *slots, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (slots == MAP_FAILED)
		return -1;
	struct shard grown = { .capacity = capacity, .slots = slots };
	for (uint64_t i = 0; i < s->capacity; i++)
		if (s->slots[i])
			*find(&grown, s->slots[i], mix(s->slots[i])) = s->slots[i];
	if (s->slots != first_tables[s - shards])
		munmap(s->slots, s->capacity * sizeof *s->slots);
	s->slots = slots;
	s->capacity = capacity;
	return 0;
}

int live_insert(uint64_t address)
{
	uint64_t h = mix(address), slot = slot_of(address);
	struct shard *s = &shards[slot & (SHARDS - 1)];
	if (!atomic_load_explicit(&used, memory_order_relaxed))
		atomic_store(&used, 1);
	lock(s);
	if ((s->count + 1) * 2 > s->capacity && grow(s) < 0) {
		unlock(s);
		return -1;
	}
	uint64_t *entry = find(s, address, h);
	if (!*entry) {
		*entry = address;
		s->count++;
		if (slot_count[slot] == 0)
			atomic_fetch_or_explicit(&live_filter[slot >> 6], 1ull << (slot & 63), memory_order_relaxed);
		if (slot_count[slot] < UINT16_MAX)
			slot_count[slot]++;
	}
	unlock(s);
	return 0;
}

int live_remove(uint64_t address)
{
	if (!live_may_hold(address))
		return 0;
	uint64_t h = mix(address), slot = slot_of(address);
	struct shard *s = &shards[slot & (SHARDS - 1)];
	lock(s);
	int found = 0;
	if (s->capacity) {
		uint64_t *entry = find(s, address, h);
		if (*entry) {
			found = 1;
			s->count--;
			/* Backward-shift deletion: no tombstones. */
			uint64_t mask = s->capacity - 1, i = (uint64_t)(entry - s->slots);
			for (uint64_t j = (i + 1) & mask; s->slots[j]; j = (j + 1) & mask) {
				uint64_t home = (mix(s->slots[j]) >> 6) & mask;
				if (((j - home) & mask) >= ((j - i) & mask)) {
					s->slots[i] = s->slots[j];
					i = j;
				}
			}
			s->slots[i] = 0;
			/* A counter at its maximum stays there (its bit set: lookups only, never a wrong answer). */
			if (slot_count[slot] < UINT16_MAX && --slot_count[slot] == 0)
				atomic_fetch_and_explicit(&live_filter[slot >> 6], ~(1ull << (slot & 63)),
							  memory_order_relaxed);
		}
	}
	unlock(s);
	return found;
}

void live_forget(void)
{
	/* The child's copies of the tables are its own memory now; just start over. */
	memset(shards, 0, sizeof shards);
	if (atomic_load(&used)) {
		memset((void *)live_filter, 0, sizeof live_filter);
		memset(slot_count, 0, sizeof slot_count);
		memset(first_tables, 0, sizeof first_tables);
		atomic_store(&used, 0);
	}
}
