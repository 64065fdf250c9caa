/*
 * collect_churn - many threads, for tests/e2e/collect_threads_many.sh. Each
 * thread burns a known amount of CPU; the program prints the sum of the
 * threads' own CPU clocks, the answer the profile is checked against.
 *
 *   short N SECONDS   N threads one after another, 4 at a time, each
 *                     burning SECONDS (shorter than a sampling interval or
 *                     two: most of their time falls between samples)
 *   many N SECONDS    N threads alive at once (64 KiB stacks): they start,
 *                     wait until all N exist and 0.2 s more, then each burns
 *                     SECONDS
 * Prints "threads=N cpu_seconds=S" to stderr.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "workload_util.h"

static double each;
static pthread_barrier_t all_started;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static double total_cpu;

/* burn_cpu's steps are too coarse for threads of a fraction of a millisecond. */
static void burn_finely(double seconds)
{
	double end = thread_cpu_seconds() + seconds;
	while (thread_cpu_seconds() < end)
		for (unsigned long i = 0; i < 2000; i++)
			workload_sink += i ^ (i >> 3);
}

static void *worker(void *arg)
{
	if (arg)
		pthread_barrier_wait(&all_started);
	burn_finely(each);
	double used = thread_cpu_seconds();
	pthread_mutex_lock(&lock);
	total_cpu += used;
	pthread_mutex_unlock(&lock);
	return NULL;
}

static int run_short(int n)
{
	for (int i = 0; i < n; i += 4) {
		pthread_t t[4];
		int k = n - i < 4 ? n - i : 4;
		for (int j = 0; j < k; j++)
			if (pthread_create(&t[j], NULL, worker, NULL))
				return 1;
		for (int j = 0; j < k; j++)
			pthread_join(t[j], NULL);
	}
	return 0;
}

static int run_many(int n)
{
	pthread_t *t = calloc((size_t)n, sizeof *t);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 << 10);
	pthread_barrier_init(&all_started, NULL, (unsigned)n + 1);
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], &attr, worker, &all_started)) {
			fprintf(stderr, "pthread_create failed after %d threads\n", i);
			return 1;
		}
	/* Every thread exists and waits: give the profiler time to notice before they run. */
	struct timespec pause = { 0, 200000000 };
	nanosleep(&pause, NULL);
	pthread_barrier_wait(&all_started);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	free(t);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	int n = atoi(argv[2]);
	each = atof(argv[3]);
	int rc = !strcmp(argv[1], "short") ? run_short(n) : !strcmp(argv[1], "many") ? run_many(n) : 2;
	fprintf(stderr, "threads=%d cpu_seconds=%.6f\n", n, total_cpu);
	return rc;
}
