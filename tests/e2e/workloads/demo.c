/*
 * demo - the program the README's first command profiles: a small, realistic
 * mix of work (sorting, hashing, recursion) on two threads, about 0.7 s of CPU.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int compare_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t sort_random_arrays(int rounds)
{
	enum { N = 200000 };
	uint32_t *v = malloc(N * sizeof *v);
	uint64_t sum = 0, seed = 42;
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < N; i++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			v[i] = (uint32_t)(seed >> 33);
		}
		qsort(v, N, sizeof *v, compare_u32);
		sum += v[N / 2];
	}
	free(v);
	return sum;
}

static uint64_t fnv1a(const unsigned char *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

static uint64_t hash_buffers(int rounds)
{
	unsigned char buf[4096];
	uint64_t h = 0;
	memset(buf, 7, sizeof buf);
	for (int r = 0; r < rounds; r++) {
		buf[r % sizeof buf] = (unsigned char)r;
		h ^= fnv1a(buf, sizeof buf);
	}
	return h;
}

static uint64_t fib(int n)
{
	return n < 2 ? (uint64_t)n : fib(n - 1) + fib(n - 2);
}

static void *hasher_thread(void *arg)
{
	*(uint64_t *)arg = hash_buffers(60000);
	return NULL;
}

int main(void)
{
	pthread_t hasher;
	uint64_t hashed = 0;
	pthread_create(&hasher, NULL, hasher_thread, &hashed);
	uint64_t sorted = sort_random_arrays(12);
	uint64_t f = fib(32);
	pthread_join(hasher, NULL);
	printf("demo: sorted %llu, hashed %llx, fib %llu\n", (unsigned long long)sorted,
	       (unsigned long long)hashed, (unsigned long long)f);
	return 0;
}
