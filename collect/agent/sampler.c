/*
 * sampler.c - what makes a thread take a sample, and the signal handler that
 * takes it.
 *
 * The signal: a real-time signal whose disposition is still the default when
 * the agent starts, highest first (or collect --signal N). SIGPROF and
 * ITIMER_PROF stay the program's; real-time signals queue instead of
 * coalescing, so a burst of samples is not folded into one.
 *
 * The sources, per thread, best first:
 *  - user mode: a perf_event_open software task-clock event (allowed for
 *    one's own threads at perf_event_paranoid 2) that signals its own thread
 *    on every overflow, at the requested rate. It excludes kernel mode: an
 *    overflow there would queue the signal while the thread is still in the
 *    system call, and the signal then interrupts the sleep that follows
 *    (measured: 3897 of 20000 nanosleeps and 8945 of 40000 polls returned
 *    EINTR at a 20 us period), which changes what the program sees. Each of
 *    its samples stands for one period of user-mode time. Its descriptor is
 *    closed as soon as it is set up: a one-page mapping of it (not inherited
 *    across fork) keeps the event alive, and unmapping it ends it.
 *  - kernel mode: a CPU-time timer (timer_create on CLOCK_THREAD_CPUTIME_ID).
 *    The kernel fires it on the scheduler tick and sends its signal as task
 *    work on the way back to user space, so a tick that found the thread in a
 *    system call is delivered at the system call's return, with the ucontext
 *    at the instruction after `syscall`: the sample lands on the user stack
 *    that made the call, and interrupts nothing. Ticks that found the thread
 *    in user mode are already covered by perf and are dropped. Each kept
 *    sample stands for 1 + overruns periods (the time since the previous
 *    tick). Resolution is the tick (250/s here) for kernel time only. The
 *    two sources split the thread's time by its pc: at a system call is the
 *    timer's, elsewhere perf's (see sample_weight). Kernel time outside
 *    system calls (page faults, interrupts) is not attributed; at exit the
 *    thread's measured CPU time shows what the samples missed.
 *  - where the kernel refuses perf events (or a thread cannot map its page),
 *    the CPU-time timer samples both modes: tick resolution, weights 1 +
 *    overruns.
 *
 * A thread's first and last periods: its event starts counting when the
 * thread starts, so the first period is as long as any other (the first
 * sample is not biased), but the last, partial one is never sampled: a
 * thread shorter than the interval may have no sample at all. That is why
 * each thread's own CPU clock goes into its exit record: analyze shows what
 * the samples miss. The timer's first expiry is random within the interval.
 */
#include "agent.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "trace.h"

#define SOURCE_PERF 1u /* agent_self.sources: this thread has a perf event */
#define SOURCE_TIMER 2u /* and a CPU-time timer */
#define PERF_PAGE_BYTES 4096u
#define MAX_SLOTS 65536

/*
 * Every thread's sources, so that sampler_stop_all can end them from any
 * thread. Slots are claimed by their thread; either side takes a resource
 * out with an atomic exchange, so each is released exactly once.
 */
struct sampling_slot {
	_Atomic int used;
	_Atomic int timer_armed;
	void *_Atomic perf_page;
	timer_t timer;
};
static struct sampling_slot slots[MAX_SLOTS];
static _Atomic int slots_high; /* slots[0 .. slots_high) have been used */

/* Tells our CPU-time timers' signals from a timer of the program's. */
static int timer_cookie;

static int claim_slot(void)
{
	for (int i = 0; i < MAX_SLOTS; i++) {
		int expected = 0;
		if (atomic_load_explicit(&slots[i].used, memory_order_relaxed) == 0 &&
		    atomic_compare_exchange_strong(&slots[i].used, &expected, 1)) {
			int high = atomic_load(&slots_high);
			while (high <= i && !atomic_compare_exchange_weak(&slots_high, &high, i + 1))
				;
			return i;
		}
	}
	return -1;
}

static void release_sources(struct sampling_slot *s)
{
	void *page = atomic_exchange(&s->perf_page, NULL);
	if (page)
		munmap(page, PERF_PAGE_BYTES);
	if (atomic_exchange(&s->timer_armed, 0))
		timer_delete(s->timer);
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
	attr.exclude_kernel = 1; /* see the header: kernel-mode overflows would interrupt system calls */
	attr.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/*
 * Close a perf event's descriptor, if it still is ours: every perf event,
 * eventfd and timerfd shares one anonymous inode, so the check also asks
 * for the signal it was told to send (signal_set: it got that far).
 */
static void close_perf(int fd, const struct stat *opened, int signal_set)
{
	if (signal_set && fcntl(fd, F_GETSIG) != agent_config.signal)
		return;
	agent_close_own(fd, opened);
}

/* A task-clock event signalling this thread on every overflow (no event limit, so no REFRESH). */
static void *start_perf(void)
{
	struct stat opened;
	int fd = perf_event_open_thread(agent_config.interval_ns);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &opened) < 0) {
		syscall(SYS_close, fd);
		return NULL;
	}
	struct f_owner_ex owner = { F_OWNER_TID, (pid_t)agent_gettid() };
	void *page = MAP_FAILED;
	int signal_set = fcntl(fd, F_SETFL, O_ASYNC) == 0 && fcntl(fd, F_SETSIG, agent_config.signal) == 0;
	if (signal_set && fcntl(fd, F_SETOWN_EX, &owner) == 0)
		page = mmap(NULL, PERF_PAGE_BYTES, PROT_READ, MAP_SHARED, fd, 0);
	if (page != MAP_FAILED) {
		madvise(page, PERF_PAGE_BYTES, MADV_DONTFORK);
		if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
			munmap(page, PERF_PAGE_BYTES);
			page = MAP_FAILED;
		}
	}
	close_perf(fd, &opened, signal_set); /* the mapping keeps the event alive */
	return page == MAP_FAILED ? NULL : page;
}

/* A pseudo-random first expiry in (0, interval], so short threads are not sampled late on average. */
static long first_expiry_ns(void)
{
	uint64_t x = agent_now_ns() ^ ((uint64_t)agent_gettid() << 32);
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (long)(1 + x % agent_config.interval_ns);
}

static int start_timer(timer_t *timer)
{
	struct sigevent sev;
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = agent_config.signal;
	sev._sigev_un._tid = (pid_t)agent_gettid();
	sev.sigev_value.sival_ptr = &timer_cookie;
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, timer) < 0)
		return -1;
	struct itimerspec its;
	long first = first_expiry_ns();
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

void sampler_thread_start(void)
{
	if (!agent_config.signal || agent_self.sources || agent_signal_taken())
		return;
	int i = claim_slot();
	if (i < 0)
		return;
	struct sampling_slot *s = &slots[i];
	agent_self.slot = i;
	if (agent_config.source == TRANSPORT_SOURCE_PERF) {
		void *page = start_perf();
		if (page) {
			atomic_store(&s->perf_page, page);
			agent_self.sources |= SOURCE_PERF;
		} else {
			atomic_fetch_add(&agent_transport.header->perf_fallback_threads, 1);
		}
	}
	if (start_timer(&s->timer) == 0) {
		atomic_store(&s->timer_armed, 1);
		agent_self.sources |= SOURCE_TIMER;
	}
}

void sampler_thread_stop(void)
{
	if (agent_self.slot < 0)
		return;
	struct sampling_slot *s = &slots[agent_self.slot];
	release_sources(s);
	atomic_store(&s->used, 0);
	agent_self.slot = -1;
	agent_self.sources = 0;
}

void sampler_stop_all(void)
{
	int high = atomic_load(&slots_high);
	for (int i = 0; i < high; i++)
		if (atomic_load(&slots[i].used))
			release_sources(&slots[i]);
}

void sampler_forget_all(void)
{
	/* Not inherited: the pages are MADV_DONTFORK, timers are per process. Unmapping
	 * or deleting by the stale handles could hit the child's own mappings or timers. */
	int high = atomic_load(&slots_high);
	memset(slots, 0, (size_t)high * sizeof *slots);
	atomic_store(&slots_high, 0);
	agent_self.slot = -1;
	agent_self.sources = 0;
}

/* The interrupted pc follows a `syscall` instruction (or is one, about to be restarted). */
static int at_syscall(const ucontext_t *uc)
{
	const uint8_t *pc = (const uint8_t *)uc->uc_mcontext.gregs[REG_RIP];
	uintptr_t in_page = (uintptr_t)pc & 4095;
	return (in_page >= 2 && pc[-2] == 0x0f && pc[-1] == 0x05) || (in_page <= 4094 && pc[0] == 0x0f && pc[1] == 0x05);
}

/*
 * Periods this signal stands for; 0 when it is not ours, or when the other
 * source covers that moment. With both sources the two split time by where
 * the thread was: at a system call (its pc at or just after `syscall`) is the
 * timer's, anywhere else perf's. A perf overflow that shows the pc just
 * after `syscall` was, nearly always, raised in the kernel while interrupts
 * were off on the way out of the call and taken on the first user
 * instruction: counting it as user time too would count that time twice
 * (measured on 1000-futex-wake loops: user time +30%).
 */
static uint32_t sample_weight(const siginfo_t *si, const ucontext_t *uc)
{
	int both = (agent_self.sources & (SOURCE_PERF | SOURCE_TIMER)) == (SOURCE_PERF | SOURCE_TIMER);
	if ((si->si_code == POLL_IN || si->si_code == POLL_HUP) && (agent_self.sources & SOURCE_PERF))
		return both && at_syscall(uc) ? 0 : 1;
	if (si->si_code != SI_TIMER || si->si_value.sival_ptr != &timer_cookie || !(agent_self.sources & SOURCE_TIMER))
		return 0;
	if (both && !at_syscall(uc))
		return 0;
	return 1u + (uint32_t)(si->si_overrun > 0 ? si->si_overrun : 0);
}

static void count_lost(void)
{
	if (agent_self.ring != AGENT_NO_RING)
		atomic_fetch_add(&transport_ring(&agent_transport, agent_self.ring)->lost, 1);
	else
		atomic_fetch_add(&agent_transport.header->lost_no_ring, 1);
}

static void record_sample(uint32_t weight, const ucontext_t *uc, uint64_t now)
{
	if (agent_self.depth) {
		/* Inside an allocation hook (or another ring write): the time is the
		 * profiler's, and the writer it interrupted records it (alloc_hooks.c). */
		atomic_fetch_add_explicit(&agent_self.hook_weight, weight, memory_order_relaxed);
		agent_self.hook_time_ns = now;
		return;
	}
	uint32_t ring = agent_thread_ring();
	if (ring == AGENT_NO_RING) {
		count_lost();
		return;
	}
	uint32_t id = capture_stack(ring, uc, 0);
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

/* One writer per ring: a plain read-modify-write, no locked instruction. */
static void add(_Atomic uint64_t *counter, uint64_t n)
{
	atomic_store_explicit(counter, atomic_load_explicit(counter, memory_order_relaxed) + n, memory_order_relaxed);
}

/*
 * What the program paid for this signal: time in the handler on the vDSO's
 * CLOCK_MONOTONIC (no system call), on the thread's own ring. It is wall
 * time: a call that took longer than any handler does was preempted and is
 * only counted, so collect can extrapolate from the others.
 */
static void account_cost(uint64_t start)
{
	if (agent_self.ring == AGENT_NO_RING)
		return;
	struct transport_ring *r = transport_ring(&agent_transport, agent_self.ring);
	uint64_t spent = agent_now_ns() - start;
	if (spent < TRANSPORT_PREEMPTED_NS) {
		add(&r->handler_ns, spent);
		add(&r->handler_timed, 1);
	}
	add(&r->handler_calls, 1);
}

static void on_signal(int sig, siginfo_t *si, void *ucontext)
{
	(void)sig;
	int saved_errno = errno;
	if (agent_enabled && agent_self.sources) {
		uint64_t start = agent_now_ns();
		agent_self.in_handler = 1;
		uint32_t weight = sample_weight(si, ucontext);
		if (weight)
			record_sample(weight, ucontext, start);
		agent_self.in_handler = 0;
		account_cost(start);
	}
	errno = saved_errno;
}

/* The highest real-time signal the program left at its default and does not block. */
static int free_signal(void)
{
	sigset_t blocked;
	pthread_sigmask(SIG_BLOCK, NULL, &blocked);
	for (int sig = SIGRTMAX; sig >= SIGRTMIN; sig--) {
		struct sigaction old;
		if (agent_libc.sigaction(sig, NULL, &old) == 0 && old.sa_handler == SIG_DFL &&
		    !sigismember(&blocked, sig))
			return sig;
	}
	return 0;
}

int sampler_init(uint32_t requested_source, int requested_signal)
{
	_Static_assert(sizeof(void *) == sizeof(uint64_t), "64-bit only");
	struct transport_header *h = agent_transport.header;
	unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);

	agent_config.signal = requested_signal ? requested_signal : free_signal();
	if (!agent_config.signal) {
		strcpy(h->agent_error, "every real-time signal is in use: choose one with --signal");
		return -1;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	/* Asynchronous signals wait until the handler is done (microseconds): libunwind
	 * then needs no masking of its own (unwinder.c). Faults stay deliverable. */
	sigfillset(&sa.sa_mask);
	static const int faults[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGABRT, SIGSYS };
	for (size_t i = 0; i < sizeof faults / sizeof *faults; i++)
		sigdelset(&sa.sa_mask, faults[i]);
	if (agent_libc.sigaction(agent_config.signal, &sa, NULL) < 0) {
		strcpy(h->agent_error, "cannot install the sampling signal's handler");
		return -1;
	}
	/* Probe the precise source once; every thread then uses the same one. */
	int fd = requested_source == TRANSPORT_SOURCE_TIMER ? -1 : perf_event_open_thread(agent_config.interval_ns);
	if (fd < 0 && requested_source == TRANSPORT_SOURCE_PERF) {
		strcpy(h->agent_error, "perf_event_open refused a task-clock event "
				       "(see /proc/sys/kernel/perf_event_paranoid)");
		return -1;
	}
	struct stat opened;
	if (fd >= 0 && fstat(fd, &opened) == 0)
		close_perf(fd, &opened, 0);
	agent_config.source = fd >= 0 ? TRANSPORT_SOURCE_PERF : TRANSPORT_SOURCE_TIMER;
	h->source = agent_config.source;
	h->signal = (uint32_t)agent_config.signal;
	return 0;
}
