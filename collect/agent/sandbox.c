/*
 * sandbox.c - programs that sandbox themselves with seccomp (bubblewrap's
 * children, Chrome's renderers, a server that drops what it does not need):
 * once a filter is installed, every system call it does not allow kills the
 * process (SECCOMP_RET_KILL_PROCESS) or fails, and a filter stays on the
 * thread that installed it, on the threads and processes it starts, and on
 * every thread with SECCOMP_FILTER_FLAG_TSYNC. The agent must then make no
 * system call those threads did not make bare: a new thread's timer and
 * perf event, a fork child's attach (it opens /proc/COLLECT/fd/N), the end
 * records' clock reads. Under collect such programs were killed by SIGSYS.
 *
 * So the installation is seen before it happens: prctl(PR_SET_SECCOMP) and
 * the seccomp system call through syscall() are wrapped (libseccomp, glibc's
 * callers, bubblewrap use them; a raw `syscall` instruction is not seen).
 * From then the threads the filter covers are sandboxed: threads they start
 * run unsampled (pthread_create without the agent's start), a fork child
 * stays inert, an exec'd program finds no trace to attach to (its
 * environment variable is removed before the filter goes on), and their
 * ends are left unrecorded (no clock read, no timer deleted). With TSYNC the
 * agent's own thread is stopped first (it would be covered too), and the
 * scan for threads the agent did not start stops. What is already set up
 * goes on: the threads sampled before keep their timers (the signal's
 * handler makes no system call). collect says what happened, and where.
 */
#include "lifecycle.h"

#include <linux/seccomp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "sampling.h"
#include "unwinding.h"

static _Atomic int every_thread; /* a filter covers every thread (TSYNC) */
static void sandbox_syscall(long operation, long flags);

int sandbox_covers_me(void)
{
	return agent_self.sandboxed || atomic_load_explicit(&every_thread, memory_order_relaxed);
}

static _Atomic int installed; /* some thread installed one */

int sandbox_any(void)
{
	return atomic_load(&every_thread) || atomic_load(&installed);
}

/* A filter is about to go on (on every thread: tsync); how: what installs it, for collect's message. */
static void sandbox_enter(int tsync, const char *how)
{
	if (!agent_flags->enabled || atomic_load(&every_thread) || (!tsync && agent_self.sandboxed))
		return;
	if (tsync) {
		sigset_t old;
		agent_block_signal(&old);
		background_stop(); /* covered too, it would die of its next system call */
		agent_restore_signal(&old);
		atomic_store(&every_thread, 1);
	}
	agent_self.sandboxed = 1;
	atomic_store(&installed, 1);
	unsetenv(TRANSPORT_ENV); /* a program exec'd from here runs without attaching */
	struct transport_header *h = agent_transport.header;
	if (h && !atomic_exchange(&h->sandboxed, 1))
		strncpy(h->sandbox_text, how, sizeof h->sandbox_text - 1);
}

AGENT_EXPORT int prctl(int option, ...)
{
	va_list ap;
	va_start(ap, option);
	unsigned long a2 = va_arg(ap, unsigned long), a3 = va_arg(ap, unsigned long);
	unsigned long a4 = va_arg(ap, unsigned long), a5 = va_arg(ap, unsigned long);
	va_end(ap);
	if (option == PR_SET_SECCOMP && (a2 == SECCOMP_MODE_FILTER || a2 == SECCOMP_MODE_STRICT))
		sandbox_enter(0, a2 == SECCOMP_MODE_STRICT ? "prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT)"
							   : "prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER)");
	return REAL(prctl)(option, a2, a3, a4, a5);
}

/* The seccomp system call through syscall() (libseccomp's way), and libunwind's probe (unwinder.c). */
AGENT_EXPORT long syscall(long number, ...)
{
	va_list ap;
	va_start(ap, number);
	long a1 = va_arg(ap, long), a2 = va_arg(ap, long), a3 = va_arg(ap, long);
	long a4 = va_arg(ap, long), a5 = va_arg(ap, long), a6 = va_arg(ap, long);
	va_end(ap);
	long result;
	if (unwinder_syscall(number, a1, a2, a3, __builtin_return_address(0), &result))
		return result;
	if (number == SYS_seccomp)
		sandbox_syscall(a1, a2);
	return REAL(syscall)(number, a1, a2, a3, a4, a5, a6);
}

static void sandbox_syscall(long operation, long flags)
{
	if (operation == SECCOMP_SET_MODE_FILTER || operation == SECCOMP_SET_MODE_STRICT)
		sandbox_enter(operation == SECCOMP_SET_MODE_FILTER && (flags & SECCOMP_FILTER_FLAG_TSYNC),
			      operation == SECCOMP_SET_MODE_STRICT ? "seccomp(SECCOMP_SET_MODE_STRICT)"
				      : (flags & SECCOMP_FILTER_FLAG_TSYNC) ? "seccomp(SECCOMP_SET_MODE_FILTER, TSYNC)"
									    : "seccomp(SECCOMP_SET_MODE_FILTER)");
}
