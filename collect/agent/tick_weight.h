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
 * uncounted, so it is all claimed there. A tick found in a page fault
 * (sampler.c, kernel_tick) claims the same uncounted time, without the floor
 * of one period. The two sources' signals are not aligned: a span where perf
 * counted more than the timer's periods repays what earlier spans owed, or
 * owed time would grow from jitter alone and be claimed twice.
 */
#ifndef IPSCOPE_TICK_WEIGHT_H
#define IPSCOPE_TICK_WEIGHT_H

#include <stdint.h>

#define TICK_OWED_MAX (1u << 30)

/* What is known uncounted after a span: owed, plus what perf did not count of the span, less what it counted
 * beyond it (the two sources' signals are not aligned: a span's surplus is an earlier span's shortfall). */
static inline uint64_t tick_known(uint32_t elapsed, uint32_t perf_counted, uint32_t owed)
{
	int64_t known = (int64_t)owed + (int64_t)elapsed - (int64_t)perf_counted;
	return known > 0 ? (uint64_t)known : 0;
}

/* A timer signal found in user mode: its span's uncounted periods are owed to the next one found at a system call. */
static inline void tick_owe(uint32_t elapsed, uint32_t perf_counted, uint32_t *owed)
{
	uint64_t known = tick_known(elapsed, perf_counted, *owed);
	*owed = known < TICK_OWED_MAX ? (uint32_t)known : TICK_OWED_MAX;
}

/* A timer signal found at a system call: its periods, at least 1, at most elapsed and the uncounted ones known; *owed keeps the rest. */
static inline uint32_t tick_weight(uint32_t elapsed, uint32_t perf_counted, uint32_t *owed)
{
	uint64_t known = tick_known(elapsed, perf_counted, *owed);
	uint32_t weight = known < elapsed ? (uint32_t)known : elapsed;
	if (!weight)
		weight = 1;
	uint64_t left = known > weight ? known - weight : 0;
	*owed = left < TICK_OWED_MAX ? (uint32_t)left : TICK_OWED_MAX;
	return weight;
}

/* A timer signal whose tick found the thread in the kernel outside a system call (a page fault): the uncounted
 * periods known, at most elapsed, possibly none (perf counted the span); *owed keeps the rest. */
static inline uint32_t tick_uncounted(uint32_t elapsed, uint32_t perf_counted, uint32_t *owed)
{
	uint64_t known = tick_known(elapsed, perf_counted, *owed);
	uint32_t weight = known < elapsed ? (uint32_t)known : elapsed;
	uint64_t left = known - weight;
	*owed = left < TICK_OWED_MAX ? (uint32_t)left : TICK_OWED_MAX;
	return weight;
}

#endif
