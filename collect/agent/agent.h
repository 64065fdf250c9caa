/*
 * agent.h - the contracts between the files of the in-process agent
 * (libipscope-agent.so, loaded into the profiled program with LD_PRELOAD):
 *
 *   agent.c     lifecycle: attach at start, fork, exec in place, exit
 *   threads.c   low-level services: clocks, rings, thread records
 *   interpose.c the libc functions it wraps: threads, the loader, signals
 *   unwinder.c  libunwind kept a guest too: no pipe, no masking in the handler
 *   sampler.c   the sampling signal: per-thread sources and the handler
 *   capture.c   one backtrace into a stack id (sampler, later malloc hooks)
 *   stacks.c    per-thread deduplication of stacks
 *   modules.c   the map of loaded ELF objects
 *   alloc_hooks.c  the malloc family interposed, bootstrap, set-up, fork
 *   alloc_record.c what is recorded and how: choice, seq, stack, ring write;
 *                  nested writers, so an event needs no system call
 *   alloc_live.c   the set of live chosen blocks when only some are recorded
 *
 * The agent is a guest: it only captures (raw instruction pointers,
 * timestamps, thread ids, module maps) and everything costly happens in the
 * collect process. Code reached from the sampling signal handler is
 * async-signal-safe: no malloc, no locks, no stdio, errno preserved. It owns
 * no descriptor the program could meet at a low number, and one signal only.
 */
#ifndef IPSCOPE_AGENT_H
#define IPSCOPE_AGENT_H

#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <link.h>
#include <ucontext.h>

#include "../transport.h"

#define AGENT_TLS __attribute__((tls_model("initial-exec")))
#define AGENT_NO_RING UINT32_MAX
#define AGENT_EXPORT __attribute__((visibility("default")))

struct stack_table;

/* What collect asked for, copied out of shared memory once at attach. */
struct agent_config {
	uint64_t interval_ns;
	uint32_t max_frames; /* 1..1024 */
	uint32_t source; /* enum transport_source chosen for every thread */
	int signal; /* the sampling signal */
	pid_t collect_pid;
	char shm_path[64]; /* /proc/COLLECT_PID/fd/N */
	uint64_t shm_dev, shm_ino; /* what shm_path must still name */
};

/* A heap event recorded from inside another (a signal handler's
 * allocation while the thread is in a hook): the outer one writes it. */
struct agent_nested_event {
	uint64_t seq, time_ns, address, size;
	uint64_t caller; /* the hook's return address: the event's one-frame stack */
	uint16_t kind, flags;
	uint32_t decide; /* 1: the outer writer decides its membership in the live set;
			    2: made while unwinding: libunwind's own unless its caller is the program's */
};
#define AGENT_NESTED_EVENTS 32

/* Per-thread state, in initial-exec TLS so the signal handler can reach it. */
struct agent_thread {
	uint32_t tid;
	uint32_t ring; /* AGENT_NO_RING until claimed */
	int slot; /* index of this thread's sampling resources in sampler.c, -1: none */
	uint32_t sources; /* which of them this thread has (sampler.c) */
	int start_pending; /* the START record waits for a ring */
	int registered; /* thread_begin ran */
	int in_handler; /* inside the sampling signal handler: nothing may wait */
	struct stack_table *stacks;
	/*
	 * Ring writers outside the sampling handler (alloc_hooks.c): depth is 1
	 * while one writes, and whatever interrupts it on this thread (the
	 * sampling handler, a program's signal handler that allocates) leaves
	 * its record in nested[] or hook_weight for the outer writer to write.
	 */
	volatile sig_atomic_t depth;
	volatile sig_atomic_t internal; /* the agent itself is allocating: not recorded */
	volatile sig_atomic_t capturing; /* unwinding: a nested allocation is libunwind's or a handler's */
	volatile sig_atomic_t forking; /* between fork's prepare and parent/child handlers */
	volatile sig_atomic_t in_loader; /* inside dlopen/dlclose/dl_iterate_phdr: no unwinding */
	uint64_t loader_caller; /* the return address of that call */
	_Atomic uint32_t nested_count; /* nested[0 .. nested_count) written */
	uint32_t nested_done; /* of which the outer writer wrote this many */
	_Atomic uint32_t hook_weight; /* sampling periods that fell inside a hook */
	uint64_t hook_time_ns;
	uint64_t last_alloc; /* the latest block this thread allocated (temporaries) */
	uint64_t prng; /* per-thread xorshift state; 0: not seeded */
	int64_t byte_countdown; /* bytes until the next chosen one (TRANSPORT_ALLOC_BYTES) */
	int allocs_noted; /* header.allocs_seen was set for this thread */
	struct agent_nested_event nested[AGENT_NESTED_EVENTS];
};

extern struct agent_config agent_config;
extern struct transport agent_transport;
extern volatile sig_atomic_t agent_enabled;
extern AGENT_TLS __thread struct agent_thread agent_self;

/* threads.c */
/* CLOCK_MONOTONIC ns (vDSO, no system call). */
uint64_t agent_now_ns(void);
/* The calling thread's CPU time in ns; tid 0: the caller, else another thread of this process (0 if gone). */
uint64_t agent_thread_cpu_ns(uint32_t tid);
/* The calling thread's kernel id, cached. */
uint32_t agent_gettid(void);
/* A fresh descriptor of collect's shared memory, checked to be it (st: its fstat); -1 on failure. Async-signal-safe. */
int agent_open_shm(struct stat *st);
/* Close a descriptor the agent opened a moment ago, if it still is the file fstat saw (opened); 0 or -1. */
int agent_close_own(int fd, const struct stat *opened);
/* Map the chunks collect published since; the number newly mapped. Async-signal-safe. */
uint32_t agent_map_new_chunks(void);
/* Claim a ring for the calling thread (and write its START record); AGENT_NO_RING when all are taken (collect is woken). */
uint32_t agent_thread_ring(void);
/* Wait (a little) for room for a record that must not be lost; NULL once collect is gone. */
void *agent_reserve_waiting(uint32_t ring, uint32_t type, uint32_t size);
/* Write a thread record for the calling thread: its name and CPU time (waits briefly for a ring). */
void agent_thread_record(uint32_t flags);
/* At exit: the CPU time of every other thread that still holds a ring. */
void agent_record_running_threads(void);
/* Block the sampling signal around non-handler ring writes (old: the mask to restore). */
void agent_block_signal(sigset_t *old);
/* Restore the mask agent_block_signal saved. */
void agent_restore_signal(const sigset_t *old);
/* Start sampling the calling thread; call with the signal blocked. */
void agent_thread_begin(void);
/* Stop sampling it, record its end and hand its ring back; call with the signal blocked. */
void agent_thread_end(void);

/* interpose.c */
/* The real libc functions the agent calls past its own wrappers; resolved by agent_resolve_libc. */
struct agent_libc {
	int (*sigaction)(int, const struct sigaction *, struct sigaction *);
	int (*pipe2)(int[2], int);
	long (*syscall)(long, ...);
	int (*sigprocmask)(int, const sigset_t *, sigset_t *);
	int (*dl_iterate_phdr)(int (*)(struct dl_phdr_info *, size_t, void *), void *);
};
extern struct agent_libc agent_libc;
/* Look the real functions up (dlsym RTLD_NEXT); before any signal handler can need them. */
void agent_resolve_libc(void);
/* Whether the program installed a handler of its own for the sampling signal. */
int agent_signal_taken(void);

/* unwinder.c */
/* Find libunwind's text, to tell its calls from the program's; after agent_resolve_libc, before the first unwind. */
void unwinder_init(void);
/* Whether a function was called from libunwind (ret_addr: its return address). */
int agent_called_from_unwinder(const void *ret_addr);

/* sampler.c */
/* Pick the sampling signal (0: a free one) and source, install the handler; 0 or -1 (agent_error set). */
int sampler_init(uint32_t requested_source, int requested_signal);
/* Start the calling thread's sampling sources (perf event and CPU-time timer). */
void sampler_thread_start(void);
/* Stop them and free their slot. */
void sampler_thread_stop(void);
/* Stop every thread's sources (the program took the sampling signal). */
void sampler_stop_all(void);
/* In a forked child: the parent's sources were not inherited; forget them. */
void sampler_forget_all(void);

/* alloc_hooks.c */
/* Per process (alloc_record.c; alloc_init sets it, a forked child clears it). */
struct alloc_state {
	volatile int on;
	uint32_t scheme;     /* TRANSPORT_ALLOC_* */
	uint64_t threshold;  /* RATE: a draw below it is chosen */
	double mean_bytes;   /* BYTES: the mean N */
};
extern struct alloc_state alloc_state;
/* Whether this thread's allocations are being recorded now. */
static inline int alloc_recording(const struct agent_thread *self)
{
	return alloc_state.on && !self->internal && !self->forking;
}
/* Set up allocation recording from the header (after attach); 0, or -1 with agent_error set. */
int alloc_init(void);
/* Whether allocations are being recorded in this process. */
int alloc_enabled(void);
/* A forked child: record nothing, touch no shared state. */
void alloc_forget(void);

/* alloc_record.c */
/* Start and end a ring write outside the sampling handler (every such write), so that
 * nested writers on this thread leave their records for leave to write. */
void agent_enter(void);
void agent_leave(void);
/* The one-frame stack of a pc in the agent that names "[ipscope: recording allocations]". */
uint64_t alloc_marker_pc(void);
/* An allocation returned p (not NULL); caller: the hook's return address. */
void record_alloc(void *p, size_t size, uint16_t kind, uint16_t flags, uint64_t caller);
/* p (not NULL) is about to be freed (flags: TR_HEAP_BY_REALLOC or 0). */
void record_free(void *p, uint16_t flags);

/* alloc_live.c */
/* Note a chosen live block; 0, or -1 when out of memory (then its free goes unrecorded). */
int live_insert(uint64_t address);
/* Whether address was a chosen live block, forgetting it. */
int live_remove(uint64_t address);
/* A forked child: the set is the parent's (its locks may be held); forget it. */
void live_forget(void);

/* capture.c */
/* Unwind once outside a signal handler so libunwind sets up its per-thread cache. */
void capture_warm_up(void);
/*
 * The stack of the calling thread as an agent-wide stack id, its definition
 * written to ring when new; UINT32_MAX when it could not be recorded. From a
 * signal handler pass the interrupted context (the stack starts at its exact
 * pc); elsewhere pass NULL and the number of the caller's own frames to drop
 * (the stack starts at a return address). Allocation-free.
 */
uint32_t capture_stack(uint32_t ring, const ucontext_t *uc, uint32_t skip);
/* skip for capture_stack: drop every leading frame in the agent's own text (allocation hooks). */
#define CAPTURE_SKIP_AGENT UINT32_MAX
/* Whether an address lies in the agent's own text. */
int agent_own_text(uint64_t pc);

/* stacks.c */
/* The agent-wide id of this stack (innermost first), writing its definition when new; UINT32_MAX on failure. */
uint32_t stack_table_id(struct stack_table **table, uint32_t ring, const uint64_t *ips, uint32_t n,
			uint32_t flags);
/* Unmap a thread's table (NULL: nothing). */
void stack_table_free(struct stack_table *table);

/* modules.c */
/* Record modules loaded since the last call, and unloads; call with the signal blocked. */
void modules_rescan(void);

#endif
