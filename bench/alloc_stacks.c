/*
 * alloc_stacks - the allocation workload of many distinct stacks that
 * bench/alloc-size profiles: ALLOCATIONS mallocs (default 1 million), each
 * from one of 2^LEVELS distinct stacks (default 12) chosen at random: a
 * recursion of PREFIX frames (default 30), then LEVELS calls, each through
 * one of two functions (a recursive descent: the same call from two
 * callers), so the stacks share their outer frames and differ below. Sizes
 * are random in 16..4111 bytes; every allocation first frees the block of a
 * slot chosen at random among LIVE (default 10,000), so blocks live for a
 * random while, as in a long-running program's heap. Everything is freed at
 * the end: nothing leaks. Deterministic: the same run makes the same calls.
 * Built without inlining or sibling calls (bench/alloc.cmake), so every
 * level is a frame.
 * usage: bench_alloc_stacks [ALLOCATIONS] [LEVELS] [PREFIX] [LIVE]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t rng_state = 88172645463325252ull;

static uint64_t rng_next(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void *descend(int levels, uint64_t path, size_t size);

/* Two callers of descend: the path's bit at each level picks one. */
static void *left(int levels, uint64_t path, size_t size)
{
	return descend(levels - 1, path >> 1, size);
}

static void *right(int levels, uint64_t path, size_t size)
{
	return descend(levels - 1, path >> 1, size);
}

static void *descend(int levels, uint64_t path, size_t size)
{
	if (levels == 0)
		return malloc(size);
	return (path & 1) ? left(levels, path, size) : right(levels, path, size);
}

static void *prefix(int frames, int levels, uint64_t path, size_t size)
{
	if (frames == 0)
		return descend(levels, path, size);
	return prefix(frames - 1, levels, path, size);
}

int main(int argc, char **argv)
{
	long allocations = argc > 1 ? atol(argv[1]) : 1000000;
	int levels = argc > 2 ? atoi(argv[2]) : 12;
	int frames = argc > 3 ? atoi(argv[3]) : 30;
	long live = argc > 4 ? atol(argv[4]) : 10000;
	if (allocations < 1 || levels < 0 || levels > 40 || frames < 0 || frames > 10000 || live < 1) {
		fprintf(stderr, "usage: bench_alloc_stacks [ALLOCATIONS] [LEVELS 0..40] [PREFIX] [LIVE]\n");
		return 2;
	}
	void **slots = calloc((size_t)live, sizeof *slots);
	if (!slots)
		return 1;
	for (long i = 0; i < allocations; i++) {
		uint64_t r = rng_next();
		long slot = (long)(r % (uint64_t)live);
		free(slots[slot]);
		slots[slot] = prefix(frames, levels, r >> 20, 16 + (r >> 40) % 4096);
		if (!slots[slot])
			return 1;
	}
	for (long i = 0; i < live; i++)
		free(slots[i]);
	free(slots);
	printf("allocations=%ld stacks=%llu\n", allocations, 1ull << levels);
	return 0;
}
