/*
 * rings.c - collect's shared memory as this process maps it: its chunks,
 * and the ring each thread writes into.
 *
 * A thread claims a ring when it starts (or, if every ring was taken then, at
 * its first sample) and hands it back when it ends; collect frees it once
 * drained. When every mapped ring is taken the thread maps the chunks collect
 * published since, or counts its samples lost until collect (which keeps a
 * margin of free rings) adds one: claiming never waits and never allocates,
 * so it may run inside the signal handler. Outside it, a record that must
 * not be lost waits for a ring, or for room in one, while collect lives.
 */
#include "agent.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "trace.h"

static _Atomic uint32_t next_ring_hint;

/* A fresh descriptor of collect's shared memory, checked to be it (st: its fstat); -1 on failure. */
static int open_shm(struct stat *st)
{
	/* Not open(): a cancellation point, and a thread cancelled in it would leave chunks_mapping set. */
	int fd = (int)syscall(SYS_openat, AT_FDCWD, agent_config.shm_path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, st) < 0) {
		syscall(SYS_close, fd);
		return -1;
	}
	if ((uint64_t)st->st_dev != agent_config.shm_dev || (uint64_t)st->st_ino != agent_config.shm_ino) {
		agent_close_own(fd, st);
		return -1;
	}
	return fd;
}

/* Chunks a thread found published and unmapped, for the background thread (agent_map_asked_chunks). */
static _Atomic int chunks_asked;
/* A thread of this process is mapping chunks (agent_map_new_chunks), and one was turned away meanwhile. */
static _Atomic int chunks_mapping, chunks_refused;

/* Chunks published (at most the geometry's). */
static uint32_t chunks_published(const struct transport *t)
{
	uint32_t published = atomic_load(&t->header->nchunks);
	return published > t->max_chunks ? t->max_chunks : published;
}

uint32_t agent_map_new_chunks(void)
{
	struct transport *t = &agent_transport;
	uint32_t mapped = 0;
	if (chunks_published(t) <= atomic_load(&t->nmapped))
		return 0;
	if (agent_descriptor_thread_serves()) {
		/* Opening the memory would take a number of the program's (sources.c says why not): the
		 * background thread maps it, and the caller finds the rings at its next try. */
		if (!atomic_exchange(&chunks_asked, 1))
			agent_wake_background();
		return 0;
	}
	/* One thread of the process maps them at a time (without a descriptor thread, each thread that
	 * collect's growth woke would open and map them, to unmap all but one's), and wakes the waits of
	 * those it turned away when done: a caller turned away says so, then looks again, so either the
	 * mapping thread sees its word or it finds the flag clear and maps itself. */
	while (atomic_exchange(&chunks_mapping, 1)) {
		atomic_store(&chunks_refused, 1);
		if (atomic_load(&chunks_mapping))
			return 0;
	}
	uint32_t published = chunks_published(t);
	struct stat st;
	int fd = open_shm(&st);
	if (fd < 0) {
		atomic_store(&chunks_mapping, 0);
		if (atomic_exchange(&chunks_refused, 0))
			transport_rings_changed(t->header);
		return 0;
	}
	/* The file never shrinks (sealed): what fits now stays mapped safely. */
	{
		for (uint32_t c = atomic_load(&t->nmapped); c < published; c++) {
			size_t offset = transport_chunk_offset(t, c);
			if (offset + t->chunk_bytes > (size_t)st.st_size)
				break;
			void *m = mmap(NULL, t->chunk_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)offset);
			if (m == MAP_FAILED)
				break;
			madvise(m, t->chunk_bytes, MADV_DONTFORK);
			if (transport_add_chunk(t, c, m))
				mapped++;
			else
				munmap(m, t->chunk_bytes);
		}
	}
	agent_close_own(fd, &st);
	atomic_store(&chunks_mapping, 0);
	/* This process's threads waiting for a ring take these, or look again (one turned away may have
	 * seen chunks published after this one read the count). */
	if (atomic_exchange(&chunks_refused, 0) || mapped)
		transport_rings_changed(t->header);
	return mapped;
}

void agent_map_asked_chunks(void)
{
	if (atomic_load_explicit(&chunks_asked, memory_order_relaxed) && atomic_exchange(&chunks_asked, 0))
		agent_map_new_chunks();
}

void agent_rings_forget(void)
{
	atomic_store(&chunks_asked, 0);
	atomic_store(&chunks_mapping, 0);
	atomic_store(&chunks_refused, 0);
}

static uint32_t claim_free_ring(void)
{
	uint32_t n = transport_nrings(&agent_transport);
	uint32_t start = n ? atomic_fetch_add(&next_ring_hint, 1) % n : 0;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t i = (start + k) % n;
		struct transport_ring *r = transport_ring(&agent_transport, i);
		uint32_t expected = RING_FREE;
		if (atomic_load_explicit(&r->state, memory_order_relaxed) != RING_FREE)
			continue;
		if (atomic_compare_exchange_strong(&r->state, &expected, RING_CLAIMING)) {
			r->tid = agent_gettid();
			r->pid = (uint32_t)agent_config.pid;
			r->flags = agent_self.background ? RING_AGENT_SAMPLER : 0;
			r->stream = agent_stream;
			atomic_store_explicit(&r->state, RING_OWNED, memory_order_release);
			return i;
		}
	}
	return AGENT_NO_RING;
}

uint32_t agent_thread_ring(void)
{
	uint32_t ring = agent_self.ring;
	if (ring == AGENT_NO_RING) {
		ring = claim_free_ring();
		if (ring == AGENT_NO_RING && agent_map_new_chunks())
			ring = claim_free_ring();
		if (ring == AGENT_NO_RING) {
			/* collect frees ended threads' rings and grows when woken; one signal until it has. */
			if (!atomic_exchange(&agent_transport.header->wake_pending, 1))
				kill(agent_config.collect_pid, TRANSPORT_WAKE_SIGNAL);
			return AGENT_NO_RING;
		}
		agent_self.ring = ring;
	}
	if (agent_self.start_pending)
		agent_thread_record_start(ring);
	return ring;
}

int agent_write_sample(uint32_t ring, uint32_t tid, uint32_t stack_id, uint32_t weight, uint64_t time_ns,
		       uint32_t state, int32_t syscall_nr)
{
	struct tr_sample *s = stack_id == UINT32_MAX ? NULL : transport_reserve(&agent_transport, ring, TR_SAMPLE, sizeof *s);
	if (!s)
		return 0;
	s->time_ns = time_ns;
	s->tid = tid;
	s->stack_id = stack_id;
	s->weight = weight;
	s->state = state;
	s->syscall = syscall_nr;
	s->reserved = 0;
	transport_commit(&agent_transport, ring);
	return 1;
}

void agent_count_record_lost(void)
{
	atomic_fetch_add_explicit(&agent_transport.header->records_lost, 1, memory_order_relaxed);
}

void *agent_reserve_waiting(uint32_t ring, uint32_t type, uint32_t size)
{
	for (;;) {
		void *p = transport_reserve(&agent_transport, ring, type, size);
		if (p)
			return p;
		uint64_t heartbeat = atomic_load(&agent_transport.header->consumer_heartbeat_ns);
		if (agent_now_ns() - heartbeat > 2000000000ull)
			return NULL; /* collect stopped draining (killed): do not hang the program */
		usleep(1000);
	}
}

/*
 * Every ring is taken when threads or processes start faster than collect
 * frees the rings of those that ended (it is woken by the first that finds
 * none) or maps more: a burst of 200 short processes started at once found
 * none in 1 to 10 of them, whose records that they had started were lost.
 * Outside the handler a record that must not be lost waits, while collect
 * lives, up to RING_WAIT_NS; once collect cannot grow (its last chunk, or no
 * memory) only RING_WAIT_FULL_NS, for it to free the rings of ended threads:
 * a table full of live threads must not make every new thread wait. The
 * wait is a futex that whoever frees or adds rings wakes
 * (transport_rings_changed), not a poll: 1500 threads of three programs
 * started at once, each looking for a ring every 200 us, kept collect from
 * the CPU it needed to grow, ran 10 times longer and lost samples.
 */
#define RING_WAIT_NS 1000000000ull
#define RING_WAIT_FULL_NS 20000000ull
#define RING_WAIT_STEP_NS 50000000ull /* a look at collect's heartbeat and the deadlines at least this often */

uint32_t agent_ring_waiting(void)
{
	struct transport_header *h = agent_transport.header;
	uint32_t ring = agent_thread_ring();
	if (ring != AGENT_NO_RING)
		return ring;
	uint64_t start = agent_now_ns();
	/* Counted in before each look, so a change made after the look wakes this thread
	 * (transport_rings_changed reads the count after publishing the rings). */
	atomic_fetch_add(&h->ring_waiters, 1);
	atomic_thread_fence(memory_order_seq_cst); /* the count before the rings' states are read */
	for (;;) {
		uint32_t seen = atomic_load(&h->rings_changed);
		ring = agent_thread_ring();
		if (ring != AGENT_NO_RING)
			break;
		uint64_t now = agent_now_ns();
		uint64_t limit = atomic_load_explicit(&h->cannot_grow, memory_order_relaxed) ? RING_WAIT_FULL_NS
											    : RING_WAIT_NS;
		if (now - atomic_load(&h->consumer_heartbeat_ns) > 2000000000ull || now - start >= limit)
			break; /* collect is gone, or cannot make more */
		uint64_t until = start + limit < now + RING_WAIT_STEP_NS ? start + limit : now + RING_WAIT_STEP_NS;
		if (transport_rings_wait(h, seen, until) < 0) {
			struct timespec ts = { 0, 1000000 };
			nanosleep(&ts, NULL);
		}
	}
	atomic_fetch_sub(&h->ring_waiters, 1);
	return ring;
}
