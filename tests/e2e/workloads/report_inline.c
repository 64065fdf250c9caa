/* report_inline - a function gcc inlines into its caller (hot_kernel, from
 * report_inline_hot.h) does most of the work: reports must show it as its
 * own inlined frame with its own file and line, under compute(). The lines
 * marked @... are read by tests/e2e/report_inline.sh. */
#include <stdio.h>
#include <stdlib.h>

#include "report_inline_hot.h"
#include "workload_util.h"

__attribute__((noinline)) static void compute(double seconds)
{
	double end = thread_cpu_seconds() + seconds;
	while (thread_cpu_seconds() < end)
		hot_kernel(200000); /* @call-hot */
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	double start = thread_cpu_seconds();
	compute(seconds);
	fprintf(stderr, "cpu_seconds=%.6f\n", thread_cpu_seconds() - start);
	return 0;
}
