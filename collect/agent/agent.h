/*
 * agent.h - the contracts between the files of the in-process agent
 * (libipscope-agent.so, loaded into the profiled program with LD_PRELOAD):
 *
 *   agent.c     lifecycle: attach at start, fork, exec in place, exit
 *   process.c   the process tree: fork, exec, posix_spawn, wait; PROCESS records
 *   threads.c   low-level services: clocks, rings, thread records
 *   interpose.c the libc functions it wraps: threads, the loader, signals
 *   sigmask.c   the program's signal masks and waits, kept clear of the sampling signal
 *   blocking.c  blocking calls made transparent to a sampling signal (wall mode)
 *   unwinder.c  libunwind kept a guest too: no pipe, no masking in the handler
 *   sampler.c   the sampling signal: per-thread sources and the handler
 *   sources.c   the sources set up for a thread by its kernel id: perf event, CPU-time timer
 *   tick_weight.h  what a CPU-time timer sample at a system call weighs beside perf
 *   map_grow.h  the growth idiom of memory the agent cannot take from malloc
 *   foreign.c   threads whose thread-local storage is another's (raw clone()): state by tid
 *   wall.c      the agent's thread: wall mode's sampler (blocked threads unwound in place);
 *               in both modes it adopts unknown threads and unwinds foreign ones
 *   capture.c   one backtrace into a stack id (sampler, malloc hooks)
 *   frametab.c  frame tables and the walk over them (libunwind the fallback);
 *               frametab_build.c builds and publishes an object's (or a block's) rows,
 *               frametab_fde.c runs each FDE of its .eh_frame into them,
 *               frametab_chain.c a thread's cache: rows looked up, recent walks followed
 *   stacks.c    per-thread deduplication of stacks
 *   modules.c   the map of loaded ELF objects
 *   alloc_hooks.c  the malloc family interposed, bootstrap, set-up, fork
 *   alloc_record.c what is recorded and how: choice, seq, stack, ring write;
 *                  nested writers, so an event needs no system call
 *   alloc_choice.h which allocations a sampled scheme chooses: the countdown, its random numbers
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

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <link.h>
#include <ucontext.h>

#include "alloc_choice.h"
#include "interpose.h"
#include "transport.h"

#define AGENT_TLS __attribute__((tls_model("initial-exec")))
#define AGENT_NO_RING UINT32_MAX
#define AGENT_EXPORT __attribute__((visibility("default")))

struct stack_table;
struct frametab_cache;

/* What collect asked for, copied out of shared memory once at attach. */
struct agent_config {
	uint64_t interval_ns;
	uint32_t max_frames; /* 1..1024 */
	uint32_t source; /* enum transport_source chosen for every thread */
	int signal; /* the sampling signal */
	int wall; /* -m wall: the sampler thread samples every thread (wall.c) */
	int follow; /* children attach too (fork, exec) */
	int allocs; /* allocations are recorded (TRANSPORT_MODE_ALLOCS) */
	uint32_t requested_source; /* enum transport_source; NONE: the best available */
	int requested_signal; /* 0: a free one */
	pid_t pid; /* the process this state was set up in (a raw fork leaves it stale) */
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
/* Nested events in TLS; past them, the thread's mapped overflow (agent_thread.nested_more). */
#define AGENT_NESTED_EVENTS 32

/* Per-thread state, in initial-exec TLS so the signal handler can reach it. */
struct agent_thread {
	/* What every hook reads (alloc_seen, free_seen): together in the first cache line. */
	_Alignas(64) volatile sig_atomic_t depth; /* below */
	volatile sig_atomic_t internal; /* the agent itself is allocating, or forking: not recorded */
	uint64_t last_alloc; /* the latest block this thread allocated (temporaries) */
	/* Allocations (bytes, TRANSPORT_ALLOC_BYTES) until the next chosen one, counting it; <= 0: not
	 * drawn, or an allocation's choice in progress (alloc_choice.h: only its functions change it, and alloc_forget). */
	int64_t countdown;
	uint32_t tid;
	uint32_t ring; /* AGENT_NO_RING until claimed */
	int slot; /* index of this thread's sampling resources in sampler.c, -1: none */
	uint32_t sources; /* which of them this thread has (sampler.c) */
	int start_pending; /* the START record waits for a ring */
	int registered; /* thread_begin ran */
	int in_handler; /* inside the sampling signal handler: nothing may wait */
	int program_blocks; /* the program believes it blocked the sampling signal (sigmask.c) */
	int eintr_ours; /* the handler interrupted a blocking call with EINTR (blocking.c) */
	volatile uint32_t signals_taken; /* sampling signals this thread took (blocking.c compares) */
	uint32_t signals_armed; /* signals_taken when its current blocking call began */
	int in_agent_section; /* agent_block_signal depth: the program may not unblock the signal here */
	int background; /* the agent's background thread (wall.c): never sampled, its ring flagged */
	struct stack_table *stacks;
	uint64_t stack_lo, stack_hi; /* this thread's stack (capture_warm_up); 0: unknown, libunwind unwinds */
	struct frametab_cache *frame_cache; /* the rows its walks looked up (frametab.c) */
	/*
	 * Ring writers outside the sampling handler (alloc_hooks.c): depth (at the
	 * top) is 1 while one writes, and whatever interrupts it on this thread (the
	 * sampling handler, a program's signal handler that allocates) leaves
	 * its record in nested[] or hook_weight for the outer writer to write.
	 */
	volatile sig_atomic_t capturing; /* unwinding: a nested allocation is libunwind's or a handler's */
	volatile sig_atomic_t forking; /* between fork's prepare and parent/child handlers */
	int internal_blocked; /* agent_internal_begin depth: the program's signals are blocked */
	int fork_blocked; /* process_fork_prepare blocked 1: the program's signals, 2: the sampling signal (process.c) */
	int fork_depth; /* this thread's forks in progress (process.c): a program's handler may fork inside one */
	sigset_t fork_mask; /* the mask to restore then */
	volatile sig_atomic_t in_loader; /* inside dlopen/dlclose/dl_iterate_phdr: no unwinding */
	uint64_t loader_caller; /* the return address of that call */
	_Atomic uint32_t nested_count; /* nested[0 .. nested_count) written */
	uint32_t nested_done; /* of which the outer writer wrote this many */
	_Atomic uint32_t hook_weight; /* sampling periods that fell inside a hook */
	uint64_t hook_time_ns;
	struct choice_stream prng; /* the countdown's random numbers (alloc_choice.h); key 0: not keyed */
	int allocs_noted; /* header.allocs_seen was set for this thread */
	struct agent_nested_event nested[AGENT_NESTED_EVENTS];
	struct agent_nested_event *nested_more; /* mapped by alloc_thread_begin; NULL: none */
};

extern struct agent_config agent_config;
/* This image's number (header.next_stream), written into every ring it claims (agent.c). */
extern uint32_t agent_stream;
extern struct transport agent_transport;
/* Process-wide switches, in a page a fork child finds zeroed (MADV_WIPEONFORK): a child made by a
 * raw fork system call runs no fork handler and has none of the rings (MADV_DONTFORK), yet reads
 * them 0 and leaves everything alone, as a process not profiled (it wrote into the unmapped rings
 * and died of SIGSEGV at its first malloc, dlopen or pthread_create). */
struct agent_flags {
	volatile sig_atomic_t enabled; /* this process is profiled (attached, not a fork child left) */
	volatile int alloc_on;         /* its allocations are recorded (alloc_start, alloc_forget) */
};
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
/* Whether the program installed a handler of its own for the sampling signal. */
int agent_signal_taken(void);
/* The program takes the sampling signal: 1 the first time, then 0. */
int agent_signal_give_up(void);
/* Wake the background thread now (from a handler too, a foreign thread's included: no errno, no TLS). */
void agent_wake_background(void);
/* The background thread: sleep until deadline (CLOCK_MONOTONIC ns), or until woken. */
void agent_background_sleep(uint64_t deadline);

/* rings.c */
/* A fresh descriptor of collect's shared memory, checked to be it (st: its fstat); -1 on failure. Async-signal-safe. */
int agent_open_shm(struct stat *st);
/* Map the chunks collect published since; the number newly mapped. Async-signal-safe. */
uint32_t agent_map_new_chunks(void);
/* Claim a ring for the calling thread (and write its START record); AGENT_NO_RING when all are taken (collect is woken). */
uint32_t agent_thread_ring(void);
/* agent_thread_ring, waiting (up to ~0.4 s, while collect lives) for collect to free or map one; not in the handler. */
uint32_t agent_ring_waiting(void);
/* Count a record that must not be lost and found no ring (collect warns: records_lost). */
void agent_count_record_lost(void);
/* Wait (a little) for room for a record that must not be lost; NULL once collect is gone. */
void *agent_reserve_waiting(uint32_t ring, uint32_t type, uint32_t size);

/* sections.c */
/* Block the sampling signal around non-handler ring writes (old: the mask to restore). */
void agent_block_signal(sigset_t *old);
/* Undo agent_block_signal: unblock the sampling signal unless old (the mask it saved) had it blocked. */
void agent_restore_signal(const sigset_t *old);
/* Begin work of the agent's own that allocates on a program's thread: its allocations are not
 * recorded (internal), and every signal but the synchronous faults is blocked (old: the mask to
 * restore, set by the outermost call), so a program's handler that allocates runs after the window
 * and is recorded, instead of being taken for the agent's. Nests; end with agent_internal_end. */
void agent_internal_begin(sigset_t *old);
void agent_internal_end(const sigset_t *old);

/* nesting.c */
/* Start and end a ring write outside the sampling handler (every such write), so that
 * nested writers on this thread leave their records for leave to write. */
void agent_enter(void);
void agent_leave(void);
/* Begin a record outside the handler: the signal blocked (old: the mask to restore), depth raised as
 * in a hook (agent_enter), and the ring, waited for as agent_ring_waiting does (or AGENT_NO_RING when
 * none, counted lost, or when this thread is already writing: a program's signal handler interrupted
 * a writer). End it with agent_write_end. */
uint32_t agent_write_begin(sigset_t *old);
void agent_write_end(const sigset_t *old);
/* Inside another writer on this thread: leave a heap event for it (decide: agent_nested_event's). */
void agent_nest_heap(uint64_t seq, uint64_t address, uint64_t size, uint64_t caller, uint16_t kind, uint16_t flags,
		     uint32_t decide);
/* A heap event (TR_HEAP) into ring, waiting for room while collect lives; counted lost without. Not in a handler. */
void agent_write_heap(uint32_t ring, uint64_t seq, uint64_t time_ns, uint64_t address, uint64_t size, uint32_t stack,
		      uint16_t kind, uint16_t flags);
/* The agent's function whose pc stands for time spent in a section (never called). */
void agent_recording_allocations(void);
/* The one-frame stack of a pc in the agent that names "[ipscope: recording allocations]". */
uint64_t alloc_marker_pc(void);
/* Map the calling thread's overflow of nested events (recording allocations); not in a handler. */
void nesting_thread_begin(void);
/* Unmap it (the thread ends); its events still waiting there are counted lost. */
void nesting_thread_end(void);
/* A forked child: nothing is nested on its thread. */
void nesting_forget(void);

/* thread_records.c */
/* Write the calling thread's START record into ring (agent_thread_ring, when start_pending). */
void agent_thread_record_start(uint32_t ring);
/* Write the calling thread's end record: its name and CPU time (waits for a ring; without one, counted: threads_without_ring or records_lost). */
void agent_thread_record(uint32_t flags);
/* A THREAD record for another thread of this process (its name, e.g. set by pthread_setname_np). */
void agent_thread_record_for(uint32_t tid, const char *name, uint32_t flags);
/* At exit: the CPU time of every other thread that still holds a ring. */
void agent_record_running_threads(void);
/* The lifecycle's: a thread begins (its ring, its START record), ends (its end record, its ring closed),
 * a forked child forgets its parent's ring. */
void agent_thread_records_begin(void);
void agent_thread_records_end(void);
void agent_thread_records_forget(void);

/* lifecycle.c */
/* Start sampling the calling thread; call with the signal blocked. */
void lifecycle_thread_begin(void);
/* Stop sampling it, record its end and hand its ring back; call with the signal blocked. */
void lifecycle_thread_end(void);

/* attach.c */
/* Where collect's shared memory is (the environment): 0, or -1 when this process is not to attach. */
int agent_find_shm(void);
/* Attach this process to collect's shared memory (again, in a fork child): 0, or -1 (then it stays inert). */
int agent_attach(void);
/* An earlier image of this process left rings (an exec in place): close them, and record the exec. */
void agent_take_over(void);

/* region.c */
/* ipscope.h's region control, found by the program as weak symbols: sampling on, sampling off. */
void ipscope_agent_start(void);
void ipscope_agent_stop(void);
/* Whether sampling is on (collect's --delay, --paused, SIGUSR2, ipscope_start/stop). */
static inline int agent_sampling_on(void)
{
	return atomic_load_explicit(&agent_transport.header->paused, memory_order_relaxed) == 0;
}

/* process.c */
/* Tell collect about this process (TR_PROCESS of kind, with parent, path and command line when known). */
void process_record(uint32_t kind, uint32_t pid, uint32_t parent, int status, const char *path, const char *command);
/* This image attached: its path and command line from /proc/self. */
void process_attached(void);

/* unwind_gate.c */
/* Around a libunwind unwind or a module scan: 0 to go ahead (then call unwind_gate_leave), -1 while a fork is in progress. */
int unwind_gate_enter(void);
/* The same outside signal handlers: waits for a fork in progress to end (a second at most; -1 then). */
int unwind_gate_wait(void);
void unwind_gate_leave(void);
/* Fork's prepare handler: stop new unwinds, wait (briefly) for those in flight; the parent's reopens. */
void unwind_gate_close(void);
void unwind_gate_open(void);
/* A forked child: no unwind is in flight, no fork under way. */
void unwind_gate_reset(void);

/* interpose.c */
/* Whether an address lies in the agent's own text. */
int agent_own_text(uint64_t pc);
/* Whether a function was called from libunwind (ret_addr: its return address). */
int agent_called_from_unwinder(const void *ret_addr);

/* signals.c */
/* The program's view of a new thread's mask: the creator's (the kernel's never holds the sampling signal). */
int sigmask_program_blocks(void);
/* set without the sampling signal (into copy when it had it): a wait must never take the profiler's signal. */
const sigset_t *sigmask_without_ours(const sigset_t *set, sigset_t *copy);

/* sampler.c */
/* Pick the sampling signal (0: a free one) and source, install the handler; 0 or -1 (agent_error set). */
int sampler_init(uint32_t requested_source, int requested_signal);
/* Start the calling thread's sampling sources (perf event and CPU-time timer). */
void sampler_thread_start(void);
/* Stop them and free their slot. */
void sampler_thread_stop(void);
/* Stop every thread's sources (the program took the sampling signal). */
void sampler_stop_all(void);
/* In a forked child: the parent's sources were not inherited; forget them (wall mode's slots too). */
void sampler_forget(void);
/* Sample a thread the agent did not start (one that existed before it, or a raw clone()): 0 or -1. */
int sampler_adopt(uint32_t tid);
/* Slots in use are below this; slot i's thread id (0: free or not yet known). */
uint32_t sampler_slots_high(void);
uint32_t sampler_slot_tid(uint32_t i);
/* Release an adopted thread's slot once it is gone. */
void sampler_release_adopted(uint32_t i);
/* Release every adopted slot whose thread is gone or has started a slot of its own (cpu mode's scan). */
void sampler_reap_adopted(void);
/* The CPU time of the threads with a slot, and of those that ended after having one (wall.c compares it
 * with the process's: time no known thread used says an unknown thread runs). */
uint64_t sampler_accounted_cpu_ns(void);
/* Whether slot i was adopted for a thread that has since started its own slot (a scan raced its start). */
int sampler_adopted_twice(uint32_t i);
/* Whether thread tid has a slot (linear: for the sampler thread's scan). */
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
/* A perf event signalling thread tid on every overflow, kept alive by its one-page mapping (returned); NULL. */
void *source_perf_start(uint32_t tid);
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

/* wall.c */
/* Start the agent's thread (wall mode's sampler; in cpu mode it finds and unwinds foreign threads): 0 or -1
 * (agent_error set in wall mode). */
int wall_start(void);
/* Adopt every thread of /proc/self/task the agent does not know (before wall_start, or on its thread). */
void wall_scan_threads(void);
/* Stop it and wait (up to 50 ms) for its last samples; at exit the thread is left to the process's end. */
void wall_stop(void);
/* A forked child has no sampler thread: start anew. */
void wall_forget(void);
/* Slot i got a new thread, or lost it (tid 0: the weight it was owed counts as exited-unsampled). */
void wall_slot_reset(uint32_t i, uint32_t tid);
/* In the handler, for a wall-mode signal to slot i: the weight owed, and the system call when the sampler
 * asked because the thread was blocked (else -1). */
uint32_t wall_take_weight(uint32_t i, int32_t *syscall);

/* alloc_hooks.c */
/* Per process (alloc_record.c; alloc_init sets it, a forked child clears it). */
struct alloc_state {
	/* What every hook reads (besides agent_flags->alloc_on and agent_real's malloc family), in one cache line. */
	_Alignas(64) int wanted;          /* allocations are recorded in this image once alloc_start runs */
	int sampled;         /* scheme is not TRANSPORT_ALLOC_ALL: frees are looked up in the live set */
	int by_bytes;        /* scheme is TRANSPORT_ALLOC_BYTES: the countdown counts bytes */
	uint32_t scheme;     /* TRANSPORT_ALLOC_* */
	struct choice_scheme choice; /* what the countdown counts, and its distribution */
	uint64_t start_ns;   /* CLOCK_REALTIME at alloc_init, in every thread's random key */
};
extern struct alloc_state alloc_state;
/* Whether this thread's allocations are being recorded now. */
static inline int alloc_recording(const struct agent_thread *self)
{
	return agent_flags->alloc_on && !self->internal; /* internal counts forking too (alloc_hooks.c) */
}
/* Set up allocation recording from the header (after attach), not started yet; 0, or -1 with agent_error set. */
int alloc_init(void);
/* Start recording (this image's PROCESS record written first, so its events follow it). */
void alloc_start(void);
/* Whether allocations are being recorded in this process. */
int alloc_enabled(void);
/* A forked child: record nothing, touch no shared state (alloc_start, once attached, starts it anew). */
void alloc_forget(void);

/* alloc_record.c */
/* The image's seq of allocation events (tr_heap.seq): a forked child's counts from 1 again. */
struct agent_alloc_seq {
	_Alignas(64) _Atomic uint64_t n;
	char pad[56];
};
extern struct agent_alloc_seq agent_alloc_seq;
/* An allocation returned p (not NULL), chosen or not (alloc_seen's slow path: before is its choice_take's answer,
 * at most its step); caller: the hook's return address. */
void record_alloc(void *p, size_t size, uint16_t kind, uint16_t flags, uint64_t caller, int64_t before);
/* A failed realloc left p live whose free record_free recorded: p allocated again (RESTORED). */
void record_restored(void *p, uint16_t kind, uint64_t caller);
/* p (not NULL) is about to be freed (flags: TR_HEAP_BY_REALLOC or 0); whether it was recorded. */
int record_free(void *p, uint16_t flags);

/* alloc_live.c */
/* Note a chosen live block; 0, or -1 when out of memory (then its free goes unrecorded). */
int live_insert(uint64_t address);
/* Whether address was a chosen live block, forgetting it. */
int live_remove(uint64_t address);
/* A forked child: the set is the parent's (its locks may be held); forget it. */
void live_forget(void);
/* The live set's filter (alloc_live.c says how it is kept): one bit per 16-byte slot of
 * address, modulo LIVE_FILTER_BITS slots; clear: no chosen live block there. */
#define LIVE_FILTER_BITS (1u << 19)
extern _Atomic uint64_t live_filter[LIVE_FILTER_BITS / 64];
/* 0 when address is surely not a chosen live block: one load, no lock. */
static inline int live_may_hold(uint64_t address)
{
	uint64_t slot = (address >> 4) & (LIVE_FILTER_BITS - 1);
	return (int)((atomic_load_explicit(&live_filter[slot >> 6], memory_order_relaxed) >> (slot & 63)) & 1);
}

/*
 * The hooks' fast paths (alloc_hooks.c), inline so that at RATE < 1 an
 * unchosen allocation costs a decrement and a compare (one xadd: a signal
 * handler's allocation can run between any two instructions, alloc_choice.h)
 * and a free of an unchosen block a filter load; anything else goes to
 * alloc_record.c.
 */
/* The allocation of size bytes that returned p (not NULL), while alloc_recording. */
static inline void alloc_seen(struct agent_thread *self, void *p, size_t size, uint16_t kind, uint16_t flags,
			      uint64_t caller)
{
	self->last_alloc = (uint64_t)(uintptr_t)p;
	int64_t step = choice_step(alloc_state.by_bytes, size);
	int64_t before = choice_take(&self->countdown, step);
	if (__builtin_expect(before > step, 1))
		return; /* not chosen (a thread's first allocation never ends here: 0) */
	record_alloc(p, size, kind, flags, caller, before);
}
/* p (not NULL) is about to be freed, while alloc_recording; whether it was recorded. */
static inline int free_seen(struct agent_thread *self, void *p, uint16_t flags)
{
	uint64_t address = (uint64_t)(uintptr_t)p;
	if (alloc_state.sampled && !self->depth && !live_may_hold(address)) {
		if (address == self->last_alloc)
			self->last_alloc = 0; /* as record_free would: later frees of it are not temporary */
		return 0;
	}
	return record_free(p, flags);
}

/* capture.c */
/* At a thread's start: find its stack's bounds (the table walk reads nothing else), and unwind once
 * outside a signal handler so libunwind sets up its cache. */
void capture_warm_up(void);
/* At its end (sampling stopped): unmap what capture_warm_up set up. */
void capture_thread_end(void);
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
/* The id last remembered under key (nonzero: equal keys promise equal stacks), else UINT32_MAX. */
uint32_t stack_table_recall(const struct stack_table *table, uint64_t key);
/* Remember id (a stack_table_id answer of this table) under key (the table keeps the last few). */
void stack_table_remember(struct stack_table *table, uint64_t key, uint32_t id);
/* Unmap a thread's table (NULL: nothing). */
void stack_table_free(struct stack_table *table);
/* The one-frame stack of a caller (truncated) in the calling thread's table: stack_table_id's answer. */
uint32_t stack_table_caller(uint32_t ring, uint64_t caller);

/* modules.c */
/* Record modules loaded since the last call, and unloads; call with the signal blocked. */
void modules_rescan(void);
/* A forked child: every module is to be recorded again, for its own pid. */
void modules_forget(void);
/* Build the frame tables walks asked for (the agent's thread, now and then). */
void modules_build_tables(void);

#endif
