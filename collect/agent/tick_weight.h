/*
 * tick_weight.h - how many sampling periods a CPU-time timer's sample at a
 * system call stands for, when perf's task-clock event counts user time.
 * Pure arithmetic, apart from sampler.c so a unit test can check it.
 *
 * The timer fires on a scheduler tick that finds the thread running. Its
 * 1 + overruns periods (elapsed) are the thread's CPU time of both modes
 * since its previous signal; perf's signals in that span counted some of it
 * as user time (perf_counted); the rest perf did not count: kernel time
 * (system calls, page faults), or overflows perf dropped. A tick found at a
 * system call samples the mode and, where ticks see the thread at random
 * moments, stands for all of elapsed, as it always did. But beside other
 * load a thread may run in slices shorter than a tick, be seen only every
 * few tens of ticks, and then more often in a system call than its share:
 * measured, a busy loop calling clock_gettime for 0.3% of its time, niced
 * beside two CPU hogs, got 1 + 32 overruns at clock_gettime, 32 ms perf had
 * counted already (e2e_collect_exec failed so under load; 9 of 75 such runs
 * over-counted by up to 15%). So a sample claims no more than the uncounted
 * time known to exist: its own span's, plus what the spans of ticks found in
 * user mode left unclaimed (owed). The thread's total can then never exceed
 * its CPU time, and where the two sources see different moments the weight
 * is what it was (collect_kernel_time's read() and futex sites within a
 * point or two of the same before and after). Time perf could not count
 * while the sampling signal was blocked (inside dlopen, where a library's
 * constructor may run for long: perf's overflows are then delivered at the
 * unblocking system call and dropped there, as the timer's) is all
 * uncounted, so it is all claimed there.
 */
#ifndef IPSCOPE_TICK_WEIGHT_H
#define IPSCOPE_TICK_WEIGHT_H

#include <stdint.h>

#define TICK_OWED_MAX (1u << 30)

/* A timer signal found in user mode: its span's uncounted periods are owed to the next one found at a system call. */
static inline void tick_owe(uint32_t elapsed, uint32_t perf_counted, uint32_t *owed)
{
	uint64_t sum = (uint64_t)*owed + (elapsed > perf_counted ? elapsed - perf_counted : 0);
	*owed = sum < TICK_OWED_MAX ? (uint32_t)sum : TICK_OWED_MAX;
}

/* A timer signal found at a system call: its periods, at least 1, at most elapsed and the uncounted ones known; *owed keeps the rest. */
static inline uint32_t tick_weight(uint32_t elapsed, uint32_t perf_counted, uint32_t *owed)
{
	uint64_t known = (uint64_t)*owed + (elapsed > perf_counted ? elapsed - perf_counted : 0);
	uint32_t weight = known < elapsed ? (uint32_t)known : elapsed;
	if (!weight)
		weight = 1;
	uint64_t left = known > weight ? known - weight : 0;
	*owed = left < TICK_OWED_MAX ? (uint32_t)left : TICK_OWED_MAX;
	return weight;
}

#endif
