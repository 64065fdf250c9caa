/*
 * export_threads.cpp - workload of the export end-to-end test
 * (tests/e2e/export_consumers.sh): three threads with distinct names and
 * distinct amounts of CPU time, spending it in what the exporters must carry
 * through: a function inlined into its caller (mix into hash_loop), a C++
 * template (sum_squares<unsigned long>), and recursion (recurse), whose
 * cumulative time pprof and analyze flat must both count once per sample.
 *
 * Threads take their name from the thread that creates them (Linux copies
 * comm at clone), so the names are right from the first sample on.
 *
 * usage: export_threads [SCALE]   (CPU seconds of the heaviest thread, 0.6)
 */
#include <pthread.h>
#include <sys/prctl.h>
#include <time.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

static double thread_cpu_seconds()
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static inline __attribute__((always_inline)) uint64_t mix(uint64_t x)
{
	x ^= x >> 31;
	x *= 0x7fb5d329728ea185ull;
	x ^= x >> 27;
	return x;
}

__attribute__((noinline)) uint64_t hash_loop(uint64_t n, uint64_t seed)
{
	for (uint64_t i = 0; i < n; i++)
		seed = mix(seed + i);
	return seed;
}

template <typename T> __attribute__((noinline)) T sum_squares(const std::vector<T> &v)
{
	T sum = 0;
	for (const T &x : v)
		sum += x * x + (sum >> 3);
	return sum;
}

__attribute__((noinline)) uint64_t recurse(int depth, uint64_t n)
{
	if (depth == 0)
		return hash_loop(n, (uint64_t)n);
	uint64_t r = recurse(depth - 1, n);
	/* Keeps the call a real call: no tail call, no loop. */
	asm volatile("" : "+r"(r));
	return r + (uint64_t)depth;
}

static volatile uint64_t sink;

/* Spend about seconds of this thread's CPU time in the three shapes. */
static void work(double seconds)
{
	std::vector<unsigned long> v(4096);
	for (size_t i = 0; i < v.size(); i++)
		v[i] = i * 2654435761u;
	double end = thread_cpu_seconds() + seconds;
	while (thread_cpu_seconds() < end) {
		sink += hash_loop(20000, sink);
		sink += sum_squares(v);
		sink += recurse(4, 20000);
	}
}

static double scale = 0.6;

static void *heavy(void *)
{
	work(scale);
	return nullptr;
}

static void *light(void *)
{
	work(scale / 2);
	return nullptr;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		scale = atof(argv[1]);
	pthread_t a, b;
	prctl(PR_SET_NAME, "exp-heavy");
	if (pthread_create(&a, nullptr, heavy, nullptr))
		return 1;
	prctl(PR_SET_NAME, "exp-light");
	if (pthread_create(&b, nullptr, light, nullptr))
		return 1;
	prctl(PR_SET_NAME, "exp-main");
	work(scale / 3);
	pthread_join(a, nullptr);
	pthread_join(b, nullptr);
	printf("%llu\n", (unsigned long long)(sink & 1));
	return 0;
}
