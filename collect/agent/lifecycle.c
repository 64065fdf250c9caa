/*
 * lifecycle.c - the agent's lifecycle, above every other part: what each
 * does when an image of the program starts (the constructor), when a thread
 * begins and ends, around a fork, and at exit (the destructor).
 *
 * The start and the stop call each part by name, in the order their records
 * must reach collect (this image's PROCESS record before its allocation
 * events, its modules and its first thread before its samples). What a
 * thread's beginning and end, and a forked child, ask of each part goes
 * through one ordered table (parts[]), the seam async-profiler's engines
 * have in onThreadStart and onThreadEnd: a part added, or attaching to a
 * process already running, goes through it too.
 *
 * Fork. collect's mappings are MADV_DONTFORK: a forked child has none of the
 * parent's rings, so it cannot write into them by mistake. Following, it
 * maps the memory again, claims rings of its own, records its modules under
 * its own pid and samples on (process.c records the fork), and records its
 * own allocations from then on, numbered from 1 in a stream of its own (its
 * parent's live blocks are the parent's: freeing one is a free of nothing
 * the child allocated); otherwise it forgets everything and stays inert.
 */
#include "lifecycle.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "allocations.h"
#include "process.h"
#include "sampling.h"
#include "trace.h"
#include "unwinding.h"

/*
 * Each part's share of a thread's beginning (in this order), of its end and
 * of a forked child's forgetting the parent's state (both backwards): the
 * unwinder's per-thread state first, sampling last, so a thread is sampled
 * only once all it needs is there, and stops being sampled first.
 */
static const struct part {
	void (*thread_begin)(void);
	void (*thread_end)(void);
	void (*forget)(void);
} parts[] = {
	{ capture_warm_up, capture_thread_end, modules_forget },                                 /* unwinding */
	{ nesting_thread_begin, nesting_thread_end, nesting_forget },                             /* nesting */
	{ NULL, NULL, alloc_forget },                                                             /* allocations */
	{ agent_thread_records_begin, agent_thread_records_end, agent_thread_records_forget },   /* its ring */
	{ sampler_thread_start, sampler_thread_stop, sampler_forget },                            /* sampling */
	{ NULL, NULL, background_forget },                                                        /* background thread */
};
#define NPARTS (sizeof parts / sizeof *parts)

void lifecycle_thread_begin(void)
{
	agent_self.tid = 0;
	agent_gettid();
	for (size_t i = 0; i < NPARTS; i++)
		if (parts[i].thread_begin)
			parts[i].thread_begin();
	agent_self.registered = 1;
}

void lifecycle_thread_end(void)
{
	if (!agent_self.registered)
		return;
	if (sandbox_covers_me()) {
		agent_self.registered = 0; /* its end unrecorded: no system call under a seccomp filter */
		return;
	}
	for (size_t i = NPARTS; i-- > 0;)
		if (parts[i].thread_end)
			parts[i].thread_end();
	agent_self.registered = 0;
}

/* ---- fork ---- */

static int enabled_at_fork;
/* The forking thread's window, from the prepare handler to the end of the parent's or the child's. */
static AGENT_TLS __thread struct fork_thread {
	int depth; /* forks in progress on this thread: a program's handler may fork inside one */
	int blocked; /* what fork_prepare blocked, 1: the program's signals, 2: the sampling signal */
	sigset_t mask; /* the mask to restore then */
} fork_self;

/* The first of the agent's prepare handlers to run (registered after alloc_hooks.c's; a program's,
 * registered later still, run before it), so from here to the end of our parent or child handler
 * (the first to run of either kind) the forking thread takes none of the program's signals: a handler that
 * allocates would meet the gate below on its own thread and wait for a fork that cannot go on
 * until it returns (a second each time; under a frequent timer the program never got further),
 * or be taken for the agent's own allocating, or deadlock on the malloc locks glibc holds across
 * the fork of a process with a second thread, which the agent's thread makes of every program.
 * Deferred, it runs after the fork and is recorded. Not recording allocations, only the sampling
 * signal waits: a sample of the fork itself (its kernel time, delivered at the system call's
 * return) taken in the window would meet the gate and be lost when the frame tables cannot walk
 * it (a shell forking 300 children lost most of its samples so), and libunwind there could
 * deadlock: glibc holds the malloc locks, and dl_iterate_phdr's lock may be held by a thread that
 * frees (dlclose). Deferred, it is taken just after the fork. A fork made by a program's handler
 * that interrupted this window (depth) is inside it. */
static void fork_prepare(void)
{
	enabled_at_fork = agent_flags->enabled; /* the child finds agent_flags zeroed */
	if (!agent_flags->enabled || fork_self.depth++)
		return;
	if (alloc_enabled()) {
		agent_internal_begin(&fork_self.mask);
		fork_self.blocked = 1;
	} else {
		agent_block_signal(&fork_self.mask);
		fork_self.blocked = 2;
	}
	unwind_gate_close();
}

/* The end of either side's fork handlers: the forking thread takes its signals again. */
static void fork_done(void)
{
	fork_self.depth = 0; /* the child: its fork is over */
	if (fork_self.blocked == 1)
		agent_internal_end(&fork_self.mask);
	else if (fork_self.blocked == 2)
		agent_restore_signal(&fork_self.mask);
	fork_self.blocked = 0;
}

static void fork_parent(void)
{
	if (!fork_self.depth || --fork_self.depth)
		return; /* not ours (the agent was off at prepare), or a nested fork's */
	unwind_gate_open();
	fork_done();
}

/* A forked child shares nothing with the traced process: the mappings were not inherited (MADV_DONTFORK). */
static void child_attach(void)
{
	agent_self.tid = 0; /* the cached id is the parent thread's: a ring claimed with it would look dead */
	unwind_gate_reset();
	if (!enabled_at_fork)
		return;
	if (sandbox_covers_me()) {
		agent_flags->enabled = 0; /* the forking thread's seccomp filter is the child's: attaching opens a file */
		return;
	}
	agent_flags->enabled = 0; /* zeroed already (MADV_WIPEONFORK), unless the kernel could not */
	for (size_t i = NPARTS; i-- > 0;)
		if (parts[i].forget)
			parts[i].forget();
	agent_self.registered = 0;
	memset(&agent_transport, 0, sizeof agent_transport);
	if (!agent_config.follow || agent_attach() < 0)
		return;
	sigset_t old;
	agent_block_signal(&old);
	agent_flags->enabled = 1;
	modules_rescan();
	lifecycle_thread_begin();
	process_record(TR_PROCESS_FORKED, (uint32_t)getpid(), (uint32_t)getppid(), 0, NULL, NULL);
	alloc_start(); /* its own allocations from here, after the record that says it forked */
	if (agent_config.signal)
		background_start_when_needed(0); /* the child has one thread, the forking one */
	agent_restore_signal(&old);
}

static void fork_child(void)
{
	child_attach();
	fork_done(); /* last: a handler deferred across the fork runs in the child, recorded */
}

/* ---- start and stop ---- */

/* The first process alone speaks for the run in the header (collect's warnings name the program). */
static int first_process(void)
{
	return agent_transport.header->pid == (uint32_t)getpid();
}

/* 0: not started in this image, 1: under way on one thread, 2: over (attached or not). A fork child
 * inherits 2; an exec'd image starts at 0. */
_Atomic int lifecycle_start_state;
/* The thread that runs the start: the allocations it makes are the agent's own. */
static AGENT_TLS __thread int starting_here;

static void start(void)
{
	void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page != MAP_FAILED && madvise(page, 4096, MADV_WIPEONFORK) == 0)
		agent_flags = page; /* else (a kernel before 4.14) the static ones: a raw fork is not safe */
	else if (page != MAP_FAILED)
		munmap(page, 4096);
	interpose_init();
	if (agent_find_shm() < 0 || agent_attach() < 0)
		return;
	if ((agent_transport.header->mode & (TRANSPORT_MODE_CPU | TRANSPORT_MODE_WALL)) &&
	    sampler_init(agent_config.requested_source, agent_config.requested_signal) < 0) {
		if (first_process())
			atomic_store(&agent_transport.header->agent_state, AGENT_FAILED);
		return;
	}
	alloc_init();
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	sigset_t old;
	agent_block_signal(&old);
	agent_flags->enabled = 1;
	agent_take_over();
	process_attached();
	alloc_start(); /* after the record that says this image attached: its events follow it */
	modules_rescan();
	if (alloc_enabled()) {
		alloc_rebind_aliases(NULL); /* code that calls __libc_malloc and the like */
		alloc_check_apis(RTLD_DEFAULT);
	}
	lifecycle_thread_begin();
	/* The background thread: wall mode's sampler; in both modes it finds the threads the agent did not
	 * start (another library's constructor made them first, or a raw clone()) and unwinds the foreign.
	 * In cpu mode a process with one thread has none (background.c says why). */
	int others = agent_config.signal ? background_scan_threads() : 0; /* before the program runs: its
									       * descriptors are not in use yet */
	if (agent_config.signal && background_start_when_needed(others) < 0 && agent_config.wall) {
		agent_flags->enabled = 0;
		if (first_process())
			atomic_store(&agent_transport.header->agent_state, AGENT_FAILED);
		agent_restore_signal(&old);
		return;
	}
	if (first_process()) {
		if (!(agent_transport.header->mode & (TRANSPORT_MODE_CPU | TRANSPORT_MODE_WALL)))
			agent_transport.header->source = TRANSPORT_SOURCE_NONE;
		atomic_store(&agent_transport.header->agent_state, AGENT_RUNNING);
	}
	agent_restore_signal(&old);
}

/* The start, once per image, from whichever comes first: the constructor, or an allocation. */
static void start_once(void)
{
	int expected = 0;
	if (!atomic_compare_exchange_strong(&lifecycle_start_state, &expected, 1))
		return;
	starting_here = 1;
	start();
	starting_here = 0;
	atomic_store(&lifecycle_start_state, 2);
}

__attribute__((constructor)) static void agent_start(void)
{
	start_once();
}

/*
 * Allocations come before the constructor: the loader runs the constructors
 * of the libraries the program links (libstdc++'s allocates its 72,704-byte
 * exception pool) before the agent's whenever the agent does not depend on
 * them, and a library's constructor may allocate anything. Recorded from the
 * first (memcheck and heaptrack count them), the agent starts at the first
 * allocation instead, as heaptrack initialises on first use: when
 * allocations are recorded (without, the constructor's start is early
 * enough), on the main thread, once libc's own constructor ran (environ: the
 * start reads the environment), which every allocation a program's code makes
 * comes after. Anything else (another thread's allocation while the start is
 * under way, or the loader's before libc's constructor) is not recorded, and
 * counted.
 */
int lifecycle_start_early(void)
{
	extern char **environ;
	if (starting_here || !environ || !agent_allocs_requested())
		return 0;
	if (agent_gettid() == (uint32_t)getpid())
		start_once();
	return atomic_load(&lifecycle_start_state) == 2;
}

int lifecycle_starting_here(void)
{
	return starting_here;
}

/*
 * At exit the main thread's name may have changed, and libraries that glibc
 * loaded by itself (NSS, iconv, libgcc_s), bypassing our dlopen, are still
 * mapped: record them. Threads still running are cut short: their CPU time
 * so far is recorded for them.
 */
__attribute__((destructor)) static void agent_stop(void)
{
	if (!agent_flags->enabled || agent_config.pid != getpid() || sandbox_covers_me())
		return;
	sigset_t old;
	agent_block_signal(&old);
	background_stop();
	sampler_thread_stop();
	modules_rescan();
	agent_enter();
	agent_record_running_threads();
	agent_leave();
	agent_thread_record(TRACE_THREAD_NAME | TRACE_THREAD_AT_END);
	agent_restore_signal(&old);
}
