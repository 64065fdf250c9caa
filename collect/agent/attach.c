/*
 * attach.c - an image of the program attaching to collect's shared memory:
 * finding it, mapping its header, and taking over from an earlier image of
 * the same process.
 *
 * collect passes, through the environment, where its shared memory is: its
 * own descriptor of it, opened here through /proc/COLLECT_PID/fd/N and
 * closed again once mapped, so the program inherits nothing. Every process
 * of the tree that inherits the environment attaches (a fork+exec, a
 * posix_spawn, a shell's pipeline); with --no-follow, IPSCOPE_PID names the
 * one process that may, and any other stays inert.
 *
 * An image that attaches in a process where an earlier image had rings (an
 * exec in place) closes them: their threads are gone, and collect is told
 * that every module of that process went with them.
 */
#include "lifecycle.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "trace.h"

/* TRANSPORT_ENV parsed, for this process ("COLLECT_PID:FD[:allocs]"; with --no-follow, for IPSCOPE_PID
 * only): 0, or -1 when this process is not to attach. */
static int parse_env(long *collect_pid, long *fd, int *allocs)
{
	const char *shm = getenv(TRANSPORT_ENV), *pid_text = getenv(TRANSPORT_ENV_PID);
	if (!shm || (pid_text && (pid_t)atol(pid_text) != getpid()))
		return -1;
	char *end;
	*collect_pid = strtol(shm, &end, 10);
	*fd = *end == ':' ? strtol(end + 1, &end, 10) : -1;
	*allocs = !strcmp(end, TRANSPORT_ENV_ALLOCS);
	if (*allocs)
		end += strlen(end);
	return *collect_pid > 0 && *fd >= 0 && !*end ? 0 : -1;
}

int agent_find_shm(void)
{
	long collect_pid, fd;
	int allocs;
	if (parse_env(&collect_pid, &fd, &allocs) < 0)
		return -1;
	agent_config.collect_pid = (pid_t)collect_pid;
	snprintf(agent_config.shm_path, sizeof agent_config.shm_path, "/proc/%ld/fd/%ld", collect_pid, fd);
	return 0;
}

int agent_allocs_requested(void)
{
	static int requested = -1; /* not read yet */
	if (requested < 0) {
		long collect_pid, fd;
		int allocs;
		requested = parse_env(&collect_pid, &fd, &allocs) == 0 && allocs;
	}
	return requested;
}

/* Map the header and copy what collect asked for; the shared copy is the program's to scribble on. */
static int map_header(int fd, const struct stat *st)
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
	agent_config.allocs = (h->mode & TRANSPORT_MODE_ALLOCS) != 0;
	agent_config.requested_source = h->requested_source;
	agent_config.requested_signal = h->requested_signal < 65 ? (int)h->requested_signal : 0;
	return 0;
}

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
	int ok = map_header(fd, &st) == 0;
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
void agent_take_over(void)
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
