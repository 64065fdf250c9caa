/*
 * agent.h - the core of the in-process agent (libipscope-agent.so, loaded
 * into the profiled program with LD_PRELOAD): the contract every file of it
 * builds on. The agent is a guest: it only captures (raw instruction
 * pointers, timestamps, thread ids, module maps); everything costly happens
 * in collect. Code the sampling signal handler reaches is async-signal-safe:
 * no malloc, no locks, no stdio, errno preserved. It owns no descriptor the
 * program could meet at a low number, and one signal.
 *
 * The floor plan: the core calls nothing above it; a subsystem (one header
 * each) calls the core and those listed before it; the lifecycle calls them
 * all. sampler.c and wall.c call each other (wall mode's weights).
 *  core, agent.h and interpose.h: core.c (the state, clocks), interpose.c (REAL; whose text calls),
 *   rings.c (the shared memory), sections.c (signals blocked around the agent's work), nesting.c
 *   (agent_enter/leave: writers nested on a thread), thread_records.c, stacks.c (stacks deduplicated),
 *   alloc_live.c (the live chosen blocks: alloc_live.h, nesting.c decides by it too), futex.h
 *  unwinding.h: unwind_gate.c (no libunwind unwind across a fork), capture.c (a stack as an id),
 *   frametab*.c (frame tables and their walk: frametab.h, depending on nothing), unwinder.c (libunwind,
 *   the fallback, kept a guest), modules.c (the loaded objects), loader.c (dlopen and friends)
 *  sampling.h: sampler.c (per-thread sources, the signal handler), sources.c (perf event, CPU-time
 *   timer), tick_weight.h, foreign.c (threads whose TLS is another's), background.c (the agent's own
 *   thread, in every mode), wall.c (wall mode: that thread samples every thread at every tick)
 *  allocations.h: alloc_hooks.c (the malloc family; the start at the first allocation), alloc_record.c
 *   (one event), alloc_rebind.c (RTLD_DEEPBIND libraries pointed at the hooks), alloc_choice.h
 *  process.h: process.c (fork, exec, spawn, wait: PROCESS records);  signals.h: signals.c (the
 *   program's dispositions, masks, waits), blocking.c (calls retried after the profiler's EINTR)
 *  lifecycle.h: lifecycle.c (start, stop, fork; a thread's begin and end through one table),
 *   attach.c, program_threads.c (pthread_create, clone), region.c (ipscope.h), sandbox.c (seccomp
 *   filters the program installs), version.c
 */
#ifndef IPSCOPE_AGENT_H
#define IPSCOPE_AGENT_H

#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#include "interpose.h"
#include "transport.h"

#define AGENT_TLS __attribute__((tls_model("initial-exec")))
#define AGENT_NO_RING UINT32_MAX
#define AGENT_EXPORT __attribute__((visibility("default")))

struct stack_table;

/* What collect asked for, copied out of shared memory once at attach (attach.c). */
struct agent_config {
	uint64_t interval_ns;
	uint32_t max_frames; /* 1..1024 */
	uint32_t source; /* enum transport_source chosen for every thread */
	int signal; /* the sampling signal */
	int wall; /* -m wall: the background thread samples every thread (wall.c) */
	int follow; /* children attach too (fork, exec) */
	int allocs; /* allocations are recorded (TRANSPORT_MODE_ALLOCS) */
	uint32_t requested_source; /* enum transport_source; NONE: the best available */
	int requested_signal; /* 0: a free one */
	pid_t pid; /* the process this state was set up in (a raw fork leaves it stale) */
	pid_t collect_pid;
	char shm_path[64]; /* /proc/COLLECT_PID/fd/N */
	uint64_t shm_dev, shm_ino; /* what shm_path must still name */
};

/* Process-wide switches, in a page a fork child finds zeroed (MADV_WIPEONFORK): a raw fork's child runs no
 * fork handler, has none of the rings (MADV_DONTFORK), reads 0 and stays inert instead of writing to them. */
struct agent_flags {
	volatile sig_atomic_t enabled; /* this process is profiled (attached, not a fork child left) */
	volatile int alloc_on;         /* its allocations are recorded (alloc_start, alloc_forget) */
};

/* What more than one part reads of a thread, in initial-exec TLS (a part's own is in TLS of its file). */
struct agent_thread {
	/* What every allocation hook reads (allocations.h), in one cache line: one TLS access a hook. */
	_Alignas(64) volatile sig_atomic_t depth; /* ring writers nested on this thread (nesting.c) */
	volatile sig_atomic_t internal; /* the agent itself is allocating, or forking: not recorded */
	uint64_t last_alloc; /* the latest block this thread allocated (temporaries) */
	int64_t countdown; /* until the next chosen allocation (alloc_choice.h) */
	uint32_t tid; /* 0 until agent_gettid; foreign.c tells a thread whose TLS is another's by it */
	uint32_t ring; /* AGENT_NO_RING until claimed */
	int start_pending; /* the START record waits for a ring */
	int registered; /* lifecycle_thread_begin ran */
	int background; /* the agent's background thread (background.c): never sampled, its ring flagged */
	int in_handler; /* inside the sampling signal handler: nothing may wait */
	int in_agent_section; /* agent_block_signal depth: the program may not unblock the signal here */
	int eintr_ours; /* the handler interrupted a blocking call with EINTR (blocking.c) */
	volatile uint32_t signals_taken; /* sampling signals this thread took (blocking.c compares) */
	struct stack_table *stacks; /* stacks.c */
	_Atomic uint32_t nested_count; /* heap events a nested writer left (nesting.c) */
	_Atomic uint32_t hook_weight; /* sampling periods that fell inside a section (nesting.c) */
	uint64_t hook_time_ns;
	int sandboxed; /* a seccomp filter covers this thread (sandbox.c): the agent makes no system call on it */
	volatile sig_atomic_t in_loader; /* inside dl_iterate_phdr (loader.c): no unwinding */
	uint64_t loader_caller; /* the return address of that call */
	uint64_t end_cpu_ns; /* its CPU time at its end as the sampler charged it (sampler.c), for the exit record; 0: read then */
};

extern struct agent_config agent_config;
extern uint32_t agent_stream; /* this image's number (header.next_stream), in every ring it claims */
extern struct transport agent_transport;
extern struct agent_flags *agent_flags;
extern AGENT_TLS __thread struct agent_thread agent_self;

/* core.c */
/* CLOCK_MONOTONIC ns (vDSO, no system call). */
uint64_t agent_now_ns(void);
/* CLOCK_MONOTONIC_COARSE ns: a heap event's time. */
static inline uint64_t agent_coarse_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
/* The calling thread's CPU time in ns; tid 0: the caller, else another thread of this process (0 if gone). */
uint64_t agent_thread_cpu_ns(uint32_t tid);
/* The calling thread's kernel id, cached. */
uint32_t agent_gettid(void);
/* Close a descriptor the agent opened a moment ago, if it still is the file fstat saw (opened); 0 or -1. */
int agent_close_own(int fd, const struct stat *opened);
/* The start of /proc/self/task/TID/FILE into buf (NUL-terminated, size - 1 bytes at most): its length, or -1. */
ssize_t agent_read_task_file(uint32_t tid, const char *file, char *buf, size_t size);
/* Whether the program installed a handler of its own for the sampling signal. */
int agent_signal_taken(void);
/* The program takes the sampling signal: 1 the first time, then 0. */
int agent_signal_give_up(void);
/* Wake the background thread now (from any handler, a foreign thread's too: no errno, no TLS). */
void agent_wake_background(void);
/* The background thread opens descriptors in a table of its own (background.c): on (1) or off (0). */
void agent_set_descriptor_thread(int on);
/* Whether descriptors the calling thread needs are to be opened by the background thread (it is not it). */
int agent_descriptor_thread_serves(void);
/* The background thread: sleep until deadline (CLOCK_MONOTONIC ns), or until woken. */
void agent_background_sleep(uint64_t deadline);

/* interpose.c (and interpose.h) */
/* Whether an address lies in the agent's own text. */
int agent_own_text(uint64_t pc);
/* Whether a function was called from libunwind (ret_addr: its return address). */
int agent_called_from_unwinder(const void *ret_addr);

/* rings.c */
/* Map the chunks collect published since; the number newly mapped (0 when the background thread is asked to,
 * agent_descriptor_thread_serves, or another thread is mapping them: it wakes agent_ring_waiting's waits when
 * done). Async-signal-safe. */
uint32_t agent_map_new_chunks(void);
/* The background thread: map the chunks another thread asked for. */
void agent_map_asked_chunks(void);
/* A forked child: another thread's mapping (or its request) in the parent is not the child's. */
void agent_rings_forget(void);
/* A TR_SAMPLE record of thread tid into ring (stack_id UINT32_MAX: none could be had): 1, or 0 when it was not
 * written (the caller counts the loss its way). Async-signal-safe. */
int agent_write_sample(uint32_t ring, uint32_t tid, uint32_t stack_id, uint32_t weight, uint64_t time_ns,
		       uint32_t state, int32_t syscall_nr);
/* The calling thread's ring, claimed (and its START record written) at need; AGENT_NO_RING: all taken. */
uint32_t agent_thread_ring(void);
/* agent_thread_ring, waiting (up to 1 s, while collect lives and can grow) for a ring; not in the handler. */
uint32_t agent_ring_waiting(void);
/* Count a record that must not be lost and found no ring (collect warns: records_lost). */
void agent_count_record_lost(void);
/* Wait (a little) for room for a record that must not be lost; NULL once collect is gone. */
void *agent_reserve_waiting(uint32_t ring, uint32_t type, uint32_t size);

/* sections.c */
/* Block the sampling signal around a ring write outside the handler (old: the mask to restore). */
void agent_block_signal(sigset_t *old);
/* Undo agent_block_signal: unblock the sampling signal unless old (the mask it saved) had it blocked. */
void agent_restore_signal(const sigset_t *old);
/* The agent's own work that allocates, on a program's thread: not recorded, every signal but faults blocked. */
void agent_internal_begin(sigset_t *old);
void agent_internal_end(const sigset_t *old);

/* nesting.c */
/* Start and end a ring write outside the sampling handler: whatever interrupts it leaves its records for leave.
 * Inline: every recorded allocation passes both (their file of old inlined them). */
static inline void agent_enter(void)
{
	agent_self.depth++;
	atomic_signal_fence(memory_order_seq_cst);
}
/* agent_leave's outermost case: write what interrupters left, then depth 0. */
void agent_leave_outermost(void);
static inline void agent_leave(void)
{
	if (agent_self.depth > 1) {
		agent_self.depth--;
		return;
	}
	agent_leave_outermost();
}
/* Begin a record outside the handler: the signal blocked (old), agent_enter, and the ring as agent_ring_waiting
 * gives it; AGENT_NO_RING (lost, counted) when none, or when a program's handler interrupted a writer. */
uint32_t agent_write_begin(sigset_t *old);
void agent_write_end(const sigset_t *old);
/* Inside another writer on this thread: leave a heap event for it (decide: 1 live set, 2 made while unwinding). */
void agent_nest_heap(uint64_t seq, uint64_t address, uint64_t size, uint64_t caller, uint16_t kind, uint16_t flags,
		     uint32_t decide);
/* A heap event (TR_HEAP) into ring, waiting for room while collect lives (counted lost without). Not in a handler. */
void agent_write_heap(uint32_t ring, uint64_t seq, uint64_t time_ns, uint64_t address, uint64_t size, uint32_t stack,
		      uint16_t kind, uint16_t flags);
/* The function whose pc stands for time spent in a section (never called): "[ipscope: recording allocations]". */
void agent_recording_allocations(void);
/* The lifecycle's: a thread's overflow of nested events mapped (allocations), unmapped; a fork child's reset. */
void nesting_thread_begin(void);
void nesting_thread_end(void);
void nesting_forget(void);

/* thread_records.c */
/* Write the calling thread's START record into ring (agent_thread_ring does, when start_pending). */
void agent_thread_record_start(uint32_t ring);
/* Write the calling thread's record (flags: TRACE_THREAD_*), its name and CPU time; waits for a ring. */
void agent_thread_record(uint32_t flags);
/* A THREAD record for another thread of this process (its name, e.g. set by pthread_setname_np). */
void agent_thread_record_for(uint32_t tid, const char *name, uint32_t flags);
/* At exit: the CPU time of every other thread that still holds a ring. */
void agent_record_running_threads(void);
/* The lifecycle's: a thread's ring and START record; its end record, its ring closed; a fork child's reset. */
void agent_thread_records_begin(void);
void agent_thread_records_end(void);
void agent_thread_records_forget(void);

/* stacks.c */
/* The agent-wide id of this stack (innermost first), writing its definition when new; UINT32_MAX on failure. */
uint32_t stack_table_id(struct stack_table **table, uint32_t ring, const uint64_t *ips, uint32_t n, uint32_t flags);
/* The id last remembered under key (nonzero: equal keys promise equal stacks), else UINT32_MAX. */
uint32_t stack_table_recall(struct stack_table *table, uint64_t key);
/* Room for one more stack of n frames, so that stack_table_id does not move the table meanwhile (its frames
 * may then come from the table itself: stack_table_frames); 0, or -1 when out of memory. */
int stack_table_reserve(struct stack_table **table, uint32_t n);
/* Where the id last answered (by stack_table_id or stack_table_recall) is: a hint for stack_table_frames. */
uint32_t stack_table_last(const struct stack_table *table);
/* The frames of stack id (an answer of this table) into *ips: their number, 0 when unknown. At once when hint
 * (stack_table_last just after id was answered) still holds it, else linear in the table's size. */
uint32_t stack_table_frames(const struct stack_table *table, uint32_t id, uint32_t hint, const uint64_t **ips);
/* Remember id (a stack_table_id answer of this table) under key (the table keeps the last few). */
void stack_table_remember(struct stack_table *table, uint64_t key, uint32_t id);
/* Unmap a thread's table (NULL: nothing). */
void stack_table_free(struct stack_table *table);
/* The one-frame stack of a caller (truncated), in the calling thread's table. */
uint32_t stack_table_caller(uint32_t ring, uint64_t caller);

#endif
