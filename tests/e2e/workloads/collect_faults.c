/*
 * collect_faults - one thread whose CPU time is mostly kernel work outside
 * system calls, for tests/e2e/collect_faults.sh: it maps 64 MiB of anonymous
 * memory, writes one byte per page (each write a page fault, the kernel
 * zeroing the page) and unmaps it, until it used SECONDS of CPU. It times
 * the touching (faults, a store per page in user mode) and the mmap/munmap
 * calls apart on its own CPU clock and prints, at the end:
 *   faults=SECONDS calls=SECONDS cpu=SECONDS
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "workload_util.h"

#define REGION (64ul << 20)

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0, faults = 0, calls = 0;
	long page = sysconf(_SC_PAGESIZE);
	double start = thread_cpu_seconds();
	while (thread_cpu_seconds() - start < seconds) {
		double t0 = thread_cpu_seconds();
		volatile char *m = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return 1;
		double t1 = thread_cpu_seconds();
		for (unsigned long at = 0; at < REGION; at += (unsigned long)page) /* @touch-loop */
			m[at] = 1; /* @touch */
		double t2 = thread_cpu_seconds();
		munmap((void *)m, REGION);
		double t3 = thread_cpu_seconds();
		faults += t2 - t1;
		calls += (t1 - t0) + (t3 - t2);
	}
	fprintf(stderr, "faults=%.6f calls=%.6f cpu=%.6f\n", faults, calls, thread_cpu_seconds() - start);
	return 0;
}
