/*
 * alloc_workload - the malloc/free-heavy program bench/alloc-overhead
 * profiles: THREADS threads (default 2), each making PAIRS malloc/free pairs
 * (default 10 million) of sizes 16..1039 B from four call sites at a few
 * stack depths, keeping a window of 256 live blocks so that a free is not
 * always of the block just allocated (as in real programs, where a free
 * lands on another cache line than the last malloc). Every block is freed:
 * nothing leaks. It times its own work (CLOCK_MONOTONIC from the threads'
 * start to their join) and prints "elapsed_ns=N allocations=M" to stderr.
 * With DEPTH, every allocation is made DEPTH calls below the loop instead
 * (to measure the cost of recording one allocation against stack depth).
 * usage: bench_alloc_workload [PAIRS_PER_THREAD] [THREADS] [DEPTH]
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { WINDOW = 256 };

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct worker {
	pthread_t thread;
	long pairs;
	int depth; /* -1: the four sites */
	uint64_t seed;
	uint64_t checksum;
};

static uint64_t next_random(uint64_t *seed)
{
	*seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
	return *seed >> 33;
}

/* One allocation, DEPTH calls below the loop: sites differ in depth so the
 * stacks differ in length, as a program's do. noinline keeps the frames. */
__attribute__((noinline)) static void *allocate(int depth, size_t size)
{
	if (depth > 0) {
		void *p = allocate(depth - 1, size);
		__asm__ volatile("" ::: "memory");
		return p;
	}
	char *p = malloc(size);
	if (p)
		p[0] = (char)size;
	return p;
}

__attribute__((noinline)) static void *site_small(size_t size) { return allocate(2, 16 + size % 48); }
__attribute__((noinline)) static void *site_medium(size_t size) { return allocate(6, 64 + size % 192); }
__attribute__((noinline)) static void *site_large(size_t size) { return allocate(12, 256 + size % 784); }
__attribute__((noinline)) static void *site_deep(size_t size) { return allocate(24, 32 + size % 96); }

static void *work(void *arg)
{
	struct worker *w = arg;
	char *window[WINDOW];
	memset(window, 0, sizeof window);
	for (long i = 0; i < w->pairs; i++) {
		uint64_t r = next_random(&w->seed);
		char *p;
		if (w->depth >= 0)
			p = allocate(w->depth, 16 + (r >> 2) % 240);
		else switch (r & 3) {
		case 0: p = site_small(r >> 2); break;
		case 1: p = site_medium(r >> 2); break;
		case 2: p = site_large(r >> 2); break;
		default: p = site_deep(r >> 2); break;
		}
		if (!p)
			abort();
		unsigned slot = (unsigned)(r >> 12) % WINDOW;
		if (window[slot]) {
			w->checksum += (unsigned char)window[slot][0];
			free(window[slot]);
		}
		window[slot] = p;
	}
	/* the window's blocks: the last frees of the pairs */
	for (int i = 0; i < WINDOW; i++)
		free(window[i]);
	return NULL;
}

int main(int argc, char **argv)
{
	long pairs = argc > 1 ? atol(argv[1]) : 10000000;
	int threads = argc > 2 ? atoi(argv[2]) : 2;
	int depth = argc > 3 ? atoi(argv[3]) : -1;
	if (pairs < 1 || threads < 1 || threads > 64 || depth > 1000) {
		fprintf(stderr, "usage: bench_alloc_workload [PAIRS_PER_THREAD] [THREADS (1..64)] [DEPTH (0..1000)]\n");
		return 2;
	}
	struct worker w[64];
	uint64_t start = now_ns();
	for (int t = 0; t < threads; t++) {
		w[t] = (struct worker){ .pairs = pairs, .depth = depth, .seed = 12345u + (uint64_t)t };
		if (pthread_create(&w[t].thread, NULL, work, &w[t]) != 0)
			return 1;
	}
	uint64_t checksum = 0;
	for (int t = 0; t < threads; t++) {
		pthread_join(w[t].thread, NULL);
		checksum += w[t].checksum;
	}
	fprintf(stderr, "elapsed_ns=%llu allocations=%llu checksum=%llu\n",
		(unsigned long long)(now_ns() - start), (unsigned long long)pairs * (unsigned long long)threads,
		(unsigned long long)checksum);
	return 0;
}
