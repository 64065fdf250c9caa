/*
 * collect_trap - a program that uses SIGTRAP, for tests/e2e/collect_trap.sh:
 * while the program leaves SIGTRAP alone the agent's perf events sample by it
 * (collect/agent/trap.c), and whatever the program does with it must go as
 * it would without collect. Each mode burns CPU around what it does (so
 * samples are taken throughout) and prints what it saw on stdout.
 *
 *   default  prints its initial disposition of SIGTRAP, burns 0.3 s, raises
 *            SIGTRAP: killed by it (core or not, as the system says).
 *   handler  burns 0.2 s, installs an SA_SIGINFO handler, burns 0.6 s
 *            (sampled by the other signal from then), raises SIGTRAP three
 *            times, kill()s it twice, runs an int3; prints how many it got
 *            and how many of them were perf's (si_code TRAP_PERF, 6): none.
 *   resethand  an SA_RESETHAND handler: one SIGTRAP reaches it, the
 *            disposition is the default again afterwards.
 *   ignore   ignores SIGTRAP, raises it three times, burns 0.3 s: lives.
 *   blocked  blocks SIGTRAP, raises it: it stays pending and blocked while
 *            it burns 0.3 s; then unblocks it and is killed by it.
 *   worker   the main thread ends (pthread_exit), a second thread kill()s
 *            the process with SIGTRAP: killed by it.
 *   sigwait  blocks SIGTRAP, raises it, takes it with sigwait: prints 5.
 *   sigset   sigset(SIGTRAP, handler) after blocking it: unblocked, the
 *            old disposition SIG_HOLD; a raise reaches the handler; then
 *            sigset(SIGTRAP, SIG_HOLD) blocks it again.
 *   inhandler  the mask inside a SIGUSR1 handler whose sa_mask is full
 *            holds SIGTRAP.
 *   fork     a forked child ignores SIGTRAP and raises it: it exits 0; the
 *            parent's SIGTRAP is still the default and kills it.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workload_util.h"

/* sigset is what some programs still call: the agent must keep its semantics. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

static volatile sig_atomic_t got, perf, kernel;

static void on_trap(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	got++;
	perf += si->si_code == 6;
	kernel += si->si_code == SI_KERNEL;
}

static void plain_trap(int sig)
{
	(void)sig;
	got++;
}

static void *killer(void *arg)
{
	(void)arg;
	burn_cpu(0.2);
	kill(getpid(), SIGTRAP);
	burn_cpu(0.2);
	printf("survived\n");
	exit(0);
}

static volatile sig_atomic_t trap_in_handler = -1;

static void on_usr1(int sig)
{
	(void)sig;
	sigset_t set;
	sigprocmask(SIG_BLOCK, NULL, &set);
	trap_in_handler = sigismember(&set, SIGTRAP);
}

static const char *disposition(void)
{
	struct sigaction now;
	sigaction(SIGTRAP, NULL, &now);
	return now.sa_handler == SIG_DFL ? "default" : now.sa_handler == SIG_IGN ? "ignored" : "handler";
}

static int is_pending(void)
{
	sigset_t set;
	sigpending(&set);
	return sigismember(&set, SIGTRAP);
}

static int is_blocked(void)
{
	sigset_t set;
	sigprocmask(SIG_BLOCK, NULL, &set);
	return sigismember(&set, SIGTRAP);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	setvbuf(stdout, NULL, _IONBF, 0);
	printf("initial: %s\n", disposition());
	if (!strcmp(mode, "default")) {
		burn_cpu(0.3);
		raise(SIGTRAP);
		printf("survived\n");
		return 0;
	}
	if (!strcmp(mode, "handler") || !strcmp(mode, "resethand")) {
		int once = !strcmp(mode, "resethand");
		burn_cpu(0.2);
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_sigaction = on_trap;
		sa.sa_flags = SA_SIGINFO | (once ? SA_RESETHAND : 0);
		sigaction(SIGTRAP, &sa, NULL);
		printf("installed: %s\n", disposition());
		burn_cpu(0.6);
		raise(SIGTRAP);
		printf("after one: %s\n", disposition());
		if (once)
			return 0;
		raise(SIGTRAP);
		raise(SIGTRAP);
		kill(getpid(), SIGTRAP);
		kill(getpid(), SIGTRAP);
		__asm__ volatile("int3");
		burn_cpu(0.1);
		printf("got=%d perf=%d int3=%d\n", (int)got, (int)perf, (int)kernel);
		return 0;
	}
	if (!strcmp(mode, "ignore")) {
		signal(SIGTRAP, SIG_IGN);
		printf("now: %s\n", disposition());
		raise(SIGTRAP);
		raise(SIGTRAP);
		kill(getpid(), SIGTRAP);
		burn_cpu(0.3);
		printf("survived\n");
		return 0;
	}
	if (!strcmp(mode, "blocked")) {
		sigset_t trap;
		sigemptyset(&trap);
		sigaddset(&trap, SIGTRAP);
		sigprocmask(SIG_BLOCK, &trap, NULL);
		burn_cpu(0.2);
		raise(SIGTRAP);
		printf("pending=%d blocked=%d\n", is_pending(), is_blocked());
		burn_cpu(0.3);
		printf("pending=%d blocked=%d\n", is_pending(), is_blocked());
		sigprocmask(SIG_UNBLOCK, &trap, NULL);
		printf("survived\n");
		return 0;
	}
	if (!strcmp(mode, "worker")) {
		pthread_t t;
		pthread_create(&t, NULL, killer, NULL);
		pthread_exit(NULL);
	}
	if (!strcmp(mode, "sigwait")) {
		sigset_t trap;
		sigemptyset(&trap);
		sigaddset(&trap, SIGTRAP);
		sigprocmask(SIG_BLOCK, &trap, NULL);
		burn_cpu(0.2);
		raise(SIGTRAP);
		int sig = 0;
		sigwait(&trap, &sig);
		printf("sigwait: %d pending=%d\n", sig, is_pending());
		burn_cpu(0.1);
		return 0;
	}
	if (!strcmp(mode, "sigset")) {
		sigset_t trap;
		sigemptyset(&trap);
		sigaddset(&trap, SIGTRAP);
		burn_cpu(0.2);
		sigprocmask(SIG_BLOCK, &trap, NULL);
		void (*was)(int) = sigset(SIGTRAP, plain_trap);
		printf("was hold: %d blocked=%d\n", was == SIG_HOLD, is_blocked());
		raise(SIGTRAP);
		was = sigset(SIGTRAP, SIG_HOLD);
		printf("got=%d was ours: %d blocked=%d\n", (int)got, was == plain_trap, is_blocked());
		burn_cpu(0.2);
		return 0;
	}
	if (!strcmp(mode, "inhandler")) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_usr1;
		sigfillset(&sa.sa_mask);
		sigaction(SIGUSR1, &sa, NULL);
		burn_cpu(0.2);
		raise(SIGUSR1);
		printf("SIGTRAP blocked in the handler: %d, after: %d\n", (int)trap_in_handler, is_blocked());
		burn_cpu(0.2);
		return 0;
	}
	if (!strcmp(mode, "fork")) {
		burn_cpu(0.2);
		pid_t child = fork();
		if (child == 0) {
			signal(SIGTRAP, SIG_IGN);
			raise(SIGTRAP);
			burn_cpu(0.1);
			_exit(0);
		}
		int status;
		waitpid(child, &status, 0);
		printf("child: exited=%d status=%d; parent: %s\n", WIFEXITED(status), WEXITSTATUS(status), disposition());
		burn_cpu(0.2);
		raise(SIGTRAP);
		printf("survived\n");
		return 0;
	}
	fprintf(stderr, "usage: collect_trap default|handler|resethand|ignore|blocked|worker|sigwait|sigset|inhandler|fork\n");
	return 2;
}
