/*
 * offcpu.c - a thread's time off CPU seen from another process (offcpu.h).
 *
 * A blocked thread whose CPU time has not moved is in the same call: its
 * stack is read once, not at every tick. A stack read while the thread
 * woke (its CPU time moved from before the read to after the walk) is
 * thrown away and read again at the next tick. A thread woken but not yet
 * run is still in its call (its own measure of the call counts that wait
 * too). A running thread's schedstat is brought up to date only at the
 * scheduler's tick, so time it seems not to have run counts as runnable
 * only past RUNNABLE_SLACK_NS, and the next reading's catch-up is taken
 * from runnable time first.
 */
#include "offcpu.h"

#include "remote.h"
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/* Past a scheduler tick (HZ=100 at the least): how far a running thread's schedstat may lag its CPU time. */
#define RUNNABLE_SLACK_NS 10000000
/* Frame-pointer candidates tried when a blocked stack's walk stops short. */
#define RBP_GUESSES 4

const char *proc_stat_fields(const char *stat)
{
	const char *p = strrchr(stat, ')'); /* the command may hold anything, ')' and spaces too */
	return p && p[1] == ' ' && p[2] ? p + 2 : NULL;
}

/* A /proc file of thread t, kept open and read from its start into buf: its length, or -1 (the thread ended). */
static ssize_t read_task(const struct offcpu_thread *t, int *fd, const char *file, char *buf, size_t size)
{
	if (*fd < 0) {
		char path[96];
		snprintf(path, sizeof path, "/proc/%d/task/%d/%s", (int)t->pid, (int)t->tid, file);
		*fd = open(path, O_RDONLY | O_CLOEXEC);
		if (*fd < 0)
			return -1;
	}
	ssize_t n = pread(*fd, buf, size - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return n;
}

void offcpu_end(struct offcpu_thread *t)
{
	int *fds[] = { &t->schedstat_fd, &t->stat_fd, &t->syscall_fd };
	for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
		if (*fds[i] >= 0) {
			close(*fds[i]);
			*fds[i] = -1;
		}
}

static int runtime_of(struct offcpu_thread *t, uint64_t *runtime)
{
	char buf[128];
	if (read_task(t, &t->schedstat_fd, "schedstat", buf, sizeof buf) < 0)
		return -1;
	*runtime = strtoull(buf, NULL, 10);
	return 0;
}

uint64_t offcpu_cpu_ns(struct offcpu_thread *t)
{
	uint64_t runtime;
	return runtime_of(t, &runtime) == 0 ? runtime : 0;
}

void offcpu_begin(struct offcpu_thread *t, pid_t pid, pid_t tid, uint64_t now_ns)
{
	memset(t, 0, sizeof *t);
	t->pid = pid;
	t->tid = tid;
	t->schedstat_fd = t->stat_fd = t->syscall_fd = -1;
	t->blocked_syscall = -1;
	t->last_poll_ns = now_ns;
	if (runtime_of(t, &t->last_runtime) < 0)
		t->last_runtime = 0;
	offcpu_end(t); /* its files are kept open from its first tick on (cpu mode under collect -p has none) */
}

void offcpu_skip(struct offcpu_thread *t, uint64_t now_ns)
{
	uint64_t runtime;
	if (runtime_of(t, &runtime) == 0)
		t->last_runtime = runtime;
	t->last_poll_ns = now_ns;
	t->off_blocked_ns = t->off_runnable_ns = 0;
	t->in_call = 0;
}

/* A state_of that is none: the thread has ended (a zombie waiting to be reaped, or gone). */
#define ENDED UINT32_MAX

/* The thread's state as a sample's (TRACE_STATE_*), or ENDED. */
static uint32_t state_of(struct offcpu_thread *t)
{
	char buf[1024];
	if (read_task(t, &t->stat_fd, "stat", buf, sizeof buf) < 0)
		return errno == EMFILE || errno == ENFILE || errno == ENOMEM ? TRACE_STATE_RUNNABLE : ENDED;
	const char *fields = proc_stat_fields(buf);
	char c = fields ? fields[0] : 'R';
	return c == 'Z' || c == 'X' ? ENDED
	       : c == 'S' || c == 'I' ? TRACE_STATE_SLEEPING
	       : c == 'D'	    ? TRACE_STATE_UNINTERRUPTIBLE
	       : c == 'T' || c == 't' ? TRACE_STATE_STOPPED
				      : TRACE_STATE_RUNNABLE;
}

/* The stack of the call a blocked thread waits in, read and unwound: its stack id (0: it ran meanwhile, or it
 * is not in a call we can read), the system call in *syscall. */
static uint32_t blocked_stack(struct offcpu_thread *t, struct offcpu_sink *s, uint64_t runtime, int32_t *syscall)
{
	char buf[256];
	if (read_task(t, &t->syscall_fd, "syscall", buf, sizeof buf) < 0 || !strncmp(buf, "running", 7))
		return 0;
	/* "NR ARG1 .. ARG6 SP PC", or "-1 SP PC" outside a system call */
	char *fields[9];
	int n = 0;
	for (char *save = NULL, *f = strtok_r(buf, " \n", &save); f && n < 9; f = strtok_r(NULL, " \n", &save))
		fields[n++] = f;
	if (n != 9 && n != 3)
		return 0;
	long nr = strtol(fields[0], NULL, 10);
	uint64_t sp = strtoull(fields[n - 2], NULL, 16), pc = strtoull(fields[n - 1], NULL, 16);
	struct remote_modules *rm = s->rm ? s->rm : s->modules ? s->modules(s->ctx) : NULL;
	if (!rm)
		return 0; /* not now: the time waits for a tick that can walk */
	struct iovec local = { s->stack_copy, OFFCPU_STACK_BYTES }, remote = { (void *)(uintptr_t)sp, OFFCPU_STACK_BYTES };
	ssize_t got = process_vm_readv(t->pid, &local, 1, &remote, 1, 0);
	uint64_t size = got > 0 ? (uint64_t)got : 0;
	uint32_t flags;
	uint32_t frames = remote_unwind(rm, pc, sp, 0, s->stack_copy, size, s->ips, s->max_frames, &flags);
	/* /proc gives sp and pc, not rbp: a frame whose CFA is rbp (-O0 code, frames with stack realigned or
	 * sanitized) ends the walk. rbp points at its frame's saved rbp, the first word above sp that holds a
	 * higher stack address (with a return address beside it): a few such candidates are tried, and the
	 * walk that reaches the root, or else goes furthest, is kept (as the agent's wall.c does). */
	for (uint64_t at = sp, tries = 0; (flags & REMOTE_UNWIND_TRUNCATED) && tries < RBP_GUESSES && at + 16 <= sp + size;
	     at += 8) {
		uint64_t saved, ret;
		memcpy(&saved, s->stack_copy + (at - sp), 8);
		memcpy(&ret, s->stack_copy + (at - sp) + 8, 8);
		if (saved <= at || saved >= sp + size || !remote_modules_holds_code(rm, ret))
			continue;
		tries++;
		uint32_t guess_flags;
		uint32_t guessed =
			remote_unwind(rm, pc, sp, at, s->stack_copy, size, s->guess_ips, s->max_frames, &guess_flags);
		if (guessed > frames || !(guess_flags & REMOTE_UNWIND_TRUNCATED)) {
			memcpy(s->ips, s->guess_ips, guessed * sizeof *s->ips);
			frames = guessed;
			flags = guess_flags;
		}
	}
	uint64_t after;
	if (runtime_of(t, &after) < 0 || after != runtime)
		return 0; /* it ran while its stack was read: what was read may be anyone's */
	*syscall = (int32_t)nr;
	if (flags & REMOTE_UNWIND_TRUNCATED)
		s->truncated++;
	return s->stack_id(s->ctx, s->ips, frames,
			   TRACE_STACK_LEAF_EXACT | ((flags & REMOTE_UNWIND_TRUNCATED) ? TRACE_STACK_TRUNCATED : 0));
}

/* The sample for the time thread t was seen blocked, on the call it waits in: written, 1; 0 when it woke
 * meanwhile (the time waits for the next tick). */
static int write_blocked(struct offcpu_thread *t, struct offcpu_sink *s, uint32_t state, uint64_t runtime,
			 uint64_t weight, uint32_t last_cpu_stack, uint64_t now_ns)
{
	uint32_t stack = 0;
	int32_t syscall = -1;
	if (t->blocked_stack && t->blocked_runtime == runtime) {
		stack = t->blocked_stack;
		syscall = t->blocked_syscall;
	} else if ((stack = blocked_stack(t, s, runtime, &syscall))) {
		t->blocked_stack = stack;
		t->blocked_runtime = runtime;
		t->blocked_syscall = syscall;
	} else if (state == TRACE_STATE_STOPPED && last_cpu_stack) {
		stack = last_cpu_stack; /* stopped where it last ran */
	} else {
		return 0;
	}
	s->sample(s->ctx, t, now_ns, stack, (uint32_t)weight, state, syscall);
	return 1;
}

int offcpu_tick(struct offcpu_thread *t, struct offcpu_sink *s, uint32_t last_cpu_stack, uint64_t now_ns)
{
	const int64_t interval = (int64_t)s->interval_ns;
	uint64_t runtime;
	if (runtime_of(t, &runtime) < 0)
		return -1;
	uint64_t ran = runtime > t->last_runtime ? runtime - t->last_runtime : 0;
	uint64_t elapsed = now_ns > t->last_poll_ns ? now_ns - t->last_poll_ns : 0;
	int64_t delta = (int64_t)elapsed - (int64_t)ran;
	t->last_runtime = runtime;
	t->last_poll_ns = now_ns;
	uint32_t state = TRACE_STATE_ON_CPU;
	if (delta < 0) {
		/* CPU time that lagged (below): counted off CPU before, as runnable first. */
		int64_t back = t->off_runnable_ns > 0 ? (t->off_runnable_ns < -delta ? t->off_runnable_ns : -delta) : 0;
		t->off_runnable_ns -= back;
		t->off_blocked_ns += delta + back;
	} else if (delta > 0) {
		state = state_of(t);
		if (state == ENDED)
			return -1;
		/* Woken but not run since it was seen blocked: still inside its blocking call, which has not
		 * returned (the thread's own measure of the call counts this wait too). */
		if (state == TRACE_STATE_RUNNABLE && t->in_call && !ran)
			state = TRACE_STATE_SLEEPING;
		if (state == TRACE_STATE_RUNNABLE)
			t->off_runnable_ns += delta;
		else
			t->off_blocked_ns += delta;
	}
	int was_in_call = t->in_call;
	if (state != TRACE_STATE_ON_CPU)
		t->in_call = state == TRACE_STATE_SLEEPING || state == TRACE_STATE_UNINTERRUPTIBLE;
	else if (ran)
		t->in_call = 0;
	t->blocked_ticks = !ran && was_in_call && t->in_call ? t->blocked_ticks + 1 : 0;
	if (t->off_blocked_ns >= interval && state != TRACE_STATE_ON_CPU && state != TRACE_STATE_RUNNABLE) {
		uint64_t weight = (uint64_t)(t->off_blocked_ns / interval);
		if (write_blocked(t, s, state, runtime, weight, last_cpu_stack, now_ns))
			t->off_blocked_ns -= (int64_t)weight * interval;
	}
	/* A running thread's CPU time is brought up to date only at the scheduler's tick: time it seems not
	 * to have run may be that lag, and is runnable only past it (the next reading makes it up). */
	int64_t runnable = t->off_runnable_ns - RUNNABLE_SLACK_NS;
	uint32_t stack = last_cpu_stack ? last_cpu_stack : t->blocked_stack;
	if (runnable >= interval && stack) {
		uint64_t weight = (uint64_t)(runnable / interval);
		t->off_runnable_ns -= (int64_t)weight * interval;
		s->sample(s->ctx, t, now_ns, stack, (uint32_t)weight, TRACE_STATE_RUNNABLE, -1);
	}
	return 0;
}
