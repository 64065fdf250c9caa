/*
 * attach_wall.c - collect -p -m wall: each thread's time off CPU, on the
 * call it waits in, read from /proc at every tick (offcpu.h). Its time on
 * CPU is sampled by its task-clock event (attach_perf.c): the agent's wall
 * mode (collect/agent/wall.c) with the running threads' samples timed by
 * their CPU clock instead of by a signal.
 */
#include "attach_internal.h"

static uint32_t stack_id(void *ctx, const uint64_t *ips, uint32_t n, uint32_t flags)
{
	return attach_stack_id(ctx, ips, n, flags);
}

static void sample(void *ctx, const struct offcpu_thread *t, uint64_t time_ns, uint32_t stack, uint32_t weight,
		   uint32_t state, int32_t syscall)
{
	attach_sample(ctx, time_ns, t->tid, stack, weight, state, syscall);
}

void attach_wall_tick(struct attach *a, uint64_t now_ns)
{
	struct offcpu_sink sink = { .ctx = a, .stack_id = stack_id, .sample = sample, .rm = a->rm,
				    .stack_copy = a->stack_copy, .ips = a->ips, .guess_ips = a->guess_ips,
				    .max_frames = a->o->max_frames, .interval_ns = a->o->interval_ns };
	for (uint32_t i = 0; i < a->nthreads; i++) {
		struct attach_thread *t = &a->threads[i];
		if (t->alive)
			offcpu_tick(&t->wall, &sink, t->last_cpu_stack, now_ns);
	}
}
