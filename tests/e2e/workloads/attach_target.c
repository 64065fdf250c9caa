/*
 * attach_target - a program that runs without collect and is attached to
 * (tests/e2e/attach_cpu.sh): it prints "ready" once running, then for
 * SECONDS its main thread splits its CPU time 3:1 between three_quarters()
 * and one_quarter(). At 1 s it starts a thread named "late" that burns 0.3 s
 * of CPU in late_work(), and, given PLUGIN (collect_plugin's path), dlopens
 * it and spends what one_quarter() spent in its plugin_work() from then on.
 * It exits 0, or 3 when a sleep was cut short.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "workload_util.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void three_quarters(void)
{
	burn_cpu(0.003);
}

__attribute__((noinline)) static void one_quarter(void)
{
	burn_cpu(0.001);
}

__attribute__((noinline)) static void late_work(void)
{
	burn_cpu(0.3);
}

static void *late(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "late");
	late_work();
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: attach_target SECONDS [PLUGIN]\n");
		return 2;
	}
	double seconds = atof(argv[1]), start = now();
	void (*plugin_work)(double) = NULL;
	pthread_t thread;
	int started = 0;
	printf("ready\n");
	fflush(stdout);
	while (now() - start < seconds) {
		three_quarters();
		if (plugin_work)
			plugin_work(0.001);
		else
			one_quarter();
		if (!started && now() - start >= 1.0) {
			started = 1;
			if (pthread_create(&thread, NULL, late, NULL) != 0)
				return 1;
			void *h = argc > 2 ? dlopen(argv[2], RTLD_NOW) : NULL;
			if (argc > 2 && !(plugin_work = (void (*)(double))dlsym(h, "plugin_work")))
				return 1;
		}
	}
	if (started)
		pthread_join(thread, NULL);
	/* A sleep the profiler must not shorten. */
	double t = now();
	struct timespec ts = { 0, 200000000 };
	if (nanosleep(&ts, NULL) != 0 || now() - t < 0.2)
		return 3;
	return 0;
}
