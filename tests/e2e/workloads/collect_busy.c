/* collect_busy - one thread burning a known amount of CPU (argv[1] seconds,
 * default 1), printing what its own CPU clock measured to stderr. */
#include <stdio.h>
#include <stdlib.h>

#include "workload_util.h"

__attribute__((noinline)) static void busy_loop(double seconds)
{
	burn_cpu(seconds);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	double start = thread_cpu_seconds();
	busy_loop(seconds);
	fprintf(stderr, "cpu_seconds=%.6f\n", thread_cpu_seconds() - start);
	return 0;
}
