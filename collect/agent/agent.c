/*
 * agent.c - the agent's lifecycle: attaching to collect's shared memory when
 * the program starts, a forked child attaching again on its own, a program
 * exec'd in place taking over from the image before it, and the last records
 * at exit.
 *
 * collect passes, through the environment, where its shared memory is: its
 * own descriptor of it, opened here through /proc/COLLECT_PID/fd/N and
 * closed again once mapped, so the program inherits nothing. Every process
 * of the tree that inherits the environment attaches (a fork+exec, a
 * posix_spawn, a shell's pipeline); with --no-follow, IPSCOPE_PID names the
 * one process that may, and any other stays inert.
 *
 * The mappings are MADV_DONTFORK: a forked child has none of the parent's
 * rings, so it cannot write into them by mistake. Following, it maps the
 * memory again, claims rings of its own, records its modules under its own
 * pid and samples on (process.c records the fork), and records its own
 * allocations from then on, numbered from 1 in a stream of its own (its
 * parent's live blocks are the parent's: freeing one is a free of nothing
 * the child allocated); otherwise it forgets everything and stays inert.
 * An image that attaches in a process where an earlier image had rings (an
 * exec in place) closes them: their threads are gone, and collect is told
 * that every module of that process went with them.
 */
#include "agent.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "trace.h"

struct transport agent_transport;
struct agent_config agent_config;
uint32_t agent_stream;
static struct agent_flags flags_before_start; /* all 0, until agent_start maps the page */
struct agent_flags *agent_flags = &flags_before_start;
AGENT_TLS __thread struct agent_thread agent_self = { .ring = AGENT_NO_RING, .slot = -1 };

/* A forked child shares nothing with the traced process: the mappings were not inherited (MADV_DONTFORK). */
static void child_attach(void)
{
	agent_self.tid = 0; /* the cached id is the parent thread's: a ring claimed with it would look dead */
	if (!process_fork_child())
		return;
	agent_flags->enabled = 0; /* zeroed already (MADV_WIPEONFORK), unless the kernel could not */
	wall_forget();
	alloc_forget();
	sampler_forget_all();
	modules_forget();
	agent_self.ring = AGENT_NO_RING;
	agent_self.registered = 0;
	stack_table_free(agent_self.stacks); /* the child's own copy of the parent's table */
	agent_self.stacks = NULL;
	memset(&agent_transport, 0, sizeof agent_transport);
	if (!agent_config.follow || agent_attach() < 0)
		return;
	sigset_t old;
	agent_block_signal(&old);
	agent_flags->enabled = 1;
	modules_rescan();
	agent_thread_begin();
	process_record(TR_PROCESS_FORKED, (uint32_t)getpid(), (uint32_t)getppid(), 0, NULL, NULL);
	alloc_start(); /* its own allocations from here, after the record that says it forked */
	if (agent_config.signal)
		wall_start();
	agent_restore_signal(&old);
}

static void after_fork_child(void)
{
	child_attach();
	process_fork_done(); /* last: a handler deferred across the fork runs in the child, recorded */
}

/*
 * Allocations: the earlier image's events must all be in collect's hands
 * before this image says it attached, so that collect writes them before
 * its PROCESS record and this image's events (whose seq starts again from
 * 1) after it. collect frees a closed ring once it has drained it: wait for
 * that (it is woken), while it lives, a second at most.
 */
static void wait_for_drain(uint32_t pid)
{
	struct transport_header *h = agent_transport.header;
	for (unsigned spins = 0; spins < 5000; spins++) {
		uint32_t n = transport_nrings(&agent_transport), waiting = 0;
		for (uint32_t i = 0; i < n && !waiting; i++) {
			struct transport_ring *r = transport_ring(&agent_transport, i);
			waiting = r->pid == pid && atomic_load(&r->state) == RING_CLOSED;
		}
		if (!waiting || agent_now_ns() - atomic_load(&h->consumer_heartbeat_ns) > 2000000000ull)
			return;
		if (!atomic_exchange(&h->wake_pending, 1))
			kill(agent_config.collect_pid, TRANSPORT_WAKE_SIGNAL);
		struct timespec ts = { 0, 200000 };
		nanosleep(&ts, NULL);
	}
}

/*
 * An earlier image of this process left rings (an exec in place: collect env
 * ..., nice ..., a shell's exec): its threads are gone, so their rings go
 * back to collect, and collect is told that every module this process had
 * went with them.
 */
static void take_over_from_previous_image(void)
{
	uint32_t n = transport_nrings(&agent_transport), pid = (uint32_t)getpid(), closed = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct transport_ring *r = transport_ring(&agent_transport, i);
		uint32_t owned = RING_OWNED;
		if (r->pid == pid && atomic_compare_exchange_strong(&r->state, &owned, RING_CLOSED))
			closed++;
	}
	if (!closed)
		return;
	if (agent_transport.header->mode & TRANSPORT_MODE_ALLOCS)
		wait_for_drain(pid);
	agent_enter();
	uint32_t ring = agent_ring_waiting();
	struct tr_exec *e = ring == AGENT_NO_RING ? NULL :
			    agent_reserve_waiting(ring, TR_EXEC, sizeof *e);
	if (!e)
		agent_count_record_lost();
	if (e) {
		e->time_ns = agent_now_ns();
		transport_commit(&agent_transport, ring);
	}
	agent_leave();
}

/* Where collect's shared memory is: "COLLECT_PID:FD"; with --no-follow, for IPSCOPE_PID only. */
static int find_shm(void)
{
	const char *shm = getenv(TRANSPORT_ENV), *pid_text = getenv(TRANSPORT_ENV_PID);
	if (!shm || (pid_text && (pid_t)atol(pid_text) != getpid()))
		return -1;
	char *end;
	long collect_pid = strtol(shm, &end, 10), fd = *end == ':' ? strtol(end + 1, &end, 10) : -1;
	if (collect_pid <= 0 || fd < 0 || *end)
		return -1;
	agent_config.collect_pid = (pid_t)collect_pid;
	snprintf(agent_config.shm_path, sizeof agent_config.shm_path, "/proc/%ld/fd/%ld", collect_pid, fd);
	return 0;
}

/* Map the header and copy what collect asked for; the shared copy is the program's to scribble on. */
static int map_header(int fd, const struct stat *st, uint32_t *requested_source, int *requested_signal)
{
	if ((size_t)st->st_size < TRANSPORT_HEADER_BYTES)
		return -1;
	struct transport_header *h =
		mmap(NULL, TRANSPORT_HEADER_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED)
		return -1;
	madvise(h, TRANSPORT_HEADER_BYTES, MADV_DONTFORK);
	if (h->magic != TRANSPORT_MAGIC || (h->pid != (uint32_t)getpid() && !h->follow) || !h->interval_ns ||
	    !h->max_frames || h->max_frames > 1024 ||
	    transport_init(&agent_transport, h, h->ring_bytes, h->rings_per_chunk, h->max_chunks) < 0) {
		munmap(h, TRANSPORT_HEADER_BYTES);
		return -1;
	}
	agent_config.interval_ns = h->interval_ns;
	agent_config.max_frames = h->max_frames;
	agent_config.wall = (h->mode & TRANSPORT_MODE_WALL) != 0;
	agent_config.follow = h->follow != 0;
	*requested_source = h->requested_source;
	*requested_signal = h->requested_signal < 65 ? (int)h->requested_signal : 0;
	return 0;
}

static uint32_t requested_source;
static int requested_signal;

int agent_attach(void)
{
	int fd = open(agent_config.shm_path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return -1;
	}
	int ok = map_header(fd, &st, &requested_source, &requested_signal) == 0;
	agent_close_own(fd, &st);
	if (!ok)
		return -1;
	agent_config.shm_dev = (uint64_t)st.st_dev;
	agent_config.shm_ino = (uint64_t)st.st_ino;
	agent_config.pid = getpid();
	agent_stream = atomic_fetch_add(&agent_transport.header->next_stream, 1) + 1;
	agent_map_new_chunks();
	return 0;
}

/* The first process alone speaks for the run in the header (collect's warnings name the program). */
static int first_process(void)
{
	return agent_transport.header->pid == (uint32_t)getpid();
}

__attribute__((constructor)) static void agent_start(void)
{
	void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page != MAP_FAILED && madvise(page, 4096, MADV_WIPEONFORK) == 0)
		agent_flags = page; /* else (a kernel before 4.14) the static ones: a raw fork is not safe */
	else if (page != MAP_FAILED)
		munmap(page, 4096);
	interpose_init();
	unwinder_init();
	if (find_shm() < 0 || agent_attach() < 0)
		return;
	if ((agent_transport.header->mode & (TRANSPORT_MODE_CPU | TRANSPORT_MODE_WALL)) &&
	    sampler_init(requested_source, requested_signal) < 0) {
		if (first_process())
			atomic_store(&agent_transport.header->agent_state, AGENT_FAILED);
		return;
	}
	alloc_init();
	pthread_atfork(process_fork_prepare, process_fork_parent, after_fork_child);
	sigset_t old;
	agent_block_signal(&old);
	agent_flags->enabled = 1;
	take_over_from_previous_image();
	process_attached();
	alloc_start(); /* after the record that says this image attached: its events follow it */
	modules_rescan();
	agent_thread_begin();
	/* The agent's thread: wall mode's sampler; in both modes it finds the threads the agent did not
	 * start (another library's constructor made them first, or a raw clone()) and unwinds the foreign. */
	if (agent_config.signal)
		wall_scan_threads(); /* before the program runs: its descriptors are not in use yet */
	if (agent_config.signal && wall_start() < 0 && agent_config.wall) {
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

/*
 * At exit the main thread's name may have changed, and libraries that glibc
 * loaded by itself (NSS, iconv, libgcc_s), bypassing our dlopen, are still
 * mapped: record them. Threads still running are cut short: their CPU time
 * so far is recorded for them.
 */
__attribute__((destructor)) static void agent_stop(void)
{
	if (!agent_flags->enabled || agent_config.pid != getpid())
		return;
	sigset_t old;
	agent_block_signal(&old);
	wall_stop();
	sampler_thread_stop();
	modules_rescan();
	agent_enter();
	agent_record_running_threads();
	agent_leave();
	agent_thread_record(TRACE_THREAD_NAME | TRACE_THREAD_AT_END);
	agent_restore_signal(&old);
}

/* ---- region control: ipscope.h's ipscope_start() and ipscope_stop() find these ---- */

AGENT_EXPORT void ipscope_agent_start(void)
{
	if (!agent_transport.header || agent_config.pid != getpid())
		return;
	uint32_t off = 1; /* 2 (collect's --duration is over) stays */
	atomic_compare_exchange_strong(&agent_transport.header->paused, &off, 0);
}

AGENT_EXPORT void ipscope_agent_stop(void)
{
	if (!agent_transport.header || agent_config.pid != getpid())
		return;
	uint32_t on = 0;
	atomic_store(&agent_transport.header->ever_paused, 1);
	atomic_compare_exchange_strong(&agent_transport.header->paused, &on, 1);
}
