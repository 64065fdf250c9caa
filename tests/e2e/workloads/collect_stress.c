/*
 * collect_stress - the situations an in-process sampler can get wrong, each
 * run for a bounded time while the profiler samples every thread:
 *   dlopen PLUGIN  one thread loops dlopen/dlclose while another burns CPU
 *                  inside the plugin (the loader-lock deadlock of
 *                  doc/ARCHITECTURE.md);
 *   fork           fork()ed and system()ed children doing work of their own
 *                  while a second thread is sampled (a child must not keep
 *                  any thread's perf event open: it exits 8 if it does);
 *   threads        1000 short-lived threads, up to 300 alive at once (more
 *                  than the agent's first chunk of rings);
 *   phdr           one thread loops dl_iterate_phdr with a slow callback (it
 *                  holds the loader's lock most of the time, and is sampled
 *                  there) while another runs 12000 instructions of
 *                  straight-line code (nearly every sample a new pc: a miss
 *                  in libunwind's caches, which takes its global lock and
 *                  then the loader's).
 * Prints "ok" to stderr at the end.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "workload_util.h"

static volatile int stop;
static const char *plugin;

static void *loader_loop(void *arg)
{
	long *loads = arg;
	while (!stop) {
		void *h = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
		if (h) {
			dlclose(h);
			(*loads)++;
		}
	}
	return NULL;
}

static int stress_dlopen(void)
{
	void *h = dlopen(plugin, RTLD_NOW);
	if (!h)
		return 1;
	void (*work)(double) = (void (*)(double))dlsym(h, "plugin_work");
	long loads = 0;
	pthread_t loader;
	pthread_create(&loader, NULL, loader_loop, &loads);
	for (int i = 0; i < 20; i++)
		work(0.05);
	stop = 1;
	pthread_join(loader, NULL);
	fprintf(stderr, "dlopen/dlclose cycles: %ld\n", loads);
	return loads > 0 ? 0 : 1;
}

/* Open perf event fds in this process. */
static int perf_fds_open(void)
{
	int n = 0;
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *e;
	char path[300], target[256];
	while (dir && (e = readdir(dir))) {
		snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
		ssize_t len = readlink(path, target, sizeof target - 1);
		if (len > 0) {
			target[len] = 0;
			n += strstr(target, "perf_event") != NULL;
		}
	}
	if (dir)
		closedir(dir);
	return n;
}

static void *spinner(void *arg)
{
	(void)arg;
	while (!stop)
		burn_cpu(0.01);
	return NULL;
}

static int stress_fork(void)
{
	pthread_t other;
	pthread_create(&other, NULL, spinner, NULL);
	burn_cpu(0.02); /* both threads have started sampling */
	for (int i = 0; i < 5; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			burn_cpu(0.05);
			_exit(perf_fds_open() ? 8 : 7);
		}
		burn_cpu(0.05);
		int status;
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 7)
			return 1;
		if (system("true") != 0)
			return 1;
	}
	stop = 1;
	pthread_join(other, NULL);
	return 0;
}

static pthread_barrier_t gate;

static void *short_thread(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&gate);
	burn_cpu(0.002);
	return NULL;
}

static int stress_threads(void)
{
	enum { WAVE = 300, WAVES = 4 };
	static pthread_t threads[WAVE];
	for (int w = 0; w < WAVES; w++) {
		pthread_barrier_init(&gate, NULL, WAVE);
		for (int i = 0; i < WAVE; i++)
			if (pthread_create(&threads[i], NULL, short_thread, NULL))
				return 1;
		for (int i = 0; i < WAVE; i++)
			pthread_join(threads[i], NULL);
		pthread_barrier_destroy(&gate);
	}
	return 0;
}

static int in_callback(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)info;
	(void)size;
	(void)data;
	for (unsigned long i = 0; i < 2000; i++)
		workload_sink += i;
	return 0;
}

static void *phdr_loop(void *arg)
{
	long *walks = arg;
	while (!stop) {
		dl_iterate_phdr(in_callback, NULL);
		(*walks)++;
		sched_yield(); /* let others have the loader's lock now and then */
	}
	return NULL;
}

#define STEP4(i) x = x * 31 + (i); x ^= x >> 7; x = x * 31 + (i) + 1; x ^= x >> 5;
#define STEP64(i) STEP4(i) STEP4(i + 2) STEP4(i + 4) STEP4(i + 6) STEP4(i + 8) STEP4(i + 10) STEP4(i + 12) \
	STEP4(i + 14) STEP4(i + 16) STEP4(i + 18) STEP4(i + 20) STEP4(i + 22) STEP4(i + 24) STEP4(i + 26) \
	STEP4(i + 28) STEP4(i + 30)
#define STEP1K(i) STEP64(i) STEP64(i + 32) STEP64(i + 64) STEP64(i + 96) STEP64(i + 128) STEP64(i + 160) \
	STEP64(i + 192) STEP64(i + 224) STEP64(i + 256) STEP64(i + 288) STEP64(i + 320) STEP64(i + 352) \
	STEP64(i + 384) STEP64(i + 416) STEP64(i + 448) STEP64(i + 480)

/* Thousands of distinct instruction addresses, so samples keep landing on new ones. */
__attribute__((noipa)) static unsigned long straight_line(unsigned long x)
{
	STEP1K(0) STEP1K(1000) STEP1K(2000)
	return x;
}

static int stress_phdr(void)
{
	long walks = 0;
	pthread_t walker;
	pthread_create(&walker, NULL, phdr_loop, &walks);
	double end = thread_cpu_seconds() + 0.5;
	unsigned long x = 1;
	while (thread_cpu_seconds() < end)
		for (int i = 0; i < 100; i++)
			x = straight_line(x);
	workload_sink += x;
	stop = 1;
	pthread_join(walker, NULL);
	fprintf(stderr, "dl_iterate_phdr walks: %ld\n", walks);
	return walks > 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	int rc = 2;
	if (argc > 2 && !strcmp(argv[1], "dlopen")) {
		plugin = argv[2];
		rc = stress_dlopen();
	} else if (argc > 1 && !strcmp(argv[1], "fork")) {
		rc = stress_fork();
	} else if (argc > 1 && !strcmp(argv[1], "threads")) {
		rc = stress_threads();
	} else if (argc > 1 && !strcmp(argv[1], "phdr")) {
		rc = stress_phdr();
	}
	if (rc == 0)
		fprintf(stderr, "ok\n");
	return rc;
}
