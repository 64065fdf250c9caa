/*
 * collect_hidden - threads a profiler's signal has trouble reaching, for
 * tests/e2e/collect_hidden.sh. Each burns a known amount of CPU in a
 * function of its own, then the program prints "tid TID ROLE" for each:
 *
 *   masked   a pthread that blocks every signal (as server workers do),
 *            then burns 0.3 s in masked_work
 *   cloned   a thread made by clone() without CLONE_SETTLS (no pthread,
 *            the agent's pthread_create wrapper never sees it; it shares
 *            its creator's thread-local storage), burning 0.3 s in
 *            cloned_work; a second one, made by the clone system call
 *            itself (no wrapper can see it), burns 0.3 s in raw_work
 *   ctor     a pthread started by the constructor of a library the program
 *            is linked with, before the agent starts (collect_ctor_thread.c),
 *            burning 0.3 s in ctor_work
 *   main     burns 0.2 s in main_work while they run, with SIGPROF
 *            handled by its own handler and setitimer(ITIMER_PROF, 10 ms)
 *            on (gperftools' way), and prints "own_sigprof=N" (N > 0: its
 *            timer still reaches it)
 *
 * Each of cloned, raw, ctor and main also prints the CPU time its own thread
 * clock measured ("cpu ROLE SECONDS") and, but ctor, its life in wall-clock
 * time ("wall ROLE SECONDS"): the known answers. "ctor_threads_before=N"
 * is the number of threads the library's constructor saw (1: the agent's
 * own thread did not exist yet, so the agent started after it).
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include "workload_util.h"

static volatile int masked_tid;
static volatile sig_atomic_t own_sigprof;

int ctor_threads(void);
int ctor_thread_join(double *cpu);

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* What a clone()d thread measured of itself. */
struct cloned {
	const char *role;
	void (*work)(void);
	int tid;
	double cpu, wall;
	int done;
};

__attribute__((noinline)) static void masked_work(void)
{
	burn_cpu(0.3);
	__asm__ volatile("" ::: "memory");
}

/* no_icf: gcc would fold these identical functions into one, and the stack would name masked_work */
__attribute__((noinline, no_icf)) static void cloned_work(void)
{
	burn_cpu(0.3);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline, no_icf)) static void raw_work(void)
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
	struct cloned *c = arg;
	c->tid = (int)syscall(SYS_gettid);
	double wall = now_seconds(), cpu = thread_cpu_seconds();
	c->work();
	c->cpu = thread_cpu_seconds() - cpu;
	c->wall = now_seconds() - wall;
	__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
	syscall(SYS_exit, 0);
	return 0;
}

#define CLONE_FLAGS (CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM)

/* The clone system call with a new stack, as a raw syscall: the child starts at the call's return. */
static long raw_clone(char *stack_top, struct cloned *c)
{
	long ret;
	/* The child has no frame to return to: it calls cloned(c) and exits in it. */
	register long r10 __asm__("r10") = 0, r8 __asm__("r8") = 0;
	__asm__ volatile("syscall\n\t"
			 "test %%rax, %%rax\n\t"
			 "jnz 1f\n\t"
			 "xor %%ebp, %%ebp\n\t"
			 "mov %[c], %%rdi\n\t"
			 "call *%[fn]\n\t"
			 "hlt\n"
			 "1:"
			 : "=a"(ret)
			 : "0"((long)SYS_clone), "D"((long)CLONE_FLAGS), "S"(stack_top), "d"(0L), "r"(r10), "r"(r8),
			   [c] "b"(c), [fn] "r"(cloned)
			 : "rcx", "r11", "memory");
	return ret;
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
	char *stack = malloc(size), *raw_stack = malloc(size);
	static struct cloned c = { "cloned", cloned_work, 0, 0, 0, 0 }, raw = { "raw", raw_work, 0, 0, 0, 0 };
	/* 16-byte aligned tops; the raw child's call pushes its return address below */
	char *top = (char *)((uintptr_t)(stack + size) & ~(uintptr_t)15);
	char *raw_top = (char *)((uintptr_t)(raw_stack + size) & ~(uintptr_t)15);
	if (!stack || !raw_stack || clone(cloned, top, CLONE_FLAGS, &c, NULL) < 0 || raw_clone(raw_top, &raw) < 0)
		return 1;
	double wall = now_seconds(), cpu = thread_cpu_seconds();
	main_work();
	cpu = thread_cpu_seconds() - cpu;
	wall = now_seconds() - wall;
	pthread_join(th, NULL);
	while (!__atomic_load_n(&c.done, __ATOMIC_ACQUIRE) || !__atomic_load_n(&raw.done, __ATOMIC_ACQUIRE))
		usleep(1000);
	usleep(10000); /* their SYS_exit is done with the stacks */
	double ctor_cpu = 0;
	int ctor_tid = ctor_thread_join(&ctor_cpu);
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_PROF, &off, NULL);
	printf("tid %d masked\ntid %d main\ntid %d ctor\nown_sigprof=%d\nctor_threads_before=%d\n", masked_tid,
	       (int)syscall(SYS_gettid), ctor_tid, (int)own_sigprof, ctor_threads());
	printf("cpu main %.3f\nwall main %.3f\ncpu ctor %.3f\n", cpu, wall, ctor_cpu);
	for (struct cloned *p = &c; p; p = p == &c ? &raw : NULL)
		printf("tid %d %s\ncpu %s %.3f\nwall %s %.3f\n", p->tid, p->role, p->role, p->cpu, p->role, p->wall);
	return 0;
}
