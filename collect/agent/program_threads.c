/*
 * program_threads.c - the program's threads: pthread_create and clone
 * wrapped, so every thread is sampled from its start and its end is
 * recorded (lifecycle_thread_begin, lifecycle_thread_end, run on the thread
 * itself), and pthread_setname_np, so a name a thread gives itself is
 * recorded at once.
 */
#include "lifecycle.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sampling.h"
#include "signals.h"
#include "trace.h"
#include "unwinding.h"

struct thread_start {
	void *(*start)(void *);
	void *arg;
	int program_blocks; /* the creator's view of the sampling signal (signals.c) */
	size_t stack_size; /* its attribute's, or the default: capture_stack_size */
	_Atomic int used; /* a slot of starts[] taken */
};

/*
 * The start's description goes from the creator to the new thread through a
 * slot of a static array, not malloc: freeing it on the new thread was that
 * thread's first allocation call, which gives it a malloc arena of its own
 * (64 MiB of address space) where the program's thread may never allocate.
 * malloc serves only when every slot is taken.
 */
static struct thread_start starts[256];

static struct thread_start *start_take(void)
{
	for (size_t i = 0; i < sizeof starts / sizeof *starts; i++) {
		int expected = 0;
		if (!atomic_load_explicit(&starts[i].used, memory_order_relaxed) &&
		    atomic_compare_exchange_strong(&starts[i].used, &expected, 1))
			return &starts[i];
	}
	sigset_t old;
	agent_internal_begin(&old);
	struct thread_start *ts = calloc(1, sizeof *ts);
	agent_internal_end(&old);
	return ts;
}

static void start_give_back(struct thread_start *ts)
{
	if (ts >= starts && ts < starts + sizeof starts / sizeof *starts) {
		atomic_store(&ts->used, 0);
		return;
	}
	sigset_t old;
	agent_internal_begin(&old); /* this thread's first free: glibc sets up its cache, under a lock */
	free(ts);
	agent_internal_end(&old);
}

/* The stack size a thread made with attr gets (attr NULL: the default), without allocating here. */
static size_t stack_size_of(const pthread_attr_t *attr)
{
	size_t size = 0;
	pthread_attr_t fallback;
	if (attr)
		return pthread_attr_getstacksize(attr, &size) == 0 ? size : 0;
	sigset_t old;
	agent_internal_begin(&old); /* the default attribute's copy may allocate (an affinity mask) */
	if (pthread_getattr_default_np(&fallback) == 0) {
		if (pthread_attr_getstacksize(&fallback, &size) != 0)
			size = 0;
		pthread_attr_destroy(&fallback);
	}
	agent_internal_end(&old);
	return size;
}

static void thread_cleanup(void *unused)
{
	(void)unused;
	sigset_t old;
	agent_block_signal(&old);
	lifecycle_thread_end();
	agent_restore_signal(&old);
}

static void *thread_trampoline(void *p)
{
	struct thread_start ts = *(struct thread_start *)p;
	void *ret;
	start_give_back(p);
	capture_stack_size(ts.stack_size);
	sigmask_inherit(ts.program_blocks);
	if (agent_config.signal && !agent_signal_taken()) {
		/* Made inside an agent section (a thread pool a dlopen'd constructor starts): the kernel gave
		 * it its creator's mask, the sampling signal blocked for that section only. Outside sections
		 * the kernel never blocks it (signals.c), whatever the program asked. */
		sigset_t ours;
		sigemptyset(&ours);
		sigaddset(&ours, agent_config.signal);
		REAL(syscall)(SYS_rt_sigprocmask, SIG_UNBLOCK, &ours, NULL, _NSIG / 8);
	}
	if (agent_flags->enabled && agent_config.pid == getpid()) {
		sigset_t during;
		agent_block_signal(&during);
		sampler_thread_routine((uint64_t)(uintptr_t)ts.start);
		lifecycle_thread_begin();
		agent_restore_signal(&during);
	}
	pthread_cleanup_push(thread_cleanup, NULL);
	ret = ts.start(ts.arg);
	pthread_cleanup_pop(1);
	return ret;
}

AGENT_EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *), void *arg)
{
	if (!agent_flags->enabled || sandbox_covers_me()) /* a seccomp filter covers the new thread too */
		return REAL(pthread_create)(thread, attr, start, arg);
	struct thread_start *ts = start_take();
	if (!ts)
		return EAGAIN;
	ts->start = start;
	ts->arg = arg;
	ts->program_blocks = sigmask_program_blocks();
	ts->stack_size = stack_size_of(attr);
	background_ensure();
	int rc = REAL(pthread_create)(thread, attr, thread_trampoline, ts);
	if (rc)
		start_give_back(ts);
	return rc;
}

/*
 * A thread made by clone() itself (not pthread_create, which glibc starts
 * with its internal clone): adopted by its creator at once, before it can
 * run long unsampled. Without CLONE_SETTLS it shares the creator's TLS and
 * is sampled through foreign.c; a raw system call clone is found by the
 * agent's thread's scan instead (background.c), within 100 ms.
 */
AGENT_EXPORT int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	pid_t *parent_tid = va_arg(ap, pid_t *);
	void *tls = va_arg(ap, void *);
	pid_t *child_tid = va_arg(ap, pid_t *);
	va_end(ap);
	if ((flags & CLONE_THREAD) && agent_flags->enabled && agent_config.signal && agent_config.pid == getpid() &&
	    !sandbox_covers_me()) {
		int saved_errno = errno;
		background_ensure(); /* a foreign thread's samples need it (foreign.c) */
		errno = saved_errno;
	}
	int tid = REAL(clone)(fn, stack, flags, arg, parent_tid, tls, child_tid);
	if (tid > 0 && (flags & CLONE_THREAD) && agent_flags->enabled && agent_config.signal && agent_config.pid == getpid() &&
	    !sandbox_covers_me()) {
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
 * process's end (thread_records.c).
 */
AGENT_EXPORT int pthread_setname_np(pthread_t thread, const char *name)
{
	int rc = REAL(pthread_setname_np)(thread, name);
	if (rc == 0 && agent_flags->enabled && pthread_equal(thread, pthread_self()))
		agent_thread_record_for(agent_gettid(), name, TRACE_THREAD_NAME);
	return rc;
}
