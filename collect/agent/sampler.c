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
	int fd = perf_event_open_thread(agent_shm->interval_ns);
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
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &agent_self.timer) < 0)
		return -1;
	struct itimerspec its;
	its.it_interval.tv_sec = (time_t)(agent_shm->interval_ns / 1000000000u);
	its.it_interval.tv_nsec = (long)(agent_shm->interval_ns % 1000000000u);
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
	if (agent_shm->source == TRANSPORT_SOURCE_PERF && start_perf() == 0)
		return 0;
	return start_timer();
}

void sampler_thread_stop(int in_forked_child)
{
	if (agent_self.timer_kind == TRANSPORT_SOURCE_PERF) {
		/* A forked child's fd is the parent thread's event: only let go of it. */
		if (!in_forked_child)
			ioctl(agent_self.perf_fd, PERF_EVENT_IOC_DISABLE, 0);
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
		uint64_t count = 0, elapsed;
		if (read(agent_self.perf_fd, &count, sizeof count) != sizeof count)
			count = agent_self.last_count + agent_shm->interval_ns;
		elapsed = count - agent_self.last_count;
		agent_self.last_count = count;
		uint64_t weight = (elapsed + agent_shm->interval_ns / 2) / agent_shm->interval_ns;
		ioctl(agent_self.perf_fd, PERF_EVENT_IOC_REFRESH, 1);
		return weight ? (uint32_t)weight : 1;
	}
	if (agent_self.timer_kind == TRANSPORT_SOURCE_TIMER && si->si_code == SI_TIMER)
		return 1u + (uint32_t)(si->si_overrun > 0 ? si->si_overrun : 0);
	return 0;
}

static void count_lost(void)
{
	if (agent_self.ring != AGENT_NO_RING)
		atomic_fetch_add(&transport_rings(agent_shm)[agent_self.ring].lost, 1);
	else
		atomic_fetch_add(&agent_shm->lost_no_ring, 1);
}

static void record_sample(uint32_t weight, const ucontext_t *uc)
{
	uint64_t now = agent_now_ns();
	uint32_t max = agent_shm->max_frames; /* collect keeps it <= 1024 */
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
			      transport_reserve(agent_shm, ring, TR_SAMPLE, sizeof *s);
	if (!s) {
		count_lost();
		return;
	}
	s->time_ns = now;
	s->tid = agent_gettid();
	s->stack_id = id;
	s->weight = weight;
	s->state = 0;
	transport_commit(agent_shm, ring);
}

static void on_sample(int sig, siginfo_t *si, void *ucontext)
{
	(void)sig;
	int saved_errno = errno;
	if (agent_enabled && agent_shm) {
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
		strcpy(agent_shm->agent_error, "cannot install the SIGPROF handler");
		return -1;
	}
	/* Probe the precise source once; every thread then uses the same one. */
	int fd = agent_shm->requested_source == TRANSPORT_SOURCE_TIMER ? -1 :
		 perf_event_open_thread(agent_shm->interval_ns);
	if (fd < 0 && agent_shm->requested_source == TRANSPORT_SOURCE_PERF) {
		strcpy(agent_shm->agent_error, "perf_event_open refused a task-clock event "
					       "(see /proc/sys/kernel/perf_event_paranoid)");
		return -1;
	}
	if (fd >= 0) {
		close(fd);
		agent_shm->source = TRANSPORT_SOURCE_PERF;
	} else {
		agent_shm->source = TRANSPORT_SOURCE_TIMER;
	}
	return 0;
}
