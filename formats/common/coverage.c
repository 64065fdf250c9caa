/*
 * coverage.c - the causes of unsampled CPU time, per thread (coverage.h).
 *
 * A sampled thread's samples stand for whole periods: its time after the
 * last overflow (less than one interval) is never sampled, and a random
 * first expiry can make them stand for a little more than it ran. So only
 * what a thread misses beyond one interval is time the sampling cannot see,
 * and a thread covered past its clock adds nothing (its surplus says nothing
 * about another thread's gap).
 */
#include "coverage.h"

void coverage_add(struct coverage *c, uint64_t measured_ns, uint64_t sampled_ns, uint64_t interval_ns)
{
	c->threads++;
	c->measured_ns += measured_ns;
	c->sampled_ns += sampled_ns;
	if (!sampled_ns) {
		c->unsampled_threads++;
		c->unsampled_threads_ns += measured_ns;
		return;
	}
	if (measured_ns <= sampled_ns)
		return;
	uint64_t gap = measured_ns - sampled_ns, last = gap < interval_ns ? gap : interval_ns;
	c->partial_threads++;
	c->partial_ns += last;
	c->unseen_ns += gap - last;
}

uint64_t coverage_missing(const struct coverage *c)
{
	return c->unsampled_threads_ns + c->partial_ns + c->unseen_ns;
}
