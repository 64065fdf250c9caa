/*
 * signals.c - the program's signals, kept clear of the sampling signal: its
 * disposition (sigaction and the signal() family), the masks (sigprocmask,
 * pthread_sigmask) and the waits (sigwait, signalfd; blocking.c's
 * sigtimedwait and sigwaitinfo).
 *
 * The sampling signal is a real-time signal nobody used when the agent
 * started (sampler.c). To the program it still looks untouched: asking for
 * its disposition gives SIG_DFL. If the program installs a handler for it
 * (or ignores it), that is the program's right: the agent stops every
 * thread's sampling first, so the program's handler never receives a
 * sample, then lets the call through, and collect says so.
 *
 * Servers block every signal in their worker threads (and wait for signals
 * in one thread with sigwaitinfo or a signalfd); a thread that blocked the
 * sampling signal would never be sampled. So when the program blocks
 * signals (sigprocmask, pthread_sigmask), the sampling signal is left out of
 * what the kernel is told, and the program is shown the mask it asked for:
 * the old mask it gets back holds the sampling signal exactly when it
 * believes it blocked it (program_blocks, inherited by the
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
 */
#include "signals.h"

#include <errno.h>
#include <string.h>
#include <sys/signalfd.h>

#include "sampling.h"

/* Whether the program believes this thread blocks the sampling signal (a thread it creates inherits it). */
static AGENT_TLS __thread int program_blocks;

int sigmask_program_blocks(void)
{
	return program_blocks;
}

void sigmask_inherit(int creator_blocks)
{
	program_blocks = creator_blocks;
}

/* The mask change to ask the kernel for, into *copy; the program's view after it, into *after. */
static const sigset_t *for_kernel(int how, const sigset_t *set, sigset_t *copy, int *after)
{
	int sig = agent_config.signal, member = sigismember(set, sig) == 1;
	*after = how == SIG_SETMASK ? member : how == SIG_BLOCK ? (member || program_blocks)
						: (!member && program_blocks);
	int keep_blocked = agent_self.in_agent_section > 0;
	if (how == SIG_UNBLOCK && (!member || !keep_blocked))
		return set;
	if (how == SIG_BLOCK && !member)
		return set;
	*copy = *set;
	if (how == SIG_SETMASK && keep_blocked)
		sigaddset(copy, sig);
	else
		sigdelset(copy, sig);
	return copy;
}

static int filtered(int how, const sigset_t *set, sigset_t *old, int (*real)(int, const sigset_t *, sigset_t *))
{
	int sig = agent_config.signal;
	if (!agent_flags->enabled || !sig || agent_signal_taken() || (how != SIG_BLOCK && how != SIG_UNBLOCK && how != SIG_SETMASK))
		return real(how, set, old);
	int before = program_blocks, after = before;
	sigset_t copy;
	const sigset_t *use = set ? for_kernel(how, set, &copy, &after) : NULL;
	int rc = real(how, use, old);
	if (rc != 0)
		return rc;
	program_blocks = after;
	if (old) {
		if (before)
			sigaddset(old, sig);
		else
			sigdelset(old, sig);
	}
	return rc;
}

AGENT_EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	if (agent_called_from_unwinder(__builtin_return_address(0))) {
		if (!agent_self.in_handler)
			return REAL(sigprocmask)(how, set, old);
		if (old)
			sigfillset(old); /* only ever handed back to a call skipped the same way */
		return 0;
	}
	return filtered(how, set, old, REAL(sigprocmask));
}

AGENT_EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	if (agent_called_from_unwinder(__builtin_return_address(0)))
		return REAL(pthread_sigmask)(how, set, old);
	return filtered(how, set, old, REAL(pthread_sigmask));
}

const sigset_t *sigmask_without_ours(const sigset_t *set, sigset_t *copy)
{
	if (!set || !agent_flags->enabled || !agent_config.signal || agent_signal_taken() ||
	    sigismember(set, agent_config.signal) != 1)
		return set;
	*copy = *set;
	sigdelset(copy, agent_config.signal);
	return copy;
}

AGENT_EXPORT int signalfd(int fd, const sigset_t *mask, int flags)
{
	sigset_t copy;
	return REAL(signalfd)(fd, sigmask_without_ours(mask, &copy), flags);
}

AGENT_EXPORT int sigwait(const sigset_t *set, int *sig)
{
	sigset_t copy;
	return REAL(sigwait)(sigmask_without_ours(set, &copy), sig);
}

/* ---- the disposition ---- */

typedef void (*handler_fn)(int);

static int is_sampling_signal(int sig)
{
	return agent_flags->enabled && sig == agent_config.signal && !agent_signal_taken();
}

/* The program wants the signal for itself: stop sampling, then it is the program's. */
static void give_up_signal(int sig)
{
	if (!agent_signal_give_up())
		return;
	sampler_stop_all();
	atomic_store(&agent_transport.header->signal_taken, (uint32_t)sig);
}

AGENT_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (!is_sampling_signal(sig))
		return REAL(sigaction)(sig, act, old);
	struct sigaction untouched;
	memset(&untouched, 0, sizeof untouched);
	untouched.sa_handler = SIG_DFL;
	int rc = 0;
	if (act && act->sa_handler != SIG_DFL) {
		give_up_signal(sig);
		rc = REAL(sigaction)(sig, act, NULL);
	}
	if (old && rc == 0)
		*old = untouched;
	return rc;
}

/* signal(), bsd_signal(), sysv_signal(), sigset(): glibc does not route them through sigaction's PLT entry. */
#define SIGNAL_WRAPPER(name)                                              \
	AGENT_EXPORT handler_fn name(int sig, handler_fn handler)         \
	{                                                                 \
		if (!is_sampling_signal(sig))                             \
			return REAL(name)(sig, handler);                  \
		if (handler != SIG_DFL) {                                 \
			give_up_signal(sig);                              \
			if (REAL(name)(sig, handler) == SIG_ERR)          \
				return SIG_ERR;                           \
		}                                                         \
		return SIG_DFL;                                           \
	}
SIGNAL_WRAPPER(signal)
SIGNAL_WRAPPER(bsd_signal)
SIGNAL_WRAPPER(sysv_signal)
SIGNAL_WRAPPER(sigset)
