/* report_split - ~70% of the CPU in heavy(), ~30% in light(), interleaved
 * in rounds so that neither owns the start or the end of the run. argv[1]:
 * total CPU seconds (default 1.5); argv[2]: heavy's share (default 0.7,
 * light gets the rest: tests/e2e/diff.sh compares 0.7 with 0.3). The lines
 * marked @... are read by tests/e2e/report_split.sh. */
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
	double share = argc > 2 ? atof(argv[2]) : 0.7;
	double start = thread_cpu_seconds();
	for (int round = 0; round < 10; round++) {
		heavy(total * share / 10); /* @call-heavy */
		light(total * (1 - share) / 10); /* @call-light */
	}
	fprintf(stderr, "cpu_seconds=%.6f\n", thread_cpu_seconds() - start);
	return 0;
}
