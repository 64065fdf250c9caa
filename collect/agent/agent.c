/*
 * agent.c - start-up of the in-process agent, thread registration, and the
 * few libc functions it wraps (pthread_create, dlopen, dlclose, fork).
 *
 * collect passes a shared memory fd and the pid the agent may run in through
 * the environment. Any other process that inherits LD_PRELOAD (a child the
 * program forks or execs) finds nothing to attach to and stays inert.
 */
#include "agent.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "trace.h"

struct transport agent_transport;
static int agent_fd = -1;
volatile sig_atomic_t agent_enabled;
AGENT_TLS __thread struct agent_thread agent_self = { .ring = AGENT_NO_RING, .perf_fd = -1, .perf_slot = -1 };

static pthread_mutex_t modules_lock = PTHREAD_MUTEX_INITIALIZER;

uint64_t agent_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint32_t agent_gettid(void)
{
	if (!agent_self.tid)
		agent_self.tid = (uint32_t)syscall(SYS_gettid);
	return agent_self.tid;
}

uint32_t agent_thread_ring(void)
{
	if (agent_self.ring != AGENT_NO_RING)
		return agent_self.ring;
	struct transport_ring *rings = agent_transport.rings;
	for (uint32_t i = 0; i < agent_transport.nrings; i++) {
		uint32_t expected = RING_FREE;
		if (atomic_load_explicit(&rings[i].state, memory_order_relaxed) != RING_FREE)
			continue;
		if (atomic_compare_exchange_strong(&rings[i].state, &expected, RING_OWNED)) {
			rings[i].tid = agent_gettid();
			agent_self.ring = i;
			return i;
		}
	}
	return AGENT_NO_RING;
}

void agent_block_signal(sigset_t *old)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, AGENT_SIGNAL);
	pthread_sigmask(SIG_BLOCK, &set, old);
}

void agent_restore_signal(const sigset_t *old)
{
	pthread_sigmask(SIG_SETMASK, old, NULL);
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

/* Async-signal-safe read of the calling thread's name. */
static void read_thread_name(char name[16])
{
	memset(name, 0, 16);
	int fd = open("/proc/thread-self/comm", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, name, 15);
	close(fd);
	if (n > 0 && name[n - 1] == '\n')
		name[n - 1] = 0;
}

void agent_thread_record(uint32_t flags)
{
	uint32_t ring = agent_thread_ring();
	if (ring == AGENT_NO_RING)
		return;
	struct tr_thread *t = transport_reserve(&agent_transport, ring, TR_THREAD, sizeof *t);
	if (!t)
		return;
	t->time_ns = agent_now_ns();
	t->tid = agent_gettid();
	t->flags = flags;
	read_thread_name(t->name);
	transport_commit(&agent_transport, ring);
}

/* Called in every thread the agent samples, with the signal blocked. */
static void thread_begin(void)
{
	agent_self.tid = 0;
	agent_gettid();
	sampler_warm_up();
	agent_thread_record(TRACE_THREAD_START);
	sampler_thread_start();
	agent_self.registered = 1;
}

/* The ring goes back to collect, which frees it once drained. */
static void thread_end(void *unused)
{
	(void)unused;
	sigset_t old;
	if (!agent_self.registered)
		return;
	agent_block_signal(&old);
	sampler_thread_stop();
	agent_thread_record(TRACE_THREAD_NAME | TRACE_THREAD_EXIT);
	if (agent_self.ring != AGENT_NO_RING) {
		struct transport_ring *r = &agent_transport.rings[agent_self.ring];
		atomic_store_explicit(&r->state, RING_CLOSED, memory_order_release);
		agent_self.ring = AGENT_NO_RING;
	}
	stack_table_free(agent_self.stacks);
	agent_self.stacks = NULL;
	agent_self.registered = 0;
	agent_restore_signal(&old);
}

struct thread_start {
	void *(*start)(void *);
	void *arg;
};

static void *thread_trampoline(void *p)
{
	struct thread_start ts = *(struct thread_start *)p;
	void *ret;
	free(p);
	if (agent_enabled) {
		sigset_t old;
		agent_block_signal(&old);
		thread_begin();
		agent_restore_signal(&old);
	}
	pthread_cleanup_push(thread_end, NULL);
	ret = ts.start(ts.arg);
	pthread_cleanup_pop(1);
	return ret;
}

AGENT_EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *), void *arg)
{
	static int (*real_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	if (!real_create)
		real_create = (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))dlsym(
			RTLD_NEXT, "pthread_create");
	if (!agent_enabled)
		return real_create(thread, attr, start, arg);
	struct thread_start *ts = malloc(sizeof *ts);
	if (!ts)
		return EAGAIN;
	ts->start = start;
	ts->arg = arg;
	int rc = real_create(thread, attr, thread_trampoline, ts);
	if (rc)
		free(ts);
	return rc;
}

/* The loader's list of objects changed (or may have): record what appeared and what went. */
static void rescan_modules(void)
{
	if (!agent_enabled)
		return;
	pthread_mutex_lock(&modules_lock);
	modules_scan();
	pthread_mutex_unlock(&modules_lock);
}

/*
 * The loader lock: a thread interrupted inside dlopen/dlclose must not unwind
 * (libunwind would walk a half-updated object list, and another thread's
 * handler could wait on the lock it holds). So the sampling signal is blocked
 * for the whole call; the sample is delivered right after.
 */
AGENT_EXPORT void *dlopen(const char *file, int mode)
{
	static void *(*real_dlopen)(const char *, int);
	if (!real_dlopen)
		real_dlopen = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
	sigset_t old;
	agent_block_signal(&old);
	void *handle = real_dlopen(file, mode);
	if (handle)
		rescan_modules();
	agent_restore_signal(&old);
	return handle;
}

AGENT_EXPORT void *dlmopen(Lmid_t namespace, const char *file, int mode)
{
	static void *(*real_dlmopen)(Lmid_t, const char *, int);
	if (!real_dlmopen)
		real_dlmopen = (void *(*)(Lmid_t, const char *, int))dlsym(RTLD_NEXT, "dlmopen");
	sigset_t old;
	agent_block_signal(&old);
	void *handle = real_dlmopen(namespace, file, mode);
	if (handle)
		rescan_modules();
	agent_restore_signal(&old);
	return handle;
}

AGENT_EXPORT int dlclose(void *handle)
{
	static int (*real_dlclose)(void *);
	if (!real_dlclose)
		real_dlclose = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
	sigset_t old;
	agent_block_signal(&old);
	int rc = real_dlclose(handle);
	rescan_modules();
	agent_restore_signal(&old);
	return rc;
}

/* A forked child shares the rings' memory but is not the traced process. */
static void after_fork_child(void)
{
	if (!agent_enabled)
		return;
	agent_enabled = 0;
	sampler_forget_all();
	agent_self.ring = AGENT_NO_RING;
	agent_self.registered = 0;
	munmap(agent_transport.header, agent_transport.size);
	agent_transport.header = NULL;
	close(agent_fd);
	agent_fd = -1;
}

/*
 * The same process exec'd a new program (collect env ..., nice ..., a shell's
 * exec): the old image's threads are gone, so their rings go back to collect,
 * and collect is told that every module mapped so far went with them.
 */
static void take_over_from_previous_image(void)
{
	for (uint32_t i = 0; i < agent_transport.nrings; i++) {
		uint32_t owned = RING_OWNED;
		atomic_compare_exchange_strong(&agent_transport.rings[i].state, &owned, RING_CLOSED);
	}
	uint32_t ring = agent_thread_ring();
	struct tr_exec *e = ring == AGENT_NO_RING ? NULL :
			    transport_reserve(&agent_transport, ring, TR_EXEC, sizeof *e);
	if (e) {
		e->time_ns = agent_now_ns();
		transport_commit(&agent_transport, ring);
	}
}

/*
 * Map the shared memory collect passed down. The fd stays open (and is
 * inherited across exec on purpose) so that a program exec'd in this same
 * process can attach too; forked children close it.
 */
static int attach(void)
{
	const char *fd_text = getenv(TRANSPORT_ENV_FD);
	const char *pid_text = getenv(TRANSPORT_ENV_PID);
	if (!fd_text || !pid_text || (pid_t)atol(pid_text) != getpid())
		return -1;
	int fd = atoi(fd_text);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || (size_t)st.st_size < sizeof(struct transport_header))
		return -1;
	struct transport_header *h = mmap(NULL, sizeof *h, PROT_READ, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED)
		return -1;
	uint32_t nrings = h->nrings, ring_bytes = h->ring_bytes;
	int ok = h->magic == TRANSPORT_MAGIC && h->pid == (uint32_t)getpid() && nrings && nrings <= 65536 &&
		 ring_bytes >= 4096 && (ring_bytes & (ring_bytes - 1)) == 0 &&
		 transport_size(nrings, ring_bytes) == (size_t)st.st_size;
	munmap(h, sizeof *h);
	if (!ok)
		return -1;
	void *mapping = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mapping == MAP_FAILED)
		return -1;
	transport_init(&agent_transport, mapping, nrings, ring_bytes);
	agent_fd = fd;
	if (atomic_fetch_add(&agent_transport.header->images, 1) > 0)
		take_over_from_previous_image();
	return 0;
}

__attribute__((constructor)) static void agent_start(void)
{
	if (attach() < 0)
		return;
	sigset_t old;
	agent_block_signal(&old);
	if (sampler_init() < 0) {
		atomic_store(&agent_transport.header->agent_state, AGENT_FAILED);
		agent_restore_signal(&old);
		return;
	}
	pthread_atfork(NULL, NULL, after_fork_child);
	agent_enabled = 1;
	rescan_modules();
	thread_begin();
	atomic_store(&agent_transport.header->agent_state, AGENT_RUNNING);
	agent_restore_signal(&old);
}

/*
 * At exit the main thread's name may have changed, and libraries that glibc
 * loaded by itself (NSS, iconv, libgcc_s), bypassing our dlopen, are still
 * mapped: record them. Other threads are cut short.
 */
__attribute__((destructor)) static void agent_stop(void)
{
	if (!agent_enabled)
		return;
	sigset_t old;
	agent_block_signal(&old);
	sampler_thread_stop();
	rescan_modules();
	agent_thread_record(TRACE_THREAD_NAME);
	agent_restore_signal(&old);
}
