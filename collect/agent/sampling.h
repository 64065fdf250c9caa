/*
 * sampling.h - the agent's sampling: what makes each thread take a sample
 * and the signal handler that takes it (sampler.c), the sources a thread is
 * given by its kernel id (sources.c), threads whose TLS is another's
 * (foreign.c), the agent's background thread (background.c), and wall
 * mode, in which that thread samples every thread (wall.c). Calls the core
 * and unwinding.
 */
#ifndef IPSCOPE_SAMPLING_H
#define IPSCOPE_SAMPLING_H

#include <time.h>
#include <ucontext.h>

#include "agent.h"

/* Whether sampling is on (collect's --delay, --paused, SIGUSR2, ipscope_start/stop). */
static inline int agent_sampling_on(void)
{
	return atomic_load_explicit(&agent_transport.header->paused, memory_order_relaxed) == 0;
}

/* sampler.c */
/* Pick the sampling signal (0: a free one) and source, install the handler; 0 or -1 (agent_error set). */
int sampler_init(uint32_t requested_source, int requested_signal);
/* Start the calling thread's sampling sources (perf event and CPU-time timer). */
void sampler_thread_start(void);
/* Stop them and free their slot, the thread's CPU time since its last sample charged first (sampler.c). */
void sampler_thread_stop(void);
/* The calling thread was started with routine (its pc): named under a charge when it has no sample. */
void sampler_thread_routine(uint64_t routine);
/* Stop every thread's sources (the program took the sampling signal). */
void sampler_stop_all(void);
/* Wall mode's sampler thread starts: every thread's sampling becomes its (called on that thread). */
void sampler_to_wall(void);
/* In a forked child: the parent's sources were not inherited; forget them (wall mode's slots too). */
void sampler_forget(void);
/* Sample a thread the agent did not start (one that existed before it, or a raw clone()): 0 or -1. */
int sampler_adopt(uint32_t tid);
/* Slots in use are below this. */
uint32_t sampler_slots_high(void);
/* Release an adopted thread's slot once it is gone. */
void sampler_release_adopted(uint32_t i);
/* Release every adopted slot whose thread is gone or has started a slot of its own (cpu mode's scan). */
void sampler_reap_adopted(void);
/* The CPU time of the threads with a slot, and of those that ended after having one (background.c compares it
 * with the process's: time no known thread used says an unknown thread runs). */
uint64_t sampler_accounted_cpu_ns(void);
/* Whether slot i was adopted for a thread that has since started its own slot (a scan raced its start). */
int sampler_adopted_twice(uint32_t i);
/* Whether thread tid has a slot (linear: for the background thread's scan). */
int sampler_knows(uint32_t tid);
/* The value si_value carries in a wall-mode signal to slot i. */
#define SAMPLER_WALL_COOKIE 0x49500000u
#define SAMPLER_WALL_VALUE(i) ((int)(SAMPLER_WALL_COOKIE ^ (uint32_t)(i)))

/* sources.c */
#define AGENT_PERF_PAGE_BYTES 4096u
/* sival_ptr of our CPU-time timers' signals: tells them from a timer of the program's. */
extern int source_timer_cookie;
/* A task-clock perf event of thread tid (0: the caller), disabled, close-on-exec: its fd or -1. */
int source_perf_open(uint64_t period_ns, uint32_t tid);
/* Close a perf event's descriptor if it still is ours (signal_set: F_SETSIG was done on it). */
void source_perf_close(int fd, const struct stat *opened, int signal_set);
/* A perf event signalling thread tid on every overflow, kept alive by its one-page mapping (returned); NULL.
 * Opened by the background thread when it runs (sources.c says why), else here. */
void *source_perf_start(uint32_t tid);
/* The background thread: open the events threads asked for (source_perf_start), in its own descriptor table. */
void source_serve_requests(void);
/* A CPU-time timer on thread tid's clock signalling tid every interval: 0 or -1. */
int source_timer_start(timer_t *timer, uint32_t tid);

/* foreign.c */
struct foreign_thread;
/* Whether any thread the agent did not start is known (then the handler asks the kernel who it runs on). */
int foreign_active(void);
/* For the discoverer, before tid's sources start: state for tid if its TLS turns out not to be its own;
 * slot: its sampling slot. 0, or -1 when none is left. */
int foreign_register(uint32_t tid, uint32_t slot);
/* tid is gone (or sampled as a thread of its own): its state is free again. */
void foreign_release(uint32_t tid);
/* In the handler: the calling thread's state when its TLS is another thread's, else NULL. Touches no TLS
 * but to read agent_self.tid (and to claim it when unclaimed). */
struct foreign_thread *foreign_self(void);
/* Its sampling slot. */
uint32_t foreign_slot(const struct foreign_thread *f);
/* In its handler: hand the sample (interrupted context uc) to the agent's thread, which unwinds it, and wait. */
void foreign_post(struct foreign_thread *f, uint32_t weight, uint32_t state, int32_t syscall_nr,
		  const ucontext_t *uc, uint64_t now);
/* The agent's thread is there to take posts (1), or has stopped (0). */
void foreign_serviced(int on);
/* A forked child: forget the parent's threads. */
void foreign_forget(void);
/* The agent's thread: unwind and record every posted sample into ring (AGENT_NO_RING: claims one). */
void foreign_service(uint32_t *ring);

/* background.c */
/* Start the agent's background thread (wall mode's sampler; in both modes it finds the threads the agent did not
 * start and unwinds the foreign ones): 0 or -1 (agent_error set in wall mode). */
int background_start(void);
/* At an image's or a fork child's start: wall mode starts it now, cpu mode once the program has a second thread
 * (others: it has already); 0 or background_start's -1. */
int background_start_when_needed(int others);
/* The program is about to start a thread: start the background thread if it waited for that. Not in a handler. */
void background_ensure(void);
/* Wall mode: whether the background thread samples the threads (else each is sampled by its CPU-time timer). */
int background_wall_sampler(void);
/* In the sampling handler while the background thread waits for a second thread: its work (frame tables asked
 * for, threads the agent did not start). Async-signal-safe. */
void background_handler_duty(void);
/* Adopt every thread of /proc/self/task the agent does not know; how many. Async-signal-safe. */
int background_scan_threads(void);
/* Stop it and wait (up to 50 ms) for its last samples; at exit the thread is left to the process's end. */
void background_stop(void);
/* A forked child has no background thread: start anew. */
void background_forget(void);

/* wall.c */
/* The background thread, at a wall-mode tick: sample slot i's thread (weight: the ticks since the last). */
void wall_tick(uint32_t ring, uint32_t i, uint64_t now, uint32_t weight);
/* The background thread, stopping: the ticks owed to long-blocked threads, written into ring. */
void wall_finish(uint32_t ring);
/* A forked child: the per-slot view is the parent's (sampler_forget calls it). */
void wall_forget(void);
/* Slot i got a new thread, or lost it (tid 0: the weight it was owed counts as exited-unsampled). */
void wall_slot_reset(uint32_t i, uint32_t tid);
/* In the handler, for a wall-mode signal to slot i: the weight owed, and the system call when the background
 * thread asked because the thread was blocked (else -1). */
uint32_t wall_take_weight(uint32_t i, int32_t *syscall);

#endif
