/*
 * interpose.h - every libc function the agent interposes, in one list, and
 * REAL(name): the definition the agent's own stands in front of (the next
 * one, libc's: dlsym(RTLD_NEXT)), looked up on first use.
 *
 * A wrapper may run before the agent's constructor (another library's
 * constructor starts threads or loads objects), so a lookup on first use is
 * always allowed; the constructor looks every entry up (interpose_init)
 * before any signal handler can need one, dlsym not being
 * async-signal-safe. The malloc family is looked up by its hooks'
 * bootstrap instead (alloc_hooks.c: dlsym allocates, and until the
 * functions are found the hooks serve a static arena), so REAL's lookup
 * never runs for them.
 */
#ifndef IPSCOPE_INTERPOSE_H
#define IPSCOPE_INTERPOSE_H

#include <dlfcn.h>
#include <link.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Removed from glibc's headers (XPG4 only), still exported and still called. */
__sighandler_t bsd_signal(int sig, __sighandler_t handler);

/*
 * The list. CALLS(name): interposed, and the agent calls the next name
 * (agent_real.name); ALSO(name): interposed, its wrapper calls another's
 * next definition (named in the comment). By the file that defines them.
 */
/* alloc_hooks.c. malloc's entry is looked up last: the hooks take it as the sign that all are there. */
#define AGENT_MALLOC_FAMILY(CALLS) CALLS(malloc) AGENT_MALLOC_OTHERS(CALLS)
#define AGENT_MALLOC_OTHERS(CALLS)                                                                 \
	CALLS(free) CALLS(realloc) CALLS(calloc) CALLS(reallocarray) CALLS(posix_memalign)         \
	CALLS(aligned_alloc) CALLS(memalign) CALLS(valloc) CALLS(pvalloc)
#define AGENT_INTERPOSED(CALLS, ALSO)                                                              \
	/* program_threads.c: the program's threads */                                             \
	CALLS(pthread_create) CALLS(clone) CALLS(pthread_setname_np)                               \
	/* loader.c: the loader */                                                                 \
	CALLS(dlopen) CALLS(dlmopen) CALLS(dlclose) CALLS(dl_iterate_phdr)                         \
	/* signals.c: the sampling signal's disposition, masks and waits */                        \
	CALLS(sigaction) CALLS(signal) CALLS(bsd_signal) CALLS(sysv_signal) CALLS(sigset)          \
	CALLS(sigprocmask) CALLS(pthread_sigmask) CALLS(signalfd) CALLS(sigwait)                   \
	/* unwinder.c: libunwind's descriptors */                                                  \
	CALLS(pipe2) ALSO(pipe) /* pipe2 */                                                        \
	/* sandbox.c: seccomp filters the program installs (and libunwind's probes: unwinder.c) */ \
	CALLS(prctl) CALLS(syscall)                                                                \
	/* blocking.c: calls the sampling signal must not cut short */                             \
	CALLS(nanosleep) ALSO(usleep) ALSO(sleep) /* nanosleep */ CALLS(clock_nanosleep)           \
	CALLS(poll) CALLS(ppoll) CALLS(select) CALLS(pselect)                                      \
	CALLS(epoll_wait) CALLS(epoll_pwait) CALLS(epoll_pwait2)                                   \
	CALLS(sigtimedwait) CALLS(sigwaitinfo) CALLS(pause) CALLS(sigsuspend)                      \
	CALLS(recv) CALLS(recvfrom) CALLS(recvmsg) CALLS(send) CALLS(sendto) CALLS(sendmsg)        \
	CALLS(accept) CALLS(accept4) CALLS(connect)                                                \
	CALLS(read) CALLS(write) CALLS(readv) CALLS(writev)                                        \
	/* process.c: the exec family, posix_spawn, the wait family, fork */                       \
	CALLS(fork) CALLS(execve) CALLS(execv) CALLS(execvp) CALLS(execvpe) CALLS(fexecve) CALLS(execveat)     \
	ALSO(execl) /* execv */ ALSO(execlp) /* execvp */ ALSO(execle) /* execve */                \
	CALLS(posix_spawn) CALLS(posix_spawnp)                                                     \
	CALLS(waitpid) CALLS(wait) CALLS(wait3) CALLS(wait4) CALLS(waitid)

#define AGENT_REAL_POINTER(name) __typeof__(name) *name;
#define AGENT_REAL_NONE(name)
/* The next definitions, NULL until looked up. The malloc family first, in the line every hook reads.
 * (sigset is deprecated, and still exported and called: its type is taken all the same.) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
struct agent_real {
	_Alignas(64) AGENT_MALLOC_FAMILY(AGENT_REAL_POINTER)
	AGENT_INTERPOSED(AGENT_REAL_POINTER, AGENT_REAL_NONE)
};
#pragma GCC diagnostic pop
extern struct agent_real agent_real;

/* The next definition of name (a libc function of the list), looked up on first use. */
#define REAL(name)                                                                                 \
	(({                                                                                        \
		__typeof__(agent_real.name) real_next_ = agent_real.name;                          \
		if (__builtin_expect(real_next_ == NULL, 0))                                       \
			real_next_ = agent_real.name = (__typeof__(real_next_))dlsym(RTLD_NEXT, #name); \
		real_next_;                                                                        \
	}))

/* Look up every entry but the malloc family's, and find libunwind's and the agent's own text: in the
 * constructor, before any signal handler can need them. */
void interpose_init(void);

#endif
