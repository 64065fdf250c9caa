/*
 * collect_region - known work inside and outside an ipscope_start() /
 * ipscope_stop() region (collect/include/ipscope.h), for tests/e2e/collect_region.sh:
 * 0.3 s in before_work, 0.4 s in region_work between ipscope_start() and
 * ipscope_stop(), 0.25 s in after_work. Under `collect --paused` only
 * region_work may have samples. "timed S" instead burns S seconds of CPU in
 * timed_work, for --delay and --duration, and "toggle FILE" burns 0.3 s in
 * before_work, creates FILE and waits until it is gone (the test sends
 * SIGUSR2 to collect from outside the tree, then removes it) and burns 0.25 s
 * in after_work: with sampling on at the start, only before_work has samples.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipscope.h"
#include "workload_util.h"

#define WORK(name, seconds)                              \
	__attribute__((noinline)) static void name(void) \
	{                                                \
		burn_cpu(seconds);                       \
		__asm__ volatile("" ::: "memory");       \
	}
WORK(before_work, 0.3)
WORK(region_work, 0.4)
WORK(after_work, 0.25) /* (not 0.3: identical functions would be folded into one) */

__attribute__((noinline)) static void timed_work(double seconds)
{
	burn_cpu(seconds);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "timed")) {
		timed_work(atof(argv[2]));
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "toggle")) {
		before_work();
		FILE *f = fopen(argv[2], "w");
		if (!f || fclose(f))
			return 1;
		for (int i = 0; i < 1000 && access(argv[2], F_OK) == 0; i++)
			usleep(10000);
		after_work();
		return 0;
	}
	before_work();
	ipscope_start();
	region_work();
	ipscope_stop();
	after_work();
	return 0;
}
