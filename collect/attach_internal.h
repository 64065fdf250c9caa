/*
 * attach_internal.h - what collect -p's files share: attach.c (the run: checks,
 * the loop, threads, stacks, the trace's first and last records),
 * attach_perf.c (the perf events on the target's threads and their rings)
 * and attach_wall.c (blocked threads, seen from /proc, in wall mode).
 */
#ifndef IPSCOPE_ATTACH_INTERNAL_H
#define IPSCOPE_ATTACH_INTERNAL_H

#include "collect.h"
#include "hashmap.h"
#include "offcpu.h"
#include "remote.h"

#include <stdint.h>
#include <sys/types.h>

/* Bytes of user stack perf copies at each sample, and read of a blocked thread's (at most). */
#define ATTACH_STACK_BYTES (32u << 10)

struct attach_thread {
	pid_t tid;
	int alive;
	uint64_t runtime_at_start; /* its CPU time (schedstat) when collect first saw it */
	uint32_t last_cpu_stack; /* its last CPU sample's stack id; 0: none yet */
	uint64_t exit_ns; /* when it ended (alive 0): its records up to then are still its own */
	int inherited; /* its creator's events followed it (a FORK record) */
	uint32_t fds_at, nfds; /* its own events: a->fds[fds_at ..] (0: it inherited them) */
	uint64_t sampled; /* periods its CPU samples stand for */
	uint64_t counted_ns; /* its inherited events' counts at its end (PERF_RECORD_READ): its CPU time */
	uint64_t descendants_ns; /* own events: the counts of ended threads that inherited them, folded into them */
	uint32_t root; /* inherited: 1 + the index of the thread whose own events it inherited; 0: none known */
	uint32_t exit_drain; /* ended: the drain that saw it end (its EXIT record waits a drain for its counts) */
	int exit_pending;
	struct offcpu_thread wall; /* wall mode: its time off CPU (attach_wall.c) */
};

struct attach {
	const struct collect_options *o;
	pid_t pid;
	struct trace_writer *w;
	struct remote_modules *rm;
	int write_failed;

	/* perf (attach_perf.c) */
	int ncpu;
	int *ring_fd; /* per CPU: the event whose ring the others write to */
	uint8_t **ring;
	size_t ring_bytes; /* data pages, a power of two */
	uint32_t stack_bytes; /* asked of each sample */
	int *fds;
	uint32_t nfds, fds_cap;
	int kernel_time; /* samples in the kernel are kept (charged to the user stack that entered it) */
	int inherit_thread; /* the kernel follows new threads, not forked processes */
	uint8_t *scratch; /* the record being handled, copied whole out of its ring */
	struct pending *pending; /* the records of a drain, in time order (attach_perf.c) */
	uint32_t npending, pending_cap;
	int *ring_hup; /* per CPU: the ring's event reported POLLHUP (its thread ended): read, no longer polled */
	int rescan; /* records were lost (perf's LOST): the maps are read again */
	uint32_t drains;

	/* threads */
	struct attach_thread *threads;
	uint32_t nthreads, threads_cap;

	/* stacks: each distinct one written once */
	struct hashmap stack_index;
	uint64_t *frames;
	uint64_t nframes, frames_cap;
	struct attach_stack {
		uint64_t first;
		uint32_t n, flags;
	} *stacks;
	uint32_t nstacks, stacks_cap;
	uint64_t ips[1024 + 1], guess_ips[1024 + 1];
	uint8_t *stack_copy; /* OFFCPU_STACK_BYTES for attach_wall.c's reads */

	/* totals */
	uint64_t samples, weight, lost;
	uint64_t other_process; /* samples of processes it forked (kernels before 5.13 follow them): left out */
	uint64_t exit_charged, exit_charged_threads; /* periods charged at threads' ends, and in how many */
	uint64_t random; /* xorshift state: whole periods, and one more with the probability of the rest */
};

/* attach.c */
/* The thread tid (added, alive, when new: its START record with its name); NULL when out of room. */
struct attach_thread *attach_thread_of(struct attach *a, pid_t tid, uint64_t now_ns, int write_start);
/* A thread's START record, with its name from /proc. */
void attach_thread_start(struct attach *a, const struct attach_thread *t, uint64_t now_ns);
/* The thread tid's latest entry, alive or ended; NULL when none. */
struct attach_thread *attach_thread_find(struct attach *a, pid_t tid);
/* The thread ended: its EXIT record waits for its events' counts (PERF_RECORD_READ comes after PERF_RECORD_EXIT). */
void attach_thread_exit(struct attach *a, pid_t tid, uint64_t time_ns);
/* Threads that ended before the last drain (all: every one): CPU after the last sample charged, EXIT written. */
void attach_finish_exits(struct attach *a, int all);
/* A thread's CPU time so far by its own events (since the attach; 0: unknown). */
uint64_t attach_perf_thread_ns(const struct attach *a, const struct attach_thread *t);
/* A thread's new name (COMM): its NAME record. */
void attach_thread_name(struct attach *a, pid_t tid, const char *name, uint64_t time_ns);
/* The trace id of a stack (innermost first), written the first time it is seen. */
uint32_t attach_stack_id(struct attach *a, const uint64_t *ips, uint32_t n, uint32_t flags);
/* One sample: written, counted. */
void attach_sample(struct attach *a, uint64_t time_ns, pid_t tid, uint32_t stack, uint32_t weight, uint32_t state,
		   int32_t syscall);
/* The process exec'd another program: its modules again, a PROCESS record. */
void attach_exec(struct attach *a, uint64_t time_ns);
/* CLOCK_MONOTONIC now. */
uint64_t attach_now_ns(void);

/* attach_perf.c */
/* Open a task-clock event on every thread of the process (and each new one, through inheritance), with
 * their rings; 0, or -1 with a message printed. */
int attach_perf_open(struct attach *a);
/* Read every ring to its end, handling each record. */
void attach_perf_drain(struct attach *a);
/* Stop sampling: the events are disabled, their rings read to their ends (the events stay open, to be read). */
void attach_perf_stop(struct attach *a);
/* Close the events and unmap their rings. */
void attach_perf_close(struct attach *a);

/* attach_wall.c */
/* One wall-clock tick: each thread's time off CPU since the last, as samples on the call it waits in. */
void attach_wall_tick(struct attach *a, uint64_t now_ns);

#endif
