/*
 * interpose.c - the libc functions the agent wraps, other than those it
 * wraps for libunwind's sake (unwinder.c): pthread_create and clone, so every thread is sampled from its start; the
 * loader's dlopen/dlmopen/dlclose, so the module map follows them and no
 * thread unwinds while the loader's lock is held; and sigaction and the
 * signal() family, so the program never sees the agent's signal and the
 * agent notices when the program takes it.
 *
 * The sampling signal is a real-time signal nobody used when the agent
 * started (sampler.c). To the program it still looks untouched: asking for
 * its disposition gives SIG_DFL. If the program installs a handler for it
 * (or ignores it), that is the program's right: the agent stops every
 * thread's sampling first, so the program's handler never receives a
 * sample, then lets the call through, and collect says so.
 */
#include "agent.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "trace.h"

struct agent_real agent_real;

typedef void (*handler_fn)(int);

static _Atomic int signal_given_up;

void interpose_init(void)
{
#define LOOK_UP(name) (void)REAL(name);
	AGENT_INTERPOSED(LOOK_UP, AGENT_REAL_NONE)
#undef LOOK_UP
}

/* ---- threads ---- */

struct thread_start {
	void *(*start)(void *);
	void *arg;
	int program_blocks; /* the creator's view of the sampling signal (sigmask.c) */
};

static void thread_cleanup(void *unused)
{
	(void)unused;
	sigset_t old;
	agent_block_signal(&old);
	agent_thread_end();
	agent_restore_signal(&old);
}

static void *thread_trampoline(void *p)
{
	struct thread_start ts = *(struct thread_start *)p;
	void *ret;
	sigset_t old;
	agent_internal_begin(&old); /* this thread's first free: glibc sets up its cache, under a lock */
	free(p);
	agent_internal_end(&old);
	agent_self.program_blocks = ts.program_blocks;
	if (agent_config.signal && !agent_signal_taken()) {
		/* Made inside an agent section (a thread pool a dlopen'd constructor starts): the kernel gave
		 * it its creator's mask, the sampling signal blocked for that section only. Outside sections
		 * the kernel never blocks it (sigmask.c), whatever the program asked. */
		sigset_t ours;
		sigemptyset(&ours);
		sigaddset(&ours, agent_config.signal);
		REAL(syscall)(SYS_rt_sigprocmask, SIG_UNBLOCK, &ours, NULL, _NSIG / 8);
	}
	if (agent_flags->enabled && agent_config.pid == getpid()) {
		sigset_t during;
		agent_block_signal(&during);
		agent_thread_begin();
		agent_restore_signal(&during);
	}
	pthread_cleanup_push(thread_cleanup, NULL);
	ret = ts.start(ts.arg);
	pthread_cleanup_pop(1);
	return ret;
}

AGENT_EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *), void *arg)
{
	if (!agent_flags->enabled)
		return REAL(pthread_create)(thread, attr, start, arg);
	sigset_t old;
	agent_internal_begin(&old);
	struct thread_start *ts = malloc(sizeof *ts);
	agent_internal_end(&old);
	if (!ts)
		return EAGAIN;
	ts->start = start;
	ts->arg = arg;
	ts->program_blocks = sigmask_program_blocks();
	int rc = REAL(pthread_create)(thread, attr, thread_trampoline, ts);
	if (rc) {
		agent_internal_begin(&old);
		free(ts);
		agent_internal_end(&old);
	}
	return rc;
}

/*
 * A thread made by clone() itself (not pthread_create, which glibc starts
 * with its internal clone): adopted by its creator at once, before it can
 * run long unsampled. Without CLONE_SETTLS it shares the creator's TLS and
 * is sampled through foreign.c; a raw system call clone is found by the
 * agent's thread's scan instead (wall.c), within 100 ms.
 */
AGENT_EXPORT int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	pid_t *parent_tid = va_arg(ap, pid_t *);
	void *tls = va_arg(ap, void *);
	pid_t *child_tid = va_arg(ap, pid_t *);
	va_end(ap);
	int tid = REAL(clone)(fn, stack, flags, arg, parent_tid, tls, child_tid);
	if (tid > 0 && (flags & CLONE_THREAD) && agent_flags->enabled && agent_config.signal && agent_config.pid == getpid()) {
		int saved_errno = errno;
		sigset_t old;
		agent_block_signal(&old);
		sampler_adopt((uint32_t)tid);
		agent_restore_signal(&old);
		errno = saved_errno;
	}
	return tid;
}

/*
 * A name set later is recorded at once when a thread names itself (the
 * trace then has it even if the process is killed); a name one thread gives
 * another is read back from the kernel at that thread's end or at the
 * process's end (threads.c).
 */
AGENT_EXPORT int pthread_setname_np(pthread_t thread, const char *name)
{
	int rc = REAL(pthread_setname_np)(thread, name);
	if (rc == 0 && agent_flags->enabled && pthread_equal(thread, pthread_self()))
		agent_thread_record_for(agent_gettid(), name, TRACE_THREAD_NAME);
	return rc;
}

/* ---- the loader ---- */

/*
 * The loader lock: a thread interrupted inside dlopen/dlclose must not unwind
 * (libunwind would walk a half-updated object list, and another thread's
 * handler could wait on the lock it holds). So the sampling signal is blocked
 * for the whole call; the sample is delivered right after.
 */
AGENT_EXPORT void *dlopen(const char *file, int mode)
{
	sigset_t old;
	agent_block_signal(&old);
	void *handle = REAL(dlopen)(file, mode);
	if (handle)
		modules_rescan();
	agent_restore_signal(&old);
	return handle;
}

AGENT_EXPORT void *dlmopen(Lmid_t namespace, const char *file, int mode)
{
	sigset_t old;
	agent_block_signal(&old);
	void *handle = REAL(dlmopen)(namespace, file, mode);
	if (handle)
		modules_rescan();
	agent_restore_signal(&old);
	return handle;
}

AGENT_EXPORT int dlclose(void *handle)
{
	sigset_t old;
	agent_block_signal(&old);
	int rc = REAL(dlclose)(handle);
	modules_rescan();
	agent_restore_signal(&old);
	return rc;
}

/* ---- the sampling signal ---- */

int agent_signal_taken(void)
{
	return atomic_load(&signal_given_up);
}

static int is_sampling_signal(int sig)
{
	return agent_flags->enabled && sig == agent_config.signal && !atomic_load(&signal_given_up);
}

/* The program wants the signal for itself: stop sampling, then it is the program's. */
static void give_up_signal(int sig)
{
	if (atomic_exchange(&signal_given_up, 1))
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
