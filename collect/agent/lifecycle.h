/*
 * lifecycle.h - the agent's lifecycle, above every other part: a thread's
 * beginning and end (lifecycle.c, called on the thread by
 * program_threads.c), attaching to collect's shared memory (attach.c), and
 * the region control a program calls (region.c).
 */
#ifndef IPSCOPE_LIFECYCLE_H
#define IPSCOPE_LIFECYCLE_H

#include "agent.h"

/* lifecycle.c */
/* The calling thread begins: every part's share of it, in order (sampled from here); call with the signal blocked. */
void lifecycle_thread_begin(void);
/* It ends (its end recorded, its ring handed back); call with the signal blocked. */
void lifecycle_thread_end(void);

/* The agent's start in this image (lifecycle.c): 0 not yet, 1 under way, 2 over. */
extern _Atomic int lifecycle_start_state;
/* An allocation before the start: start now if this thread may (the main one, libc initialised); whether the start is over. */
int lifecycle_start_early(void);
/* Whether the calling thread is running the start (its allocations are the agent's own). */
int lifecycle_starting_here(void);

/* sandbox.c */
/* Whether a seccomp filter covers the calling thread (installed on it or its creator, or on every thread). */
int sandbox_covers_me(void);
/* Whether any thread of the process installed one. */
int sandbox_any(void);

/* attach.c */
/* Where collect's shared memory is (the environment): 0, or -1 when this process is not to attach. */
int agent_find_shm(void);
/* Whether collect records allocations in this process (the environment says so before it attaches). */
int agent_allocs_requested(void);
/* Attach this process to collect's shared memory (again, in a fork child): 0, or -1 (then it stays inert). */
int agent_attach(void);
/* An earlier image of this process left rings (an exec in place): close them, and record the exec. */
void agent_take_over(void);

/* region.c */
/* ipscope.h's region control, found by the program as weak symbols: sampling on, sampling off. */
void ipscope_agent_start(void);
void ipscope_agent_stop(void);

#endif
