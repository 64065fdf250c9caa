/*
 * trap.c - perf's own signal, SIGTRAP, as the perf source's sampling signal
 * while the program never names SIGTRAP.
 *
 * Why: a perf event that signals through its descriptor (O_ASYNC, F_SETSIG)
 * raises the signal from an irq_work, which the kernel starts with an
 * interrupt of its own; on a virtual machine that second interrupt costs
 * more than the sample (measured on Linux 6.18 under KVM: one
 * irq_vectors:irq_work_entry per sample, and the mechanism alone 1.070 of a
 * bare run's CPU at 1 kHz). An event opened with attr.sigtrap sends SIGTRAP
 * (si_code TRAP_PERF, si_perf_data our cookie) as task work on the way back
 * to user space: no irq_work (0 for 9049 samples), 1.017 of bare. Older
 * kernels have sigtrap events too, but raise them by irq_work (no gain) and,
 * before the change to an asynchronous send, force a blocked SIGTRAP (the
 * process dies): so only kernels from TRAP_MIN_KERNEL on are trusted.
 *
 * SIGTRAP is a standard signal the program may use: crash reporters and
 * in-process debuggers install handlers for it, int3 and kill -TRAP raise it.
 * So the agent holds it only while the program has never named it:
 *  - TRAP_ACTIVE: at start its disposition was the default and it was not
 *    blocked. The kernel's disposition is the agent's handler; a SIGTRAP that
 *    is not a sample gets the default action (disposition reset, the same
 *    siginfo queued again to the thread that took it, so the process dies of
 *    it as it would have). Queries see SIG_DFL.
 *  - TRAP_RETIRED, for good, from the first time the program names it: a
 *    handler or SIG_IGN for it (sigaction, the signal() family), a mask that
 *    blocks it, a set that waits for it (sigmask.c), a thread that starts
 *    with it blocked. Every thread's perf event is opened again signalling
 *    the real-time signal (sampler_retire_trap). A sample's SIGTRAP already
 *    on its way to some thread must not reach the program's handler, so the
 *    kernel's disposition becomes a trampoline that drops such strays and
 *    calls the program's handler with the program's own flags and mask
 *    (SIG_IGN goes to the kernel as it is; sigset() goes to libc as it is).
 * The program's view of the disposition is updated with every signal
 * blocked and under a lock that a fork child resets.
 */
#include "agent.h"

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

/* si_code of a perf event's SIGTRAP (asm-generic/siginfo.h TRAP_PERF; glibc's headers lack it). */
#define TRAP_PERF_CODE 6
/* Kernels from here on are trusted to send sigtrap events' SIGTRAP by task work and never to force a
 * blocked one. Checked on 6.18 only; both changes are from 2022-2024 as far as known, so 6.12 (the
 * long-term release after them) is the floor, and older kernels keep the real-time signal. */
#define TRAP_MIN_KERNEL 612

int trap_cookie;
static _Atomic int trap_state; /* TRAP_UNUSED, TRAP_ACTIVE, TRAP_RETIRED */
/* The program's disposition of SIGTRAP, as it believes it is. */
static struct sigaction program_action;
static _Atomic int program_action_lock;

int trap_state_now(void)
{
	return atomic_load_explicit(&trap_state, memory_order_relaxed);
}

int trap_is_sample(const siginfo_t *si)
{
	if (si->si_signo != SIGTRAP || si->si_code != TRAP_PERF_CODE)
		return 0;
	/* The kernel's _perf._data starts its union where glibc's siginfo_t has si_addr_lsb (and padding). */
	uint64_t data;
	memcpy(&data, &si->si_addr_lsb, sizeof data);
	return data == (uint64_t)(uintptr_t)&trap_cookie;
}

/* The default action for a SIGTRAP an agent handler took: reset, and si queued again to this thread
 * (the one the kernel chose), delivered as the handler returns; tgkill if the kernel refuses that. */
static void default_action(const siginfo_t *si)
{
	struct sigaction dfl;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	agent_libc.sigaction(SIGTRAP, &dfl, NULL);
	siginfo_t copy = *si;
	pid_t pid = (pid_t)getpid(), tid = (pid_t)agent_libc.syscall(SYS_gettid);
	if (agent_libc.syscall(SYS_rt_tgsigqueueinfo, pid, tid, SIGTRAP, &copy) != 0)
		agent_libc.syscall(SYS_tgkill, pid, tid, SIGTRAP);
}

void trap_program_signal(const siginfo_t *si)
{
	default_action(si);
}

static void lock(sigset_t *mask)
{
	agent_internal_begin(mask); /* a handler of this thread cannot interrupt the holder */
	while (atomic_exchange_explicit(&program_action_lock, 1, memory_order_acquire))
		;
}

static void unlock(const sigset_t *mask)
{
	atomic_store_explicit(&program_action_lock, 0, memory_order_release);
	agent_internal_end(mask);
}

void trap_after_fork(void)
{
	atomic_store(&program_action_lock, 0);
}

static void install_trampoline(const struct sigaction *program);

/* TRAP_RETIRED's kernel disposition while the program has a handler (or SIG_DFL) for SIGTRAP. */
static void trampoline(int sig, siginfo_t *si, void *ucontext)
{
	struct sigaction a = program_action;
	if (trap_is_sample(si)) {
		if (a.sa_flags & SA_RESETHAND)
			install_trampoline(&a); /* the kernel reset it for a signal the program never saw */
		return;
	}
	if (a.sa_flags & SA_RESETHAND && a.sa_handler != SIG_DFL) {
		/* The kernel reset its disposition as it delivered: so is the program's (strays still dropped). */
		struct sigaction dfl;
		memset(&dfl, 0, sizeof dfl);
		dfl.sa_handler = SIG_DFL;
		program_action = dfl;
		install_trampoline(&dfl);
	}
	if (a.sa_handler == SIG_DFL)
		default_action(si);
	else if (a.sa_handler == SIG_IGN)
		return;
	else if (a.sa_flags & SA_SIGINFO)
		a.sa_sigaction(sig, si, ucontext);
	else
		a.sa_handler(sig);
}

static void install_trampoline(const struct sigaction *program)
{
	struct sigaction k = *program;
	if (k.sa_handler == SIG_IGN) {
		agent_libc.sigaction(SIGTRAP, &k, NULL);
		return;
	}
	k.sa_sigaction = trampoline;
	k.sa_flags |= SA_SIGINFO;
	if (program->sa_handler == SIG_DFL)
		k.sa_flags &= ~SA_RESETHAND;
	agent_libc.sigaction(SIGTRAP, &k, NULL);
}

/* Whether the running kernel is at least TRAP_MIN_KERNEL (major * 100 + minor). */
static int kernel_new_enough(void)
{
	struct utsname u;
	if (uname(&u) < 0)
		return 0;
	const char *p = u.release;
	unsigned major = 0, minor = 0;
	while (*p >= '0' && *p <= '9')
		major = major * 10 + (unsigned)(*p++ - '0');
	if (*p++ != '.')
		return 0;
	while (*p >= '0' && *p <= '9')
		minor = minor * 10 + (unsigned)(*p++ - '0');
	return major * 100 + minor >= TRAP_MIN_KERNEL;
}

int trap_start(void (*handler)(int, siginfo_t *, void *), const sigset_t *handler_mask)
{
	struct sigaction old;
	sigset_t blocked;
	if (!kernel_new_enough() || agent_libc.sigaction(SIGTRAP, NULL, &old) < 0 || old.sa_handler != SIG_DFL ||
	    agent_libc.sigprocmask(SIG_BLOCK, NULL, &blocked) < 0 || sigismember(&blocked, SIGTRAP))
		return 0;
	int fd = source_perf_open(agent_config.interval_ns, 0, 1);
	struct stat opened;
	if (fd < 0)
		return 0;
	if (fstat(fd, &opened) == 0)
		source_perf_close(fd, &opened, 0);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sa.sa_mask = *handler_mask;
	if (agent_libc.sigaction(SIGTRAP, &sa, NULL) < 0)
		return 0;
	memset(&program_action, 0, sizeof program_action);
	program_action.sa_handler = SIG_DFL;
	atomic_store(&trap_state, TRAP_ACTIVE);
	return 1;
}

/* The retire itself; the lock held. */
static void retire_locked(void)
{
	if (trap_state_now() != TRAP_ACTIVE)
		return;
	/* The trampoline first: from here a sample's SIGTRAP is a stray it drops. */
	install_trampoline(&program_action);
	atomic_store(&trap_state, TRAP_RETIRED);
	sampler_retire_trap();
	atomic_store(&agent_transport.header->trap_retired, 1);
}

void trap_retire(void)
{
	sigset_t mask;
	lock(&mask);
	retire_locked();
	unlock(&mask);
}

void trap_sync(void)
{
	sigset_t mask;
	lock(&mask);
	struct sigaction k;
	if (agent_libc.sigaction(SIGTRAP, NULL, &k) == 0 && k.sa_sigaction != trampoline)
		program_action = k;
	unlock(&mask);
}

int trap_sigaction(const struct sigaction *act, struct sigaction *old)
{
	sigset_t mask;
	lock(&mask);
	struct sigaction before = program_action;
	if (act && !(trap_state_now() == TRAP_ACTIVE && act->sa_handler == SIG_DFL)) {
		retire_locked();
		program_action = *act;
		install_trampoline(act);
	}
	unlock(&mask);
	if (old)
		*old = before;
	return 0;
}

/* The program's disposition for SIGTRAP from the signal() family (glibc's flags for each). */
int trap_signal(void (*handler)(int), int flags, void (**old)(int))
{
	struct sigaction act, before;
	memset(&act, 0, sizeof act);
	act.sa_handler = handler;
	act.sa_flags = flags;
	if (!(flags & SA_NODEFER))
		sigaddset(&act.sa_mask, SIGTRAP);
	int rc = trap_sigaction(&act, &before);
	*old = before.sa_handler;
	return rc;
}
