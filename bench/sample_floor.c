/*
 * sample_floor - what the kernel charges for collect's sampling mechanism
 * alone, for bench/cpu-overhead: an LD_PRELOAD library that arms, for the
 * main thread, the same two sources the agent arms per thread (sampler.c: a
 * task-clock perf event, user mode only, signalling its own thread on every
 * overflow; and a CPU-time timer at the same interval) with a real-time
 * signal whose handler returns at once. No unwinding, no records, no
 * collect process: the difference between this run and the bare run is the
 * hrtimer, the signal's delivery and its return, which no change in ipscope
 * can remove; the difference between collect and this run is ipscope's own.
 * The interval comes from SAMPLE_FLOOR_NS (default 1 ms). The workloads of
 * cpu-overhead are single-threaded, so the main thread is enough.
 */
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
}

__attribute__((constructor)) static void sample_floor_start(void)
{
	const char *env = getenv("SAMPLE_FLOOR_NS");
	unsigned long period = env ? strtoul(env, NULL, 10) : 1000000ul;
	int sig = SIGRTMAX;
	pid_t tid = (pid_t)syscall(SYS_gettid);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&sa.sa_mask); /* as the agent's handler */
	if (!period || sigaction(sig, &sa, NULL) < 0)
		return;

	struct perf_event_attr attr;
	memset(&attr, 0, sizeof attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.size = sizeof attr;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	attr.sample_period = period;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	int fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0) {
		struct f_owner_ex owner = { F_OWNER_TID, tid };
		if (fcntl(fd, F_SETFL, O_ASYNC) == 0 && fcntl(fd, F_SETSIG, sig) == 0 &&
		    fcntl(fd, F_SETOWN_EX, &owner) == 0 &&
		    mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0) != MAP_FAILED)
			ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
		close(fd); /* the mapping keeps the event alive, as in the agent */
	}

	struct sigevent sev;
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = sig;
	sev._sigev_un._tid = tid;
	timer_t timer;
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &timer) == 0) {
		struct itimerspec its;
		its.it_interval.tv_sec = its.it_value.tv_sec = (time_t)(period / 1000000000ul);
		its.it_interval.tv_nsec = its.it_value.tv_nsec = (long)(period % 1000000000ul);
		timer_settime(timer, 0, &its, NULL);
	}
}
