/*
 * agent.h - state shared by the files of the in-process agent
 * (libipscope-agent.so, loaded into the profiled program with LD_PRELOAD).
 *
 * The agent only captures: raw instruction pointers, timestamps, thread ids,
 * module maps. Everything costly happens in the collect process. Code reached
 * from the sampling signal handler must be async-signal-safe: no malloc, no
 * locks, no stdio, errno preserved.
 */
#ifndef IPSCOPE_AGENT_H
#define IPSCOPE_AGENT_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "../transport.h"

#define AGENT_SIGNAL SIGPROF
#define AGENT_TLS __attribute__((tls_model("initial-exec")))
#define AGENT_NO_RING UINT32_MAX
#define AGENT_EXPORT __attribute__((visibility("default")))

struct stack_table;

/* Per-thread state, in initial-exec TLS so the signal handler can reach it. */
struct agent_thread {
	uint32_t tid;
	uint32_t ring; /* AGENT_NO_RING until claimed */
	int timer_kind; /* enum transport_source of this thread's timer */
	int perf_fd;
	int perf_slot; /* index in the agent's table of open perf fds */
	timer_t timer;
	uint64_t last_count; /* perf task-clock ns at the previous sample */
	struct stack_table *stacks;
	int registered;
};

extern struct transport agent_transport;
extern volatile sig_atomic_t agent_enabled;
extern AGENT_TLS __thread struct agent_thread agent_self;

/* agent.c */
uint64_t agent_now_ns(void);
uint32_t agent_gettid(void);
/* Claim a ring for the calling thread; AGENT_NO_RING when all are taken. */
uint32_t agent_thread_ring(void);
/* Write a thread record for the calling thread with its current name. */
void agent_thread_record(uint32_t flags);
/* Block / restore the sampling signal around non-handler ring writes. */
void agent_block_signal(sigset_t *old);
void agent_restore_signal(const sigset_t *old);

/* sampler.c */
/* Install the signal handler and pick the sampling source; 0 or -1 (agent_error set). */
int sampler_init(void);
/* Start / stop the calling thread's CPU-time timer. */
int sampler_thread_start(void);
void sampler_thread_stop(void);
/* In a forked child: close every inherited perf event fd without touching the parent's events. */
void sampler_forget_all(void);
/* Unwind once outside a signal handler so libunwind sets up its per-thread cache. */
void sampler_warm_up(void);

/* stacks.c */
/* The agent-wide id of this stack (innermost first), writing its definition when new; UINT32_MAX on failure. */
uint32_t stack_table_id(struct stack_table **table, uint32_t ring, const uint64_t *ips, uint32_t n,
			uint32_t flags);
void stack_table_free(struct stack_table *table);

/* Wait (a little) for room for a record that must not be lost; NULL once collect is gone. */
void *agent_reserve_waiting(uint32_t ring, uint32_t type, uint32_t size);

/* modules.c */
/* Record modules loaded since the last call, and unloads; call with the signal blocked. */
void modules_scan(void);

#endif
