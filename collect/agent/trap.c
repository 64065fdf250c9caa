/*
 * trap.c - perf's own signal, SIGTRAP, as the perf source's sampling signal
 * where the kernel offers it, and the program's SIGTRAP kept the program's.
 *
 * Why: a perf event that signals through its descriptor (O_ASYNC, F_SETSIG)
 * raises the signal from an irq_work, which the kernel starts with an
 * interrupt of its own; on a virtual machine that second interrupt costs
 * more than the sample (measured here, Linux 6.18 under KVM: one
 * irq_vectors:irq_work_entry per sample, and the mechanism alone 1.07 of a
 * bare run's CPU at 1 kHz). An event opened with attr.sigtrap sends SIGTRAP
 * (si_code TRAP_PERF, si_perf_data our cookie) as task work on the way back
 * to user space: no irq_work (0 of 9049 samples), 1.017 of bare.
 *
 * SIGTRAP is a standard signal that the program may use: crash reporters and
 * in-process debuggers install handlers for it, int3 and kill -TRAP raise it.
 * So it is the sampling signal only while the program leaves it alone:
 *  - TRAP_ACTIVE: at start its disposition was the default and it was not
 *    blocked. The kernel's disposition is the agent's handler. A SIGTRAP
 *    that is not a sample gets the default action (disposition reset, the
 *    same siginfo queued again: the process dies of it as it would have);
 *    a sent one that the program believes it blocked is blocked for real in
 *    the interrupted context and queued again, so it waits as it would have.
 *    sigmask.c keeps SIGTRAP out of the masks the kernel is told.
 *  - TRAP_RETIRED: the program installed a handler for it or ignored it.
 *    Every thread's perf event is opened again, signalling the real-time
 *    signal (sampler_retire_trap), and the program's disposition holds. A
 *    sample's SIGTRAP already on its way to some thread must not reach the
 *    program's handler, so the kernel's disposition is a trampoline that
 *    drops such strays and calls the program's handler, with the program's
 *    own flags and mask (SIG_IGN is handed to the kernel as it is).
 * Queries (sigaction with act NULL, or the old action) see the program's
 * view in both states. Its view is updated with every signal blocked.
 */
#include "agent.h"

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* si_code of a perf event's SIGTRAP (asm-generic/siginfo.h TRAP_PERF; glibc's headers lack it). */
#define TRAP_PERF_CODE 6

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

/* Send si's SIGTRAP again: to this thread when it was sent to a thread (tgkill, raise) or raised by an
 * instruction, else to the process, whose other threads may not block it. */
static void queue_again(const siginfo_t *si)
{
	siginfo_t copy = *si;
	pid_t pid = (pid_t)getpid();
	if (si->si_code == SI_TKILL || si->si_code > 0)
		agent_libc.syscall(SYS_rt_tgsigqueueinfo, pid, (pid_t)agent_libc.syscall(SYS_gettid), SIGTRAP, &copy);
	else
		agent_libc.syscall(SYS_rt_sigqueueinfo, pid, SIGTRAP, &copy);
}

/*
 * A SIGTRAP of the program's the kernel handed to an agent handler, whose
 * disposition (to the program) is handler: wait if the program believes it
 * blocked it (sent ones only: a trap from an instruction is delivered
 * whatever the mask), the default action for SIG_DFL; 1 when done with,
 * 0 when the program's handler is to be called.
 */
static int settle(const siginfo_t *si, void *ucontext, void (*handler)(int))
{
	if (si->si_code <= 0 && (agent_self.program_blocks & SIGMASK_TRAP)) {
		sigaddset(&((ucontext_t *)ucontext)->uc_sigmask, SIGTRAP);
		queue_again(si);
		return 1;
	}
	if (handler == SIG_IGN)
		return 1;
	if (handler != SIG_DFL)
		return 0;
	struct sigaction dfl;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	agent_libc.sigaction(SIGTRAP, &dfl, NULL);
	queue_again(si); /* delivered as the handler returns: the default action, core and all */
	return 1;
}

void trap_program_signal(const siginfo_t *si, void *ucontext)
{
	settle(si, ucontext, SIG_DFL);
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
	if (a.sa_flags & SA_RESETHAND) {
		/* The kernel reset its disposition as it delivered: so is the program's (strays still dropped). */
		struct sigaction dfl;
		memset(&dfl, 0, sizeof dfl);
		dfl.sa_handler = SIG_DFL;
		program_action = dfl;
		install_trampoline(&dfl);
	}
	if (settle(si, ucontext, a.sa_handler))
		return;
	if (a.sa_flags & SA_SIGINFO)
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

int trap_start(void (*handler)(int, siginfo_t *, void *), const sigset_t *handler_mask)
{
	struct sigaction old;
	sigset_t blocked;
	if (agent_libc.sigaction(SIGTRAP, NULL, &old) < 0 || old.sa_handler != SIG_DFL ||
	    agent_libc.sigprocmask(SIG_BLOCK, NULL, &blocked) < 0 || sigismember(&blocked, SIGTRAP))
		return 0;
	int fd = source_perf_open(agent_config.interval_ns, 0, 1);
	struct stat opened;
	if (fd < 0)
		return 0; /* before Linux 5.13, or refused */
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

int trap_sigaction(const struct sigaction *act, struct sigaction *old)
{
	sigset_t mask;
	agent_internal_begin(&mask); /* a handler of this thread cannot interrupt the update */
	while (atomic_exchange_explicit(&program_action_lock, 1, memory_order_acquire))
		;
	struct sigaction before = program_action;
	int rc = 0;
	if (act) {
		int state = trap_state_now();
		if (state == TRAP_ACTIVE && act->sa_handler != SIG_DFL) {
			/* Sources first: from here a sample's SIGTRAP is a stray the trampoline drops. */
			install_trampoline(&before);
			atomic_store(&trap_state, TRAP_RETIRED);
			sampler_retire_trap();
			atomic_store(&agent_transport.header->trap_retired, 1);
			state = TRAP_RETIRED;
		}
		program_action = *act;
		if (state == TRAP_RETIRED)
			install_trampoline(act);
	}
	atomic_store_explicit(&program_action_lock, 0, memory_order_release);
	agent_internal_end(&mask);
	if (old && rc == 0)
		*old = before;
	return rc;
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
