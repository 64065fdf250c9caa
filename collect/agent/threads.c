/*
 * threads.c - the agent's low-level services: clocks, the shared memory and
 * its rings, and the records that say which threads ran and for how long.
 *
 * A thread claims a ring when it starts (or, if every ring was taken then, at
 * its first sample) and hands it back when it ends; collect frees it once
 * drained. When every mapped ring is taken the thread maps the chunks collect
 * published since, or counts its samples lost until collect (which keeps a
 * margin of free rings) adds one: claiming never waits and never allocates,
 * so it may run inside the signal handler.
 *
 * Thread records carry the thread's own CPU clock (CLOCK_THREAD_CPUTIME_ID),
 * so analyze can tell how much of a thread's CPU time the samples cover.
 */
#include "agent.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "trace.h"

/* The kernel's clock id of another thread's CPU time (MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)). */
#define THREAD_CPU_CLOCK(tid) ((clockid_t)((~(unsigned)(tid) << 3) | 6))

static _Atomic uint32_t next_ring_hint;

uint64_t agent_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t agent_thread_cpu_ns(uint32_t tid)
{
	struct timespec ts;
	if (clock_gettime(tid ? THREAD_CPU_CLOCK(tid) : CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint32_t agent_gettid(void)
{
	if (!agent_self.tid)
		agent_self.tid = (uint32_t)syscall(SYS_gettid);
	return agent_self.tid;
}

int agent_close_own(int fd, const struct stat *opened)
{
	/* Between the open and this close the program (another thread) could have
	 * closed the number and got it back for a file of its own: then it is not ours. */
	struct stat now;
	if (fstat(fd, &now) < 0 || now.st_dev != opened->st_dev || now.st_ino != opened->st_ino)
		return -1;
	return (int)syscall(SYS_close, fd);
}

int agent_open_shm(struct stat *st)
{
	int fd = open(agent_config.shm_path, O_RDWR | O_CLOEXEC);
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

uint32_t agent_map_new_chunks(void)
{
	struct transport *t = &agent_transport;
	uint32_t published = atomic_load(&t->header->nchunks), mapped = 0;
	if (published > t->max_chunks)
		published = t->max_chunks;
	if (published <= atomic_load(&t->nmapped))
		return 0;
	struct stat st;
	int fd = agent_open_shm(&st);
	if (fd < 0)
		return 0;
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
	return mapped;
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
			r->flags = wall_is_sampler() ? RING_AGENT_SAMPLER : 0;
			r->stream = agent_stream;
			atomic_store_explicit(&r->state, RING_OWNED, memory_order_release);
			return i;
		}
	}
	return AGENT_NO_RING;
}

/* Another thread's name as the kernel has it (/proc/self/task/TID/comm), into name[16]. */
static void read_comm(uint32_t tid, char name[16])
{
	char path[64];
	snprintf(path, sizeof path, "/proc/self/task/%u/comm", tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	memset(name, 0, 16);
	if (fd < 0)
		return;
	struct stat st;
	if (fstat(fd, &st) == 0) {
		ssize_t n = read(fd, name, 15);
		if (n > 0 && name[n - 1] == '\n')
			name[n - 1] = 0;
	}
	agent_close_own(fd, &st);
}

/* own: about the calling thread (else tid's: name, when given); may_wait: not in the signal handler. */
static void write_thread_record_named(uint32_t ring, uint32_t tid, uint64_t cpu_ns, uint32_t flags, int own,
				      int may_wait, const char *name)
{
	struct tr_thread *t = may_wait ? agent_reserve_waiting(ring, TR_THREAD, sizeof *t) :
					 transport_reserve(&agent_transport, ring, TR_THREAD, sizeof *t);
	if (!t)
		return;
	memset(t, 0, sizeof *t);
	t->time_ns = agent_now_ns();
	t->cpu_ns = cpu_ns;
	t->tid = tid;
	t->flags = flags;
	/* The kernel's name of the calling thread; another thread's as it was read for it. */
	if (own)
		prctl(PR_GET_NAME, t->name, 0, 0, 0);
	else if (name)
		strncpy(t->name, name, sizeof t->name - 1);
	transport_commit(&agent_transport, ring);
}

static void write_thread_record(uint32_t ring, uint32_t tid, uint64_t cpu_ns, uint32_t flags, int own,
				int may_wait)
{
	write_thread_record_named(ring, tid, cpu_ns, flags, own, may_wait, NULL);
}

void agent_thread_record_for(uint32_t tid, const char *name, uint32_t flags)
{
	sigset_t old;
	uint32_t ring = agent_write_begin(&old);
	if (ring != AGENT_NO_RING)
		write_thread_record_named(ring, tid, 0, flags, tid == agent_gettid(), 1, name);
	agent_write_end(&old);
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
	if (agent_self.start_pending) {
		agent_self.start_pending = 0;
		write_thread_record(ring, agent_gettid(), agent_thread_cpu_ns(0), TRACE_THREAD_START, 1,
				    !agent_self.in_handler);
	}
	return ring;
}

/* The kernel's call itself: the program's pthread_sigmask is wrapped (sigmask.c). */
void agent_block_signal(sigset_t *old)
{
	sigset_t set;
	sigemptyset(&set);
	if (agent_config.signal)
		sigaddset(&set, agent_config.signal);
	REAL(syscall)(SYS_rt_sigprocmask, SIG_BLOCK, &set, old, _NSIG / 8);
	agent_self.in_agent_section++;
}

/* Undo the block only: program code that ran inside the section (fork handlers of libraries loaded
 * before the agent, a dlopen'd constructor) may have changed the mask of other signals, and that
 * change stays (a child handler's block of SIGUSR1 was undone so); the sampling signal is unblocked
 * as before the section. */
void agent_restore_signal(const sigset_t *old)
{
	agent_self.in_agent_section--;
	if (!agent_config.signal || sigismember(old, agent_config.signal))
		return;
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, agent_config.signal);
	REAL(syscall)(SYS_rt_sigprocmask, SIG_UNBLOCK, &set, NULL, _NSIG / 8);
}

void agent_internal_begin(sigset_t *old)
{
	if (agent_self.internal_blocked++ == 0) {
		sigset_t set;
		sigfillset(&set); /* glibc's: without its own thread-cancel and setxid signals */
		/* A fault in the window is delivered as it would be, not turned into a kill. */
		sigdelset(&set, SIGSEGV);
		sigdelset(&set, SIGBUS);
		sigdelset(&set, SIGILL);
		sigdelset(&set, SIGFPE);
		sigdelset(&set, SIGTRAP);
		sigdelset(&set, SIGSYS);
		REAL(syscall)(SYS_rt_sigprocmask, SIG_BLOCK, &set, old, _NSIG / 8);
		agent_self.in_agent_section++;
	}
	agent_self.internal++;
}

void agent_internal_end(const sigset_t *old)
{
	agent_self.internal--;
	if (--agent_self.internal_blocked == 0) {
		agent_self.in_agent_section--;
		REAL(syscall)(SYS_rt_sigprocmask, SIG_SETMASK, old, NULL, _NSIG / 8);
	}
}

uint32_t agent_write_begin(sigset_t *old)
{
	agent_block_signal(old);
	/* A writer like an allocation hook: a program's handler that allocates while this record is half
	 * made leaves its events for agent_write_end (it wrote them into the middle of the record, and
	 * collect dropped the rest of the ring as overwritten, when a SIGALRM handler's malloc landed in
	 * the wait wrapper's record of a reaped child). */
	agent_enter();
	unsigned char resident;
	/* Nested in a program's handler that interrupted a writer (this one or a hook); or another
	 * process: a vfork child shares the memory (and this thread's ring, its parent thread being
	 * suspended), a raw fork does not. */
	if (!agent_flags->enabled || agent_self.depth > 1 ||
	    (agent_config.pid != getpid() && mincore(agent_transport.header, 4096, &resident) < 0))
		return AGENT_NO_RING; /* nested: the caller's record is skipped (process.c says what shows it) */
	uint32_t ring = agent_ring_waiting();
	if (ring == AGENT_NO_RING)
		agent_count_record_lost();
	return ring;
}

void agent_count_record_lost(void)
{
	atomic_fetch_add_explicit(&agent_transport.header->records_lost, 1, memory_order_relaxed);
}

void agent_write_end(const sigset_t *old)
{
	agent_leave(); /* writes what a handler left meanwhile */
	agent_restore_signal(old);
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
 * lives, up to about 0.4 s; once collect cannot grow (its last chunk, or no
 * memory) only 20 ms, for it to free the rings of ended threads: a table
 * full of live threads must not make every new thread wait.
 */
uint32_t agent_ring_waiting(void)
{
	struct transport_header *h = agent_transport.header;
	uint32_t ring = agent_thread_ring();
	for (int i = 0; ring == AGENT_NO_RING && i < 2000; i++) {
		if (agent_now_ns() - atomic_load(&h->consumer_heartbeat_ns) > 2000000000ull ||
		    (i >= 100 && atomic_load_explicit(&h->cannot_grow, memory_order_relaxed)))
			break; /* collect is gone, or cannot make more */
		struct timespec ts = { 0, 200000 };
		nanosleep(&ts, NULL);
		ring = agent_thread_ring();
	}
	return ring;
}

void agent_thread_record(uint32_t flags)
{
	agent_enter();
	uint32_t ring = agent_ring_waiting();
	if (ring != AGENT_NO_RING)
		write_thread_record(ring, agent_gettid(), agent_thread_cpu_ns(0), flags, 1, 1);
	else if (agent_self.start_pending) /* it never had a ring: it and its samples are missing */
		atomic_fetch_add(&agent_transport.header->threads_without_ring, 1);
	else
		agent_count_record_lost();
	agent_leave();
}

void agent_record_running_threads(void)
{
	uint32_t ring = agent_thread_ring();
	if (ring == AGENT_NO_RING)
		return;
	uint32_t n = transport_nrings(&agent_transport), self = agent_gettid();
	for (uint32_t i = 0; i < n; i++) {
		struct transport_ring *r = transport_ring(&agent_transport, i);
		uint32_t tid = r->tid;
		if (atomic_load(&r->state) != RING_OWNED || tid == self || !tid || r->pid != (uint32_t)agent_config.pid)
			continue;
		uint64_t cpu_ns = agent_thread_cpu_ns(tid);
		char name[16];
		read_comm(tid, name); /* set later by pthread_setname_np or prctl, perhaps */
		if (cpu_ns && !(r->flags & RING_AGENT_SAMPLER))
			write_thread_record_named(ring, tid, cpu_ns, TRACE_THREAD_AT_END | (name[0] ? TRACE_THREAD_NAME : 0),
						  0, 1, name);
	}
}

void agent_thread_begin(void)
{
	agent_self.tid = 0;
	agent_gettid();
	capture_warm_up();
	alloc_thread_begin();
	agent_self.start_pending = 1;
	agent_enter();
	agent_ring_waiting(); /* writes the START record */
	agent_leave();
	sampler_thread_start();
	agent_self.registered = 1;
}

void agent_thread_end(void)
{
	if (!agent_self.registered)
		return;
	sampler_thread_stop();
	agent_thread_record(TRACE_THREAD_NAME | TRACE_THREAD_EXIT);
	if (agent_self.ring != AGENT_NO_RING) {
		agent_enter();
		agent_leave(); /* anything a handler left behind */
		struct transport_ring *r = transport_ring(&agent_transport, agent_self.ring);
		atomic_store_explicit(&r->state, RING_CLOSED, memory_order_release);
		agent_self.ring = AGENT_NO_RING;
	}
	/* Not counted internal: both only unmap, so a program's handler allocating here is recorded. */
	stack_table_free(agent_self.stacks);
	agent_self.stacks = NULL;
	capture_thread_end();
	alloc_thread_end();
	agent_self.registered = 0;
}
