/*
 * coverage.h - why CPU samples cover less than the CPU time threads measured
 * at their end. Three causes, told apart per thread: a thread with no sample
 * at all ended before its first (all its time is missing); a sampled thread's
 * last period is never sampled (at most one interval per thread); what a
 * thread misses beyond one interval the samples cannot see at all (with the
 * perf-task-clock+cpu-timer source: kernel time outside system calls, page
 * faults and interrupts). collect's summary and analyze info say the same.
 */
#ifndef IPSCOPE_COVERAGE_H
#define IPSCOPE_COVERAGE_H

#include <stdint.h>

struct coverage {
	uint32_t threads;            /* threads whose CPU time was measured */
	uint64_t measured_ns, sampled_ns;
	uint32_t unsampled_threads;  /* of them, threads without a sample */
	uint64_t unsampled_threads_ns; /* their CPU time, all missing */
	uint32_t partial_threads;    /* sampled threads missing some time */
	uint64_t partial_ns;         /* what they miss, up to one interval each */
	uint64_t unseen_ns;          /* what they miss beyond one interval each */
};

/* Add one thread: its measured CPU time and what its samples stand for. */
void coverage_add(struct coverage *c, uint64_t measured_ns, uint64_t sampled_ns, uint64_t interval_ns);
/* The time the threads' samples miss, summed over the threads that miss some. */
uint64_t coverage_missing(const struct coverage *c);

#endif
