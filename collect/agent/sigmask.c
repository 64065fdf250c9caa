/*
 * sigmask.c - the program's signal masks and signal waits, kept clear of
 * the sampling signal.
 *
 * Servers block every signal in their worker threads (and wait for signals
 * in one thread with sigwaitinfo or a signalfd); a thread that blocked the
 * sampling signal would never be sampled. So when the program blocks
 * signals (sigprocmask, pthread_sigmask), the sampling signal is left out of
 * what the kernel is told, and the program is shown the mask it asked for:
 * the old mask it gets back holds the sampling signal exactly when it
 * believes it blocked it (agent_self.program_blocks, inherited by the
 * threads it creates). The sampling handler touches nothing of the
 * program's, so receiving it inside a section the program protected from
 * its own handlers changes nothing for the program.
 *
 * Two kinds of caller keep the real behaviour:
 *  - libunwind, which blocks every signal around its locked sections: a
 *    sampling handler inside one of them would wait for a lock its own
 *    thread holds (the deadlock an earlier attempt at this ran into). Its
 *    calls are told by their return address (agent_called_from_unwinder);
 *    inside the handler, where everything is blocked already, they are
 *    skipped (two system calls per unwind saved; see unwinder.c).
 *  - the agent's own sections (agent_block_signal: records written outside
 *    the handler): a program's handler running inside one must not unblock
 *    the sampling signal there, or a sample would be written into a record
 *    half done.
 *
 * A set of signals to wait for (sigwait, sigwaitinfo, sigtimedwait,
 * signalfd) never holds the sampling signal either: the program must not
 * receive one of the profiler's signals as if it were its own.
 *
 * While the perf events signal by SIGTRAP (trap.c), SIGTRAP is kept out the
 * same way, and a SIGTRAP of the program's own that arrives while it
 * believes it blocked is blocked for real then (trap.c). A program that
 * waits for SIGTRAP with sigwait then gets its default action instead.
 */
#include "agent.h"

#include <errno.h>
#include <string.h>
#include <sys/signalfd.h>

static int (*real_signalfd)(int, const sigset_t *, int);
static int (*real_sigwait)(const sigset_t *, int *);

int sigmask_program_blocks(void)
{
	return agent_self.program_blocks;
}

/*
 * The agent's signals whose blocking the program's view tracks, as SIGMASK_*
 * bits with their numbers; the first *strip of them the kernel is never told
 * to block. SIGTRAP once the program took it back (TRAP_RETIRED) is the
 * kernel's again, but its view is still kept: a thread that blocked it
 * before holds it unblocked in the kernel until it changes its mask (trap.c).
 */
static int ours(int signals[2], int bits[2], int *strip)
{
	int n = 0;
	if (agent_config.signal && !agent_signal_taken()) {
		signals[n] = agent_config.signal;
		bits[n++] = SIGMASK_SAMPLING;
	}
	int trap = trap_state_now();
	*strip = n + (trap == TRAP_ACTIVE);
	if (trap != TRAP_UNUSED) {
		signals[n] = SIGTRAP;
		bits[n++] = SIGMASK_TRAP;
	}
	return n;
}

/* The program's view of its blocked signals of ours after a change (SIGMASK_* bits). */
static int view_after(int how, const sigset_t *set, int before, int n, const int signals[2], const int bits[2])
{
	int after = before;
	for (int i = 0; i < n; i++) {
		int member = sigismember(set, signals[i]) == 1;
		if ((how == SIG_SETMASK || how == SIG_BLOCK) && member)
			after |= bits[i];
		else if (how == SIG_SETMASK || (how == SIG_UNBLOCK && member))
			after &= ~bits[i];
	}
	return after;
}

/* The mask change to ask the kernel for: set, or *copy without our signals (with them, inside an agent section). */
static const sigset_t *for_kernel(int how, const sigset_t *set, sigset_t *copy, int n, const int signals[2])
{
	int keep_blocked = agent_self.in_agent_section > 0;
	*copy = *set;
	for (int i = 0; i < n; i++) {
		if (how == SIG_UNBLOCK && keep_blocked)
			sigdelset(copy, signals[i]); /* stays blocked until the section ends */
		else if (how == SIG_SETMASK && keep_blocked)
			sigaddset(copy, signals[i]);
		else if (how != SIG_UNBLOCK)
			sigdelset(copy, signals[i]);
	}
	return copy;
}

static int filtered(int how, const sigset_t *set, sigset_t *old, int (*real)(int, const sigset_t *, sigset_t *))
{
	int signals[2], bits[2], strip = 0, n = agent_flags->enabled ? ours(signals, bits, &strip) : 0;
	if (!n || (how != SIG_BLOCK && how != SIG_UNBLOCK && how != SIG_SETMASK))
		return real(how, set, old);
	int before = agent_self.program_blocks, after = set ? view_after(how, set, before, n, signals, bits) : before;
	sigset_t copy;
	const sigset_t *use = set ? for_kernel(how, set, &copy, strip, signals) : NULL;
	/* What it unblocks is unblocked in its view before the call: a SIGTRAP of its own that waited
	 * (trap.c) is delivered as the call returns, and must not be made to wait again. */
	agent_self.program_blocks = before & after;
	int rc = real(how, use, old);
	agent_self.program_blocks = rc == 0 ? after : before;
	if (rc != 0)
		return rc;
	if (old)
		for (int i = 0; i < n; i++) {
			if (before & bits[i])
				sigaddset(old, signals[i]);
			else
				sigdelset(old, signals[i]);
		}
	return rc;
}

AGENT_EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	if (!agent_libc.sigprocmask)
		agent_resolve_libc();
	if (agent_called_from_unwinder(__builtin_return_address(0))) {
		if (!agent_self.in_handler)
			return agent_libc.sigprocmask(how, set, old);
		if (old)
			sigfillset(old); /* only ever handed back to a call skipped the same way */
		return 0;
	}
	return filtered(how, set, old, agent_libc.sigprocmask);
}

AGENT_EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	if (!agent_libc.pthread_sigmask)
		agent_resolve_libc();
	if (agent_called_from_unwinder(__builtin_return_address(0)))
		return agent_libc.pthread_sigmask(how, set, old);
	return filtered(how, set, old, agent_libc.pthread_sigmask);
}

const sigset_t *sigmask_without_ours(const sigset_t *set, sigset_t *copy)
{
	int signals[2], bits[2], strip = 0;
	if (!set || !agent_flags->enabled || (ours(signals, bits, &strip), !strip))
		return set;
	*copy = *set;
	for (int i = 0; i < strip; i++)
		sigdelset(copy, signals[i]);
	return copy;
}

AGENT_EXPORT int signalfd(int fd, const sigset_t *mask, int flags)
{
	if (!real_signalfd)
		real_signalfd = (__typeof__(real_signalfd))dlsym(RTLD_NEXT, "signalfd");
	sigset_t copy;
	return real_signalfd(fd, sigmask_without_ours(mask, &copy), flags);
}

AGENT_EXPORT int sigwait(const sigset_t *set, int *sig)
{
	if (!real_sigwait)
		real_sigwait = (__typeof__(real_sigwait))dlsym(RTLD_NEXT, "sigwait");
	sigset_t copy;
	return real_sigwait(sigmask_without_ours(set, &copy), sig);
}
