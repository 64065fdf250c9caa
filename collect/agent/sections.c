/*
 * sections.c - the agent's sections on a program's thread: the sampling
 * signal blocked around a record written outside the handler
 * (agent_block_signal), and every signal blocked around the agent's own
 * work that allocates (agent_internal_begin).
 *
 * Both call the kernel directly: the program's sigprocmask and
 * pthread_sigmask are wrapped (signals.c), which keeps the sampling signal
 * out of the program's masks; inside a section (in_agent_section) those
 * wrappers leave it blocked.
 */
#include "agent.h"

#include <signal.h>
#include <sys/syscall.h>

/* agent_internal_begin's depth on this thread: the outermost call blocks, the last end restores. */
static AGENT_TLS __thread int internal_blocked;

void agent_block_signal(sigset_t *old)
{
	sigset_t set;
	sigemptyset(&set);
	if (agent_config.signal)
		sigaddset(&set, agent_config.signal);
	REAL(syscall)(SYS_rt_sigprocmask, SIG_BLOCK, &set, old, _NSIG / 8);
	agent_self.in_agent_section++;
}

/* Undo the block only: program code that ran inside the section (fork handlers of libraries loaded
 * before the agent, a dlopen'd constructor) may have changed the mask of other signals, and that
 * change stays (a child handler's block of SIGUSR1 was undone so); the sampling signal is unblocked
 * as before the section. */
void agent_restore_signal(const sigset_t *old)
{
	agent_self.in_agent_section--;
	if (!agent_config.signal || sigismember(old, agent_config.signal))
		return;
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, agent_config.signal);
	REAL(syscall)(SYS_rt_sigprocmask, SIG_UNBLOCK, &set, NULL, _NSIG / 8);
}

void agent_internal_begin(sigset_t *old)
{
	if (internal_blocked++ == 0) {
		sigset_t set;
		sigfillset(&set); /* glibc's: without its own thread-cancel and setxid signals */
		/* A fault in the window is delivered as it would be, not turned into a kill. */
		sigdelset(&set, SIGSEGV);
		sigdelset(&set, SIGBUS);
		sigdelset(&set, SIGILL);
		sigdelset(&set, SIGFPE);
		sigdelset(&set, SIGTRAP);
		sigdelset(&set, SIGSYS);
		REAL(syscall)(SYS_rt_sigprocmask, SIG_BLOCK, &set, old, _NSIG / 8);
		agent_self.in_agent_section++;
	}
	agent_self.internal++;
}

void agent_internal_end(const sigset_t *old)
{
	agent_self.internal--;
	if (--internal_blocked == 0) {
		agent_self.in_agent_section--;
		REAL(syscall)(SYS_rt_sigprocmask, SIG_SETMASK, old, NULL, _NSIG / 8);
	}
}
