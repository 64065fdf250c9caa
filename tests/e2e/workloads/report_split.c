/* report_split - ~70% of the CPU in heavy(), ~30% in light(), interleaved
 * in rounds so that neither owns the start or the end of the run. argv[1]:
 * total CPU seconds (default 1.5). The lines marked @... are read by
 * tests/e2e/report_split.sh. */
#include <stdio.h>
#include <stdlib.h>

#include "workload_util.h"

static volatile unsigned long split_sink;

__attribute__((noinline)) static void heavy(double seconds)
{ /* @heavy-begin */
	double end = thread_cpu_seconds() + seconds;
	while (thread_cpu_seconds() < end)
		for (unsigned long i = 0; i < 100000; i++)
			split_sink += i ^ (i >> 3);
} /* @heavy-end */

__attribute__((noinline)) static void light(double seconds)
{ /* @light-begin */
	double end = thread_cpu_seconds() + seconds;
	while (thread_cpu_seconds() < end)
		for (unsigned long i = 0; i < 100000; i++)
			split_sink += i ^ (i >> 5);
} /* @light-end */

int main(int argc, char **argv)
{
	double total = argc > 1 ? atof(argv[1]) : 1.5;
	double start = thread_cpu_seconds();
	for (int round = 0; round < 10; round++) {
		heavy(total * 0.07); /* @call-heavy */
		light(total * 0.03); /* @call-light */
	}
	fprintf(stderr, "cpu_seconds=%.6f\n", thread_cpu_seconds() - start);
	return 0;
}
