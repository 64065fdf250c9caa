/*
 * sources.c - setting up the sampling sources sampler.c describes, for any
 * thread of the process (its own, or one another thread discovered): a
 * perf task-clock event signalling that thread, and a CPU-time timer on its
 * clock. Both name their thread by its kernel id, so the thread that starts
 * them need not be the one they sample (a raw clone() thread's sources are
 * started by whoever found it, foreign.c).
 *
 * A perf event is a descriptor, if only for the microseconds until its
 * mapping keeps it alive. Opened in the program's descriptor table, it takes
 * the lowest free number, the very one another thread of the program may be
 * about to get: a program running one descriptor short of RLIMIT_NOFILE saw
 * its own open() fail with EMFILE hundreds of times a run. So once the
 * program has threads, the agent's background thread, which has a
 * descriptor table of its own (background.c), opens every thread's event
 * (source_serve_requests) while the starting thread waits for it. A process
 * with one thread opens its own: no other thread is there to compete.
 */
#include "sampling.h"

#include <fcntl.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "futex.h"

int source_timer_cookie;

int source_perf_open(uint64_t period_ns, uint32_t tid)
{
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.size = sizeof attr;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	attr.sample_period = period_ns;
	attr.disabled = 1;
	attr.exclude_kernel = 1; /* see the header: kernel-mode overflows would interrupt system calls */
	attr.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &attr, tid ? (pid_t)tid : 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/*
 * Close a perf event's descriptor, if it still is ours: every perf event,
 * eventfd and timerfd shares one anonymous inode, so the check also asks
 * for the signal it was told to send (signal_set: it got that far).
 */
void source_perf_close(int fd, const struct stat *opened, int signal_set)
{
	if (signal_set && fcntl(fd, F_GETSIG) != agent_config.signal)
		return;
	agent_close_own(fd, opened);
}

/* A task-clock event signalling thread tid on every overflow (no event limit, so no REFRESH), opened here. */
static void *perf_start_here(uint32_t tid)
{
	struct stat opened;
	int fd = source_perf_open(agent_config.interval_ns, tid == agent_gettid() ? 0 : tid);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &opened) < 0) {
		syscall(SYS_close, fd);
		return NULL;
	}
	struct f_owner_ex owner = { F_OWNER_TID, (pid_t)tid };
	void *page = MAP_FAILED;
	int signal_set = fcntl(fd, F_SETFL, O_ASYNC) == 0 && fcntl(fd, F_SETSIG, agent_config.signal) == 0;
	if (signal_set && fcntl(fd, F_SETOWN_EX, &owner) == 0)
		page = mmap(NULL, AGENT_PERF_PAGE_BYTES, PROT_READ, MAP_SHARED, fd, 0);
	if (page != MAP_FAILED) {
		madvise(page, AGENT_PERF_PAGE_BYTES, MADV_DONTFORK);
		if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
			munmap(page, AGENT_PERF_PAGE_BYTES);
			page = MAP_FAILED;
		}
	}
	source_perf_close(fd, &opened, signal_set); /* the mapping keeps the event alive */
	return page == MAP_FAILED ? NULL : page;
}

/* ---- perf events opened by the background thread ---- */

#define PERF_REQUESTS 64
#define PERF_REQUEST_WAIT_NS 50000000ull /* then the thread is sampled by its timer alone */

enum { REQUEST_FREE, REQUEST_FILLING, REQUEST_WANTED, REQUEST_TAKEN, REQUEST_DONE };

static struct perf_request {
	_Atomic uint32_t state; /* REQUEST_*, the futex word the requester waits on */
	uint32_t tid;
	void *page;
} requests[PERF_REQUESTS];

void source_serve_requests(void)
{
	for (size_t i = 0; i < PERF_REQUESTS; i++) {
		struct perf_request *r = &requests[i];
		uint32_t wanted = REQUEST_WANTED;
		if (atomic_load_explicit(&r->state, memory_order_relaxed) != REQUEST_WANTED ||
		    !atomic_compare_exchange_strong(&r->state, &wanted, REQUEST_TAKEN))
			continue;
		r->page = perf_start_here(r->tid);
		atomic_store(&r->state, REQUEST_DONE);
		futex_wake(&r->state);
	}
}

/* Ask the background thread for tid's event and wait: its page, NULL (none), or (void *)-1: ask failed. */
static void *perf_start_requested(uint32_t tid)
{
	struct perf_request *r = NULL;
	for (size_t i = 0; i < PERF_REQUESTS && !r; i++) {
		uint32_t free_state = REQUEST_FREE;
		if (atomic_compare_exchange_strong(&requests[i].state, &free_state, REQUEST_FILLING))
			r = &requests[i];
	}
	if (!r)
		return (void *)-1;
	r->tid = tid;
	r->page = NULL;
	atomic_store(&r->state, REQUEST_WANTED);
	agent_wake_background();
	uint64_t give_up = agent_now_ns() + PERF_REQUEST_WAIT_NS;
	for (;;) {
		uint32_t state = atomic_load(&r->state);
		if (state == REQUEST_DONE)
			break;
		if (state == REQUEST_WANTED && agent_now_ns() >= give_up &&
		    atomic_compare_exchange_strong(&r->state, &state, REQUEST_FREE))
			return NULL; /* not taken in time (a loaded machine, or the thread stopping) */
		futex_wait_until(&r->state, state, state == REQUEST_WANTED ? give_up : agent_now_ns() + PERF_REQUEST_WAIT_NS);
	}
	void *page = r->page;
	atomic_store(&r->state, REQUEST_FREE);
	return page;
}

void *source_perf_start(uint32_t tid)
{
	if (agent_descriptor_thread_serves()) {
		void *page = perf_start_requested(tid);
		if (page != (void *)-1)
			return page;
	}
	return perf_start_here(tid);
}

/* A pseudo-random first expiry in (0, interval], so short threads are not sampled late on average. */
static long first_expiry_ns(uint32_t tid)
{
	uint64_t x = agent_now_ns() ^ ((uint64_t)tid << 32);
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (long)(1 + x % agent_config.interval_ns);
}

int source_timer_start(timer_t *timer, uint32_t tid)
{
	struct sigevent sev;
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = agent_config.signal;
	sev._sigev_un._tid = (pid_t)tid;
	sev.sigev_value.sival_ptr = &source_timer_cookie;
	/* Another thread's CPU clock: the kernel's id of it (MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)). */
	clockid_t clock = tid == agent_gettid() ? CLOCK_THREAD_CPUTIME_ID : (clockid_t)((~tid << 3) | 6);
	if (timer_create(clock, &sev, timer) < 0)
		return -1;
	struct itimerspec its;
	long first = first_expiry_ns(tid);
	its.it_interval.tv_sec = (time_t)(agent_config.interval_ns / 1000000000u);
	its.it_interval.tv_nsec = (long)(agent_config.interval_ns % 1000000000u);
	its.it_value.tv_sec = first / 1000000000;
	its.it_value.tv_nsec = first % 1000000000;
	if (timer_settime(*timer, 0, &its, NULL) < 0) {
		timer_delete(*timer);
		return -1;
	}
	return 0;
}
