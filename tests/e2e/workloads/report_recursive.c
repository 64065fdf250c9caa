/* report_recursive - a recursive function of known depth (argv[1], default
 * 12) doing its work at the bottom: the tree must show the nesting, and flat
 * must count each sample once for recurse() however deep it is. The lines
 * marked @... are read by tests/e2e/report_recursive.sh. */
#include <stdio.h>
#include <stdlib.h>

#include "workload_util.h"

static volatile unsigned long recursive_sink;

__attribute__((noinline)) static void bottom(double seconds)
{
	double end = thread_cpu_seconds() + seconds;
	while (thread_cpu_seconds() < end)
		for (unsigned long i = 0; i < 100000; i++)
			recursive_sink += i ^ (i >> 3);
}

/* The addition after the call keeps gcc from turning this into a loop. */
__attribute__((noinline)) static unsigned long recurse(int depth, double seconds)
{
	if (depth <= 1) {
		bottom(seconds);
		return recursive_sink;
	}
	unsigned long r = recurse(depth - 1, seconds); /* @recurse-call */
	recursive_sink += r;
	return r + 1;
}

int main(int argc, char **argv)
{
	int depth = argc > 1 ? atoi(argv[1]) : 12;
	double start = thread_cpu_seconds();
	for (int i = 0; i < 10; i++)
		recurse(depth, 0.08);
	fprintf(stderr, "cpu_seconds=%.6f\n", thread_cpu_seconds() - start);
	return 0;
}
