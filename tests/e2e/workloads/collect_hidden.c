/*
 * collect_hidden - threads a profiler's signal has trouble reaching, for
 * tests/e2e/collect_hidden.sh. Each burns a known amount of CPU in a
 * function of its own, then the program prints "tid TID ROLE" for each:
 *
 *   masked   a pthread that blocks every signal (as server workers do),
 *            then burns 0.3 s in masked_work
 *   cloned   a thread made by a raw clone() (no pthread, the agent's
 *            pthread_create wrapper never sees it; it shares its creator's
 *            thread-local storage), burning 0.3 s in cloned_work
 *   main     burns 0.2 s in main_work while they run, with SIGPROF
 *            handled by its own handler and setitimer(ITIMER_PROF, 10 ms)
 *            on (gperftools' way), and prints "own_sigprof=N" (N > 0: its
 *            timer still reaches it)
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include "workload_util.h"

static volatile int masked_tid, cloned_tid, cloned_done;
static volatile sig_atomic_t own_sigprof;

__attribute__((noinline)) static void masked_work(void)
{
	burn_cpu(0.3);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void cloned_work(void)
{
	burn_cpu(0.3);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void main_work(void)
{
	burn_cpu(0.2);
	__asm__ volatile("" ::: "memory");
}

static void *masked(void *arg)
{
	(void)arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	masked_tid = (int)syscall(SYS_gettid);
	masked_work();
	return NULL;
}

/* Runs on a bare clone(): only system calls and the vDSO, no libc state of its own. */
static int cloned(void *arg)
{
	(void)arg;
	cloned_tid = (int)syscall(SYS_gettid);
	cloned_work();
	__atomic_store_n(&cloned_done, 1, __ATOMIC_RELEASE);
	syscall(SYS_exit, 0);
	return 0;
}

static void on_sigprof(int sig)
{
	(void)sig;
	own_sigprof++;
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sigprof;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGPROF, &sa, NULL);
	struct itimerval it = { { 0, 10000 }, { 0, 10000 } };
	setitimer(ITIMER_PROF, &it, NULL);
	pthread_t th;
	if (pthread_create(&th, NULL, masked, NULL))
		return 1;
	size_t size = 1 << 20;
	char *stack = malloc(size);
	if (!stack || clone(cloned, stack + size, CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
						  CLONE_SYSVSEM, NULL) < 0)
		return 1;
	main_work();
	pthread_join(th, NULL);
	while (!__atomic_load_n(&cloned_done, __ATOMIC_ACQUIRE))
		usleep(1000);
	usleep(10000); /* its SYS_exit is done with the stack */
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_PROF, &off, NULL);
	printf("tid %d masked\ntid %d cloned\ntid %d main\nown_sigprof=%d\n", masked_tid, cloned_tid,
	       (int)syscall(SYS_gettid), (int)own_sigprof);
	return 0;
}
