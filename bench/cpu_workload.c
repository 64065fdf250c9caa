/*
 * cpu_workload - the CPU-bound program bench/cpu-overhead profiles: recursion,
 * sorting and hashing at realistic stack depths, single-threaded. It times
 * its own work (CLOCK_MONOTONIC around the work only) and prints
 * "elapsed_ns=N" to stderr, so profiler start-up and shutdown are not counted,
 * and "cpu_ns=N", the process's CPU time over the same work (kernel time
 * included: what a profiler makes the kernel do in its threads, such as
 * copying stacks at samples, is charged there).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t fib(int n)
{
	return n < 2 ? (uint64_t)n : fib(n - 1) + fib(n - 2);
}

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t sort_rounds(int rounds)
{
	enum { N = 100000 };
	static uint64_t v[N];
	uint64_t seed = 1, sum = 0;
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < N; i++)
			v[i] = seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		qsort(v, N, sizeof *v, compare_u64);
		sum += v[r % N];
	}
	return sum;
}

int main(int argc, char **argv)
{
	int scale = argc > 1 ? atoi(argv[1]) : 1;
	uint64_t start = now_ns(), start_cpu = cpu_ns(), result = 0;
	for (int i = 0; i < scale; i++)
		result += fib(30) + sort_rounds(10);
	fprintf(stderr, "elapsed_ns=%llu cpu_ns=%llu result=%llu\n", (unsigned long long)(now_ns() - start),
		(unsigned long long)(cpu_ns() - start_cpu), (unsigned long long)result);
	return 0;
}
