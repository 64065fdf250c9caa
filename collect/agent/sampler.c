/*
 * sampler.c - per-thread CPU-time timers and the signal handler that takes a
 * backtrace on each tick.
 *
 * Source of ticks, best first:
 *  - a perf_event_open software task-clock event per thread that signals its
 *    own thread on overflow (allowed for one's own threads at
 *    perf_event_paranoid 2). It fires at the requested rate; each sample is
 *    weighted by the task-clock time elapsed since the previous one, so time
 *    spent in the kernel, where the event does not sample, is still counted.
 *  - timer_create(CLOCK_THREAD_CPUTIME_ID) per thread. The kernel only fires
 *    it on the scheduler tick, so each sample is weighted by 1 + overruns.
 *
 * Unwinding uses libunwind's unw_backtrace (fast trace cache, per-thread
 * caching so no global lock), then drops the handler's own frames.
 */
#include "agent.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "trace.h"

/* Frames of the handler itself (handler, __restore_rt) before the interrupted pc. */
#define HANDLER_FRAMES 8

/* Every open perf fd, so a forked child can close the ones of all threads (0: free, else fd + 1). */
#define MAX_PERF_FDS 4096
static _Atomic int perf_fds[MAX_PERF_FDS];

/* Tells our CPU-time timer's signals from any SIGPROF the program raises itself. */
static int timer_cookie;

static void remember_fd(int fd)
{
	agent_self.perf_slot = -1;
	for (int i = 0; i < MAX_PERF_FDS; i++) {
		int expected = 0;
		if (atomic_compare_exchange_strong(&perf_fds[i], &expected, fd + 1)) {
			agent_self.perf_slot = i;
			return;
		}
	}
}

static void forget_fd(void)
{
	if (agent_self.perf_slot >= 0)
		atomic_store(&perf_fds[agent_self.perf_slot], 0);
	agent_self.perf_slot = -1;
}

void sampler_forget_all(void)
{
	for (int i = 0; i < MAX_PERF_FDS; i++) {
		int fd = atomic_exchange(&perf_fds[i], 0);
		if (fd)
			close(fd - 1);
	}
	/* POSIX timers are not inherited by fork: nothing to delete. */
	agent_self.timer_kind = TRANSPORT_SOURCE_NONE;
	agent_self.perf_fd = -1;
	agent_self.perf_slot = -1;
}

static int perf_event_open_thread(uint64_t period_ns)
{
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.size = sizeof attr;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	attr.sample_period = period_ns;
	attr.disabled = 1;
	attr.exclude_kernel = 1; /* required at perf_event_paranoid 2 */
	attr.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static int start_perf(void)
{
	int fd = perf_event_open_thread(agent_transport.header->interval_ns);
	if (fd < 0)
		return -1;
	struct f_owner_ex owner = { F_OWNER_TID, (pid_t)agent_gettid() };
	if (fcntl(fd, F_SETFL, O_ASYNC) < 0 || fcntl(fd, F_SETSIG, AGENT_SIGNAL) < 0 ||
	    fcntl(fd, F_SETOWN_EX, &owner) < 0 || ioctl(fd, PERF_EVENT_IOC_RESET, 0) < 0 ||
	    ioctl(fd, PERF_EVENT_IOC_REFRESH, 1) < 0) {
		close(fd);
		return -1;
	}
	agent_self.perf_fd = fd;
	remember_fd(fd);
	agent_self.last_count = 0;
	agent_self.timer_kind = TRANSPORT_SOURCE_PERF;
	return 0;
}

static int start_timer(void)
{
	struct sigevent sev;
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = AGENT_SIGNAL;
	sev._sigev_un._tid = (pid_t)agent_gettid();
	sev.sigev_value.sival_ptr = &timer_cookie;
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &agent_self.timer) < 0)
		return -1;
	struct itimerspec its;
	its.it_interval.tv_sec = (time_t)(agent_transport.header->interval_ns / 1000000000u);
	its.it_interval.tv_nsec = (long)(agent_transport.header->interval_ns % 1000000000u);
	its.it_value = its.it_interval;
	if (timer_settime(agent_self.timer, 0, &its, NULL) < 0) {
		timer_delete(agent_self.timer);
		return -1;
	}
	agent_self.timer_kind = TRANSPORT_SOURCE_TIMER;
	return 0;
}

int sampler_thread_start(void)
{
	if (agent_self.timer_kind != TRANSPORT_SOURCE_NONE)
		return 0;
	if (agent_transport.header->source == TRANSPORT_SOURCE_PERF && start_perf() == 0)
		return 0;
	return start_timer();
}

void sampler_thread_stop(void)
{
	if (agent_self.timer_kind == TRANSPORT_SOURCE_PERF) {
		ioctl(agent_self.perf_fd, PERF_EVENT_IOC_DISABLE, 0);
		forget_fd();
		close(agent_self.perf_fd);
		agent_self.perf_fd = -1;
	} else if (agent_self.timer_kind == TRANSPORT_SOURCE_TIMER) {
		timer_delete(agent_self.timer);
	}
	agent_self.timer_kind = TRANSPORT_SOURCE_NONE;
}

void sampler_warm_up(void)
{
	void *ips[64];
	unw_backtrace(ips, 64);
}

/* Timer periods this tick stands for; 0 when the signal is not our timer's. */
static uint32_t sample_weight(const siginfo_t *si)
{
	if (agent_self.timer_kind == TRANSPORT_SOURCE_PERF) {
		if (si->si_code != POLL_HUP && si->si_code != POLL_IN)
			return 0;
		uint64_t interval = agent_transport.header->interval_ns, count = 0;
		if (read(agent_self.perf_fd, &count, sizeof count) != sizeof count)
			count = agent_self.last_count + interval;
		/* Whole periods only; the remainder carries over to the next sample. */
		uint64_t weight = count > agent_self.last_count ? (count - agent_self.last_count) / interval : 0;
		if (!weight)
			weight = 1;
		agent_self.last_count += weight * interval;
		ioctl(agent_self.perf_fd, PERF_EVENT_IOC_REFRESH, 1);
		return (uint32_t)weight;
	}
	if (agent_self.timer_kind == TRANSPORT_SOURCE_TIMER && si->si_code == SI_TIMER &&
	    si->si_value.sival_ptr == &timer_cookie)
		return 1u + (uint32_t)(si->si_overrun > 0 ? si->si_overrun : 0);
	return 0;
}

static void count_lost(void)
{
	if (agent_self.ring != AGENT_NO_RING)
		atomic_fetch_add(&agent_transport.rings[agent_self.ring].lost, 1);
	else
		atomic_fetch_add(&agent_transport.header->lost_no_ring, 1);
}

static void record_sample(uint32_t weight, const ucontext_t *uc)
{
	uint64_t now = agent_now_ns();
	uint32_t max = agent_transport.header->max_frames; /* collect keeps it <= 1024 */
	void *ips[max + HANDLER_FRAMES];
	int n = unw_backtrace(ips, (int)(max + HANDLER_FRAMES));
	uint64_t pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	int first = -1;
	for (int i = 0; i < n && i < HANDLER_FRAMES; i++)
		if ((uint64_t)ips[i] == pc) {
			first = i;
			break;
		}
	uint32_t flags = TRACE_STACK_LEAF_EXACT;
	uint64_t *frames = (uint64_t *)ips;
	uint32_t nframes;
	if (first < 0) {
		/* No unwind info where it stopped: keep the pc alone. */
		frames[0] = pc;
		nframes = 1;
	} else {
		frames += first;
		nframes = (uint32_t)(n - first);
		if (nframes > max) {
			nframes = max;
			flags |= TRACE_STACK_TRUNCATED;
		}
	}

	uint32_t ring = agent_thread_ring();
	if (ring == AGENT_NO_RING) {
		count_lost();
		return;
	}
	uint32_t id = stack_table_id(&agent_self.stacks, ring, frames, nframes, flags);
	struct tr_sample *s = id == UINT32_MAX ? NULL :
			      transport_reserve(&agent_transport, ring, TR_SAMPLE, sizeof *s);
	if (!s) {
		count_lost();
		return;
	}
	s->time_ns = now;
	s->tid = agent_gettid();
	s->stack_id = id;
	s->weight = weight;
	s->state = 0;
	transport_commit(&agent_transport, ring);
}

static void on_sample(int sig, siginfo_t *si, void *ucontext)
{
	(void)sig;
	int saved_errno = errno;
	if (agent_enabled && agent_transport.header) {
		uint32_t weight = sample_weight(si);
		if (weight)
			record_sample(weight, ucontext);
	}
	errno = saved_errno;
}

int sampler_init(void)
{
	_Static_assert(sizeof(void *) == sizeof(uint64_t), "64-bit only");
	unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_sample;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(AGENT_SIGNAL, &sa, NULL) < 0) {
		strcpy(agent_transport.header->agent_error, "cannot install the SIGPROF handler");
		return -1;
	}
	/* Probe the precise source once; every thread then uses the same one. */
	int fd = agent_transport.header->requested_source == TRANSPORT_SOURCE_TIMER ? -1 :
		 perf_event_open_thread(agent_transport.header->interval_ns);
	if (fd < 0 && agent_transport.header->requested_source == TRANSPORT_SOURCE_PERF) {
		strcpy(agent_transport.header->agent_error, "perf_event_open refused a task-clock event "
					       "(see /proc/sys/kernel/perf_event_paranoid)");
		return -1;
	}
	if (fd >= 0) {
		close(fd);
		agent_transport.header->source = TRANSPORT_SOURCE_PERF;
	} else {
		agent_transport.header->source = TRANSPORT_SOURCE_TIMER;
	}
	return 0;
}
