/*
 * collect.h - the pieces of the collect program: option parsing and the main
 * loop (collect.c), the trace file (output.c), starting the program under the
 * agent and owning the shared memory (launch.c), passing termination signals
 * on (forward.c), moving records from the agent's rings into the trace
 * (drain.c) and the process tree's PROCESS records (procs.c).
 */
#ifndef IPSCOPE_COLLECT_H
#define IPSCOPE_COLLECT_H

#include <stdint.h>
#include <signal.h>
#include <sys/types.h>

#include "coverage.h"
#include "trace.h"
#include "transport.h"

struct collect_options {
	const char *output; /* NULL: stdout */
	const char *program_stdout; /* NULL: default (stderr when the trace is on stdout) */
	uint64_t interval_ns;
	uint32_t max_frames;
	uint32_t source; /* enum transport_source; NONE: the best available */
	int signal; /* --signal; 0: the agent picks a free real-time signal */
	int zstd_level;
	int quiet;
	int wall; /* -m wall */
	int follow; /* 1 unless --no-follow */
	int paused; /* --paused: sampling starts off */
	uint64_t delay_ns, duration_ns; /* --delay, --duration; 0: none */
	unsigned closed_std; /* bit n: fd n (0..2) was closed when collect started */
	int cpu; /* CPU samples (unless --no-cpu) */
	int allocs; /* --allocs or --alloc-bytes */
	uint32_t alloc_scheme; /* enum transport_alloc_scheme */
	double alloc_rate; /* --allocs=RATE, (0, 1] */
	uint64_t alloc_mean_bytes; /* --alloc-bytes=N */
	const char *alloc_rate_text; /* as given, for the trace's META */
	char **argv; /* program and its arguments; NULL with -p */
	pid_t pid; /* -p: the running process to profile; 0: run argv */
};

/* collect.c: a META entry of a decimal number. */
void meta_number(struct trace_writer *w, const char *key, uint64_t value);
/* collect.c: the META every trace has about its run: start times, pid, max_frames, host, collector. */
void meta_run(struct trace_writer *w, pid_t pid, uint64_t start_real, uint64_t start_mono, uint32_t max_frames);

/* attach.c: collect -p: profile the running process o->pid; collect's exit status. */
int attach_main(const struct collect_options *o);

/* output.c */
struct output {
	const char *path; /* NULL: stdout */
	int fd;
	int created; /* collect created the file: removed if the program never runs */
	int regular; /* a regular file: truncated and made private once the program runs */
	int is_stdout; /* collect's stdout, named or not (-o /dev/stdout): the program's goes elsewhere */
};
/* Open the trace's destination before anything else; 0, or -1/2 (exit status) with a message printed. */
int output_open(struct output *out, const char *path);
/* The program runs: empty the file and make it private; 0 or -1 with a message. */
int output_claim(struct output *out);
/* Whether the trace's header may be written before the program runs: on a
 * device, a pipe or a file collect created, not over an existing file. */
int output_starts_early(const struct output *out);
/* Claim out and write the trace's header: the writer, or NULL with a message. */
struct trace_writer *output_start_trace(struct output *out, int zstd_level);
/* The program never ran: leave no file behind that collect created. */
void output_abandon(struct output *out);

/* launch.c */
struct launch {
	pid_t pid;
	int ended, status; /* the program ended, its wait status */
	uint32_t ring_bytes; /* of each ring (larger when allocations are recorded) */
	int shm_fd; /* collect's own descriptor of the shared memory, close-on-exec */
	int grow_errno; /* why the shared memory stopped growing; 0: it did not */
	int rings_wanted; /* an agent found every ring taken: close the dead ones' now (launch_wait sets it) */
	struct transport transport;
	sigset_t original_mask; /* what the program gets back */
	struct sigaction original_sigchld;
};
/* Parse the command line into o (defaults first): -1 to go on, else the exit status (0 after --help or --version, 2 after a usage error, printed). */
int collect_parse_options(int argc, char **argv, struct collect_options *o);
/* Create the shared memory for the agent and take over SIGCHLD; 0 or -1 with a message printed. */
int launch_prepare(struct launch *l, const struct collect_options *o);
/* Add a chunk of rings when few are free (called from the drain loop). */
void launch_grow(struct launch *l);
/* Start the program; 0 once exec succeeded, else the shell's status (126/127) after a message. */
int launch_start(struct launch *l, const struct collect_options *o, int trace_on_stdout);
/* A child collect reaped (the program, or an orphan of the tree) with its wait status. */
typedef void (*launch_reaped_fn)(void *ctx, pid_t pid, int status);
/* Wait up to timeout_ms for a child to end (reaped through fn; l->ended once the program has), rings to be
 * wanted (l->rings_wanted set) or SIGUSR2; returns how many SIGUSR2 arrived. */
int launch_wait(struct launch *l, int timeout_ms, launch_reaped_fn fn, void *ctx);
/* The file execvp would run for argv0 (searching PATH), into buf; NULL when none is found. */
const char *launch_program_path(const char *argv0, char *buf, size_t size);
/* Processes of the tree still alive that are collect's children (orphans reparented to it, or the program). */
int launch_children_left(void);
/* The start of a /proc file into buf (size > 0), NUL-terminated: its length, or -1. */
ssize_t read_proc_file(const char *path, char *buf, size_t size);

/* forward.c */
/* Start the witness process that tells group signals apart (call early: collect is small then). */
void forward_prepare(void);
/* Hold termination signals (blocked) until forward_start: call before the program is started. */
void forward_hold(void);
/* Pass termination signals sent to collect on to pid, unless pid got them too (a group kill);
 * the held ones arrive now. */
void forward_start(pid_t pid);
/* The program is gone: collect is interruptible again, the helper process ends. */
void forward_stop(void);
/* The program ended: signals to collect are not passed on any more (its pid may be reused); one
 * termination signal then makes collect stop waiting for the rest of the tree. */
void forward_detach(void);
/* A termination signal arrived after forward_detach. */
int forward_terminated(void);
/* Whether pid is the witness helper (never one of the tree's processes). */
int forward_is_witness(pid_t pid);
/* collect reaped pid: 1 if it was the witness (it is then forgotten), else 0. */
int forward_reaped(pid_t pid);

/* procs.c */
struct procs;
struct tr_process;
/* The tree whose first process is first. */
struct procs *procs_new(pid_t first);
/* An agent's TR_PROCESS record (text: its path then its command); PROCESS records go to w (NULL: none). */
void procs_record(struct procs *ps, struct trace_writer *w, const struct tr_process *pr, const char *text);
/* A process of the tree ended with status (reaped by collect or by the program's own wait()). */
void procs_reaped(struct procs *ps, struct trace_writer *w, pid_t pid, int status, uint64_t time_ns);
/* At the end: execs no agent followed (not profiled: warned unless quiet), ends nobody saw (first_path:
 * the program's path when its own agent never started, else NULL). */
void procs_finish(struct procs *ps, struct trace_writer *w, uint64_t now_ns, const char *first_path, int quiet);
/* Processes the trace knows of. */
uint32_t procs_count(const struct procs *ps);
/* The pids of the processes the trace knows (forked or attached), at most cap of them; how many. */
uint32_t procs_pids(const struct procs *ps, pid_t *pids, uint32_t cap);
/* A process whose image an agent is in (wall_watch.c): image is when it attached or forked, new at an exec. */
struct procs_image {
	pid_t pid;
	uint64_t image;
	uint64_t cpu_ns; /* the CPU time of the thread that recorded it, at that time; UINT64_MAX: unknown */
	/* An exec was announced since: the image may be gone already (into a program no agent enters), or the
	 * exec may fail and it goes on. */
	int exec_pending;
};
/* The processes an agent's image was in last, that have not ended, at most cap; how many. */
uint32_t procs_profiled(const struct procs *ps, struct procs_image *out, uint32_t cap);
void procs_free(struct procs *ps);

/* wall_watch.c: -m wall, the processes whose agent has no sampler thread yet */
struct wall_watch;
struct wall_watch *wall_watch_new(const struct collect_options *o);
void wall_watch_free(struct wall_watch *ww);
/* One tick of wall-clock time: the time off CPU of each thread of those processes, as samples through d. */
struct drain;
void wall_watch_tick(struct wall_watch *ww, struct drain *d, const struct procs *ps, const struct transport_header *h,
		     uint64_t now);
/* Whether some process is watched (collect then wakes at every interval). */
int wall_watch_watching(const struct wall_watch *ww);
/* Intervals to the next tick: 1, or more while every watched thread is long blocked in the same call. */
uint32_t wall_watch_stride(const struct wall_watch *ww);

/* drain_heap.c */
struct heap_order;
struct heap_totals {
	uint64_t allocs, frees, bytes; /* recorded, as written */
	uint64_t late; /* events written after their turn */
};
struct heap_order *heap_order_new(void);
void heap_order_free(struct heap_order *h);
/* Place one event of image stream in process pid (its stack id already the trace's); may write events
 * whose turn came. 0 or -1. */
int heap_order_add(struct heap_order *h, uint32_t stream, uint32_t pid, const struct trace_heap_event *e,
		   struct trace_writer *w);
/* Write every event whose turn came (final: all of them, skipping numbers that never came). 0 or -1. */
int heap_order_write(struct heap_order *h, struct trace_writer *w, int final);
/* A new image of pid (stream keep) starts: write all of the one before it now, and end it. 0 or -1. */
int heap_order_end_pid(struct heap_order *h, uint32_t pid, uint32_t keep, struct trace_writer *w);
void heap_order_totals(const struct heap_order *h, struct heap_totals *out);

/* drain.c */
struct drain;
struct drain_totals {
	uint64_t samples, weight, lost;
	uint32_t threads; /* distinct threads seen, the definition analyze info uses too */
	uint64_t handler_ns, handler_calls; /* time the agent spent in its signal handler */
	/* Threads whose CPU time the agent measured at their end: that time and their samples' weight. */
	uint32_t measured_threads;
	uint64_t measured_cpu_ns, measured_weight;
	struct coverage coverage; /* what they miss, by cause */
	struct heap_totals heap;
};
/* A drain that writes what the agents recorded to w (NULL: discard); process records go to procs. */
struct drain *drain_new(struct trace_writer *w, const struct transport *t, struct procs *procs);
/* Move every published record of every ring into the trace; -1 once writing failed (it then keeps
 * emptying the rings so the program never waits on them). */
int drain_all(struct drain *d);
/* Close the rings whose thread is gone without handing them back (SIGKILL, exec); drained as usual. */
void drain_close_dead(struct drain *d);
/* The program ended: write the allocation events still waiting for their turn. */
int drain_finish(struct drain *d);
/* Whether a ring was more than a sixteenth full, or many threads ended, at the last drain: drain again soon. */
int drain_busy(const struct drain *d);
/* Totals so far. */
void drain_totals(const struct drain *d, struct drain_totals *out);
/* collect's own samples (wall_watch.c) go through the drain, as an agent's do: */
/* The trace id of a stack of process pid (innermost first), merged by content with the agents'; 0: none. */
uint32_t drain_stack_id(struct drain *d, uint32_t pid, const uint64_t *ips, uint32_t nframes, uint32_t flags);
/* One sample, written and counted. */
void drain_sample(struct drain *d, const struct trace_sample *s);
/* The trace id of thread tid's last CPU sample's stack; 0: none yet. */
uint32_t drain_last_stack(const struct drain *d, uint32_t tid);
void drain_free(struct drain *d);

#endif
