/*
 * offcpu.h - a thread's time off CPU seen from another process, without a
 * signal (a signal would cut its sleeps and reads short: doc/ARCHITECTURE.md).
 *
 * At every tick of wall-clock time the caller hands each thread here. What
 * its CPU time (schedstat) moved less than the tick is time off CPU, added
 * up and written in whole intervals as samples in the thread's state
 * (stat): blocked, on the stack of its system call (/proc/.../syscall gives
 * its user sp and pc, the stack is read with process_vm_readv and unwound
 * with remote.h's walk), or runnable, on its last CPU sample's stack. Time
 * on CPU is not written here: the caller samples it by the thread's CPU
 * clock (perf events under collect -p, the agent's timers in a launched
 * run). This is the agent's wall mode (collect/agent/wall.c) done from
 * outside.
 *
 * Used by collect -p -m wall (attach_wall.c) and, in a launched run's wall
 * mode, for the processes whose agent has no sampler thread of its own
 * (wall_watch.c).
 */
#ifndef IPSCOPE_OFFCPU_H
#define IPSCOPE_OFFCPU_H

#include <stdint.h>
#include <sys/types.h>

struct remote_modules;

/* Bytes of a blocked thread's stack read (at most). */
#define OFFCPU_STACK_BYTES (32u << 10)
/* Ticks in a row a thread stayed in the same blocked call before it may be looked at less often (its CPU
 * clock still says exactly how much of them it ran): the agent's wall.c does the same. */
#define OFFCPU_LONG_BLOCKED_TICKS 200

struct offcpu_thread {
	pid_t pid, tid;
	int schedstat_fd, stat_fd, syscall_fd; /* -1: not open */
	uint64_t last_runtime, last_poll_ns;
	/* wall time it was not seen running, blocked or runnable, not yet written (< 0: its CPU time lagged) */
	int64_t off_blocked_ns, off_runnable_ns;
	uint32_t blocked_stack; /* the stack of the blocked call it was last seen in; 0: none */
	uint64_t blocked_runtime; /* its CPU time when that stack was read */
	int32_t blocked_syscall;
	int in_call; /* last seen blocked, and has not run since: a wake-up's wait is still the call's */
	uint32_t blocked_ticks; /* ticks in a row it was found in the same blocked call without running */
};

/* Where a tick's samples go, and what a walk needs. */
struct offcpu_sink {
	void *ctx;
	/* The trace id of a stack (innermost first); 0 when it cannot be had. */
	uint32_t (*stack_id)(void *ctx, const uint64_t *ips, uint32_t n, uint32_t flags);
	/* One sample of thread t. */
	void (*sample)(void *ctx, const struct offcpu_thread *t, uint64_t time_ns, uint32_t stack, uint32_t weight,
		       uint32_t state, int32_t syscall);
	struct remote_modules *rm; /* the process's objects; NULL: asked of modules() when a walk needs them */
	struct remote_modules *(*modules)(void *ctx); /* NULL when it cannot be had now (the time then waits) */
	uint8_t *stack_copy; /* OFFCPU_STACK_BYTES */
	uint64_t *ips; /* max_frames */
	uint64_t *guess_ips; /* max_frames: a second walk's (a frame pointer guessed) */
	uint32_t max_frames;
	uint64_t interval_ns;
	uint32_t truncated; /* walks that stopped before the stack's root, counted here (the maps may be stale) */
};

/* Start watching thread tid of process pid: its CPU time now is where its first tick counts from. */
void offcpu_begin(struct offcpu_thread *t, pid_t pid, pid_t tid, uint64_t now_ns);
/* One tick: its time off CPU since the last, as samples (runnable time on last_cpu_stack, 0: none known);
 * 0, or -1 when the thread is gone. */
int offcpu_tick(struct offcpu_thread *t, struct offcpu_sink *s, uint32_t last_cpu_stack, uint64_t now_ns);
/* Time not seen running since the last tick is forgotten (sampling was off): the next tick counts from now. */
void offcpu_skip(struct offcpu_thread *t, uint64_t now_ns);
/* Its CPU time so far (schedstat's first field); 0 when unreadable. */
uint64_t offcpu_cpu_ns(struct offcpu_thread *t);
/* Close its /proc files (it ended, or the watch did). */
void offcpu_end(struct offcpu_thread *t);

/* The fields of a /proc/.../stat text from the third (the state letter) on, past the command; NULL when cut. */
const char *proc_stat_fields(const char *stat);

#endif
