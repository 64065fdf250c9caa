/*
 * workload_util.h - what the end-to-end workloads share: reading the calling
 * thread's own CPU clock (the reference the profiler's numbers are checked
 * against) and burning CPU until that clock has advanced by a given amount.
 */
#ifndef IPSCOPE_WORKLOAD_UTIL_H
#define IPSCOPE_WORKLOAD_UTIL_H

#include <time.h>

static inline double thread_cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static volatile unsigned long workload_sink;

/* Spin in user space until this thread has used `seconds` more CPU. */
static inline void burn_cpu(double seconds)
{
	double end = thread_cpu_seconds() + seconds;
	while (thread_cpu_seconds() < end)
		for (unsigned long i = 0; i < 200000; i++)
			workload_sink += i ^ (i >> 3);
}

#endif
