/*
 * collect_small_stack - code that runs on small stacks, as coroutine
 * libraries and Go-like runtimes make them, for
 * tests/e2e/collect_small_stack.sh. Whatever interrupts such code (the
 * profiler's sampling signal) must fit in what is left of the stack.
 *
 *   coroutine KIB  a makecontext coroutine on a stack of KIB KiB (a guard
 *                  page below it) burns 0.4 s of CPU, switching back to
 *                  main now and then
 *   altstack KIB   a thread's SA_ONSTACK handler for SIGUSR1, on a
 *                  sigaltstack of KIB KiB, burns 0.4 s of CPU inside the
 *                  handler (the program's own signals keep it there)
 *
 * The stack is painted before it is used; at the end the program prints
 * how many bytes of it were ever written ("stack_used=N"), which the test
 * compares with a bare run's: the difference is what interrupting it cost,
 * and the kernel's bound on a signal frame ("minsigstksz=M", AT_MINSIGSTKSZ),
 * which any signal costs.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "workload_util.h"

#define PAINT 0xa5
#define PAGE 4096

static unsigned char *stack_base;
static size_t stack_bytes;
static ucontext_t main_context, coroutine_context;

/* A stack of kib KiB with a PROT_NONE guard page below it, painted. */
static unsigned char *small_stack(size_t kib)
{
	stack_bytes = kib * 1024;
	unsigned char *guard = mmap(NULL, PAGE + stack_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (guard == MAP_FAILED || mprotect(guard, PAGE, PROT_NONE) < 0)
		exit(1);
	stack_base = guard + PAGE;
	memset(stack_base, PAINT, stack_bytes);
	return stack_base;
}

/* Bytes of the stack ever written: from its top down to the lowest byte not still painted. */
static size_t stack_used(void)
{
	size_t i = 0;
	while (i < stack_bytes && stack_base[i] == PAINT)
		i++;
	return stack_bytes - i;
}

__attribute__((noinline)) static void coroutine_work(void)
{
	for (int i = 0; i < 40; i++) {
		burn_cpu(0.01);
		swapcontext(&coroutine_context, &main_context);
	}
}

static void coroutine_main(void)
{
	coroutine_work();
}

static int coroutine(size_t kib)
{
	small_stack(kib);
	getcontext(&coroutine_context);
	coroutine_context.uc_stack.ss_sp = stack_base;
	coroutine_context.uc_stack.ss_size = stack_bytes;
	coroutine_context.uc_link = &main_context;
	makecontext(&coroutine_context, coroutine_main, 0);
	for (int i = 0; i <= 40; i++)
		swapcontext(&main_context, &coroutine_context);
	return 0;
}

static volatile sig_atomic_t handled;

__attribute__((noinline)) static void handler_work(void)
{
	burn_cpu(0.4);
}

static void on_usr1(int sig)
{
	(void)sig;
	handler_work();
	handled = 1;
}

static void *altstack_thread(void *arg)
{
	size_t kib = (size_t)arg;
	stack_t ss = { .ss_sp = small_stack(kib), .ss_size = kib * 1024 };
	if (sigaltstack(&ss, NULL) < 0)
		exit(1);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	pthread_kill(pthread_self(), SIGUSR1);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: collect_small_stack coroutine|altstack KIB\n");
		return 2;
	}
	size_t kib = (size_t)atoi(argv[2]);
	if (!strcmp(argv[1], "coroutine")) {
		if (coroutine(kib))
			return 1;
	} else if (!strcmp(argv[1], "altstack")) {
		pthread_t t;
		if (pthread_create(&t, NULL, altstack_thread, (void *)kib) || pthread_join(t, NULL) || !handled)
			return 1;
	} else {
		return 2;
	}
	printf("stack_used=%zu minsigstksz=%lu\n", stack_used(), getauxval(AT_MINSIGSTKSZ));
	return 0;
}
