/*
 * agent.c - the agent's lifecycle: attaching to collect's shared memory when
 * the program starts, a forked child letting go of it, a program exec'd in
 * place taking over from the image before it, and the last records at exit.
 *
 * collect passes, through the environment, the pid the agent may run in and
 * where its shared memory is: its own descriptor of it, opened here through
 * /proc/COLLECT_PID/fd/N and closed again once mapped, so the program
 * inherits nothing. Any other process that inherits LD_PRELOAD (a child the
 * program forks or execs) finds nothing to attach to and stays inert.
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
#include <unistd.h>

#include "trace.h"

struct transport agent_transport;
struct agent_config agent_config;
volatile sig_atomic_t agent_enabled;
AGENT_TLS __thread struct agent_thread agent_self = { .ring = AGENT_NO_RING, .slot = -1 };

/* A forked child shares nothing with the traced process: the mappings were not inherited (MADV_DONTFORK). */
static void after_fork_child(void)
{
	if (!agent_enabled)
		return;
	agent_enabled = 0;
	alloc_forget();
	sampler_forget_all();
	agent_self.ring = AGENT_NO_RING;
	agent_self.registered = 0;
	agent_self.stacks = NULL; /* its memory is the parent's copy: left alone */
	memset(&agent_transport, 0, sizeof agent_transport);
}

/*
 * The same process exec'd a new program (collect env ..., nice ..., a shell's
 * exec): the old image's threads are gone, so their rings go back to collect,
 * and collect is told that every module mapped so far went with them.
 */
static void take_over_from_previous_image(void)
{
	uint32_t n = transport_nrings(&agent_transport);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t owned = RING_OWNED;
		atomic_compare_exchange_strong(&transport_ring(&agent_transport, i)->state, &owned, RING_CLOSED);
	}
	agent_enter();
	uint32_t ring = agent_thread_ring();
	struct tr_exec *e = ring == AGENT_NO_RING ? NULL :
			    transport_reserve(&agent_transport, ring, TR_EXEC, sizeof *e);
	if (e) {
		e->time_ns = agent_now_ns();
		transport_commit(&agent_transport, ring);
	}
	agent_leave();
}

/* Where collect's shared memory is: "COLLECT_PID:FD" for this pid only. */
static int find_shm(void)
{
	const char *shm = getenv(TRANSPORT_ENV), *pid_text = getenv(TRANSPORT_ENV_PID);
	if (!shm || !pid_text || (pid_t)atol(pid_text) != getpid())
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
	if (h->magic != TRANSPORT_MAGIC || h->pid != (uint32_t)getpid() || !h->interval_ns || !h->max_frames ||
	    h->max_frames > 1024 ||
	    transport_init(&agent_transport, h, h->ring_bytes, h->rings_per_chunk, h->max_chunks) < 0) {
		munmap(h, TRANSPORT_HEADER_BYTES);
		return -1;
	}
	agent_config.interval_ns = h->interval_ns;
	agent_config.max_frames = h->max_frames;
	*requested_source = h->requested_source;
	*requested_signal = h->requested_signal < 65 ? (int)h->requested_signal : 0;
	return 0;
}

static int attach(uint32_t *requested_source, int *requested_signal)
{
	if (find_shm() < 0)
		return -1;
	int fd = open(agent_config.shm_path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return -1;
	}
	int ok = map_header(fd, &st, requested_source, requested_signal) == 0;
	agent_close_own(fd, &st);
	if (!ok)
		return -1;
	agent_config.shm_dev = (uint64_t)st.st_dev;
	agent_config.shm_ino = (uint64_t)st.st_ino;
	agent_map_new_chunks();
	if (atomic_fetch_add(&agent_transport.header->images, 1) > 0)
		take_over_from_previous_image();
	return 0;
}

__attribute__((constructor)) static void agent_start(void)
{
	agent_resolve_libc();
	unwinder_init();
	uint32_t requested_source;
	int requested_signal;
	if (attach(&requested_source, &requested_signal) < 0)
		return;
	if ((agent_transport.header->mode & TRANSPORT_MODE_CPU) && sampler_init(requested_source, requested_signal) < 0) {
		atomic_store(&agent_transport.header->agent_state, AGENT_FAILED);
		return;
	}
	alloc_init();
	pthread_atfork(NULL, NULL, after_fork_child);
	sigset_t old;
	agent_block_signal(&old);
	agent_enabled = 1;
	modules_rescan();
	agent_thread_begin();
	if (!(agent_transport.header->mode & TRANSPORT_MODE_CPU))
		agent_transport.header->source = TRANSPORT_SOURCE_NONE;
	atomic_store(&agent_transport.header->agent_state, AGENT_RUNNING);
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
	if (!agent_enabled)
		return;
	sigset_t old;
	agent_block_signal(&old);
	sampler_thread_stop();
	modules_rescan();
	agent_enter();
	agent_record_running_threads();
	agent_leave();
	agent_thread_record(TRACE_THREAD_NAME | TRACE_THREAD_AT_END);
	agent_restore_signal(&old);
}
