/* test_tick_weight - the weight of a CPU-time timer's sample at a system
 * call, or in a page fault, beside perf's user-time samples
 * (collect/agent/tick_weight.h). */
#include "check.h"
#include "tick_weight.h"

int main(void)
{
	uint32_t owed = 0;
	/* Ticks that see the thread at random: a tick found in a system call stands for its span (4 ms at 1 ms periods). */
	CHECK(tick_weight(4, 0, &owed) == 4 && owed == 0);
	tick_owe(4, 2, &owed); /* a tick found in user mode: 2 periods perf did not count */
	tick_owe(4, 2, &owed);
	CHECK(owed == 4);
	CHECK(tick_weight(4, 2, &owed) == 4 && owed == 2);
	/* A tick found in a page fault: what perf did not count of its span (and what was owed), possibly nothing. */
	owed = 0;
	CHECK(tick_uncounted(4, 0, &owed) == 4 && owed == 0);
	CHECK(tick_uncounted(4, 3, &owed) == 1 && owed == 0);
	CHECK(tick_uncounted(4, 4, &owed) == 0 && owed == 0); /* no floor of 1: perf counted the whole span */
	CHECK(tick_uncounted(4, 9, &owed) == 0 && owed == 0);
	tick_owe(4, 1, &owed);
	CHECK(tick_uncounted(2, 2, &owed) == 2 && owed == 1); /* at most its span; the rest stays owed */
	owed = TICK_OWED_MAX;
	CHECK(tick_uncounted(UINT32_MAX, 0, &owed) == UINT32_MAX && owed <= TICK_OWED_MAX);
	/* Seen after 32 ms perf counted (beside two CPU hogs): 1 period, not 33. */
	owed = 0;
	CHECK(tick_weight(33, 32, &owed) == 1 && owed == 0);
	CHECK(tick_weight(33, 33, &owed) == 1 && owed == 0);
	CHECK(tick_weight(33, 40, &owed) == 1 && owed == 0);
	/* What earlier user-mode ticks left uncounted may be claimed, up to the span. */
	tick_owe(5, 1, &owed);
	CHECK(tick_weight(33, 31, &owed) == 6 && owed == 0);
	tick_owe(40, 0, &owed);
	CHECK(tick_weight(8, 8, &owed) == 8 && owed == 32);
	/* The signal was blocked for 200 ms (a constructor inside dlopen): perf counted none of it. */
	owed = 0;
	CHECK(tick_weight(201, 0, &owed) == 201 && owed == 0);
	/* Never more than the span, whatever is owed; what is owed stays bounded. */
	owed = TICK_OWED_MAX - 1;
	tick_owe(UINT32_MAX, 0, &owed);
	CHECK(owed == TICK_OWED_MAX);
	CHECK(tick_weight(3, 0, &owed) == 3 && owed == TICK_OWED_MAX);
	CHECK(tick_weight(3, 3, &owed) == 3 && owed == TICK_OWED_MAX - 3);
	return check_exit_status();
}
