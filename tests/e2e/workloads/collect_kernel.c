/*
 * collect_kernel - three threads that spend known shares of their CPU time
 * in the kernel, for tests/e2e/collect_kernel_time.sh: a profile must charge
 * kernel time to the user stack that made the system call, not to whatever
 * ran next.
 *
 *   reader  reads /dev/zero, 32 times 64 KiB, then computes in user mode
 *   waker   wakes a futex nobody waits on, 1000 times in a row, then computes
 *   busy    computes only
 * The lines of those calls carry markers (at-sign read-call...).
 * Each thread runs for argv[1] seconds of its own CPU time (default 0.5) and
 * prints its tid, its CPU time and the CPU time spent in each marked call,
 * measured with its own clock around the call: the answers.
 */
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "workload_util.h"

static double budget = 0.5;

/* User-mode work, about `seconds` long, with no system call inside. */
__attribute__((noipa)) static void compute(unsigned long rounds)
{
	for (unsigned long i = 0; i < rounds; i++)
		workload_sink += i ^ (i >> 3);
}

static void *reader(void *arg)
{
	(void)arg;
	int fd = open("/dev/zero", O_RDONLY);
	static char buf[64 << 10];
	double in_read = 0, in_compute = 0, start = thread_cpu_seconds();
	while (thread_cpu_seconds() - start < budget) {
		double t0 = thread_cpu_seconds();
		for (int i = 0; i < 32; i++)
			if (read(fd, buf, sizeof buf) != (ssize_t)sizeof buf) /* @read-call */
				abort();
		double t1 = thread_cpu_seconds();
		compute(40000); /* @reader-compute */
		double t2 = thread_cpu_seconds();
		in_read += t1 - t0;
		in_compute += t2 - t1;
	}
	fprintf(stderr, "thread reader tid=%ld cpu=%.6f read=%.6f compute=%.6f\n", (long)syscall(SYS_gettid),
		thread_cpu_seconds(), in_read, in_compute);
	return NULL;
}

static void *waker(void *arg)
{
	(void)arg;
	static int word;
	double in_futex = 0, in_compute = 0, start = thread_cpu_seconds();
	while (thread_cpu_seconds() - start < budget) {
		double t0 = thread_cpu_seconds();
		for (int i = 0; i < 1000; i++)
			syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0); /* @futex-call */
		double t1 = thread_cpu_seconds();
		compute(40000); /* @waker-compute */
		double t2 = thread_cpu_seconds();
		in_futex += t1 - t0;
		in_compute += t2 - t1;
	}
	fprintf(stderr, "thread waker tid=%ld cpu=%.6f futex=%.6f compute=%.6f\n", (long)syscall(SYS_gettid),
		thread_cpu_seconds(), in_futex, in_compute);
	return NULL;
}

static void *busy(void *arg)
{
	(void)arg;
	double start = thread_cpu_seconds();
	while (thread_cpu_seconds() - start < budget)
		compute(40000); /* @busy-loop */
	fprintf(stderr, "thread busy tid=%ld cpu=%.6f\n", (long)syscall(SYS_gettid), thread_cpu_seconds());
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		budget = atof(argv[1]);
	pthread_t t[3];
	void *(*fn[3])(void *) = { reader, waker, busy };
	for (int i = 0; i < 3; i++)
		if (pthread_create(&t[i], NULL, fn[i], NULL))
			return 1;
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	return 0;
}
