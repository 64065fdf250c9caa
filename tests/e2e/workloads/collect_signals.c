/*
 * collect_signals - a program with signal handlers of its own, for
 * tests/e2e/collect_signals.sh. What it receives must not change under
 * collect.
 *
 *   count READY   counts SIGINT and SIGTERM, creates the file READY once its
 *                 handlers are in place, and after the first signal waits
 *                 0.3 s for a duplicate; prints "SIGINT=n SIGTERM=m".
 *   prof SECONDS  its own SIGPROF handler and setitimer(ITIMER_PROF, 10 ms)
 *                 while it burns SECONDS of CPU; prints how many SIGPROFs
 *                 came from its timer (si_code SI_KERNEL) and how many from
 *                 anyone else ("stray"), and how many 10 ms periods it used.
 *   takeover SIG  burns 0.2 s, installs a handler for signal SIG, burns
 *                 0.3 s more; prints how many SIG it received ("got=n").
 *   notify PARENT as a pre-fork master and a daemon do: handlers for SIGUSR1,
 *                 SIGUSR2, SIGALRM and SIGRTMIN+3, each sent to its whole
 *                 process group (kill(0, ...)), and with PARENT 1 SIGUSR1 to
 *                 its parent ("ready", Xorg style); burns 0.3 s between them;
 *                 prints how many of the group's it received ("notified=n",
 *                 4 when each came once).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "workload_util.h"

static volatile sig_atomic_t interrupts, terminations, prof_own, prof_stray, taken;

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (sig == SIGINT)
		interrupts++;
	else if (sig == SIGTERM)
		terminations++;
	else if (sig == SIGPROF && si->si_code == SI_KERNEL)
		prof_own++;
	else if (sig == SIGPROF)
		prof_stray++;
	else
		taken++;
}

static void install(int sig)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(sig, &sa, NULL);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static int count(const char *ready)
{
	install(SIGINT);
	install(SIGTERM);
	FILE *f = fopen(ready, "w");
	if (!f || fclose(f))
		return 1;
	for (int i = 0; i < 1000 && !interrupts && !terminations; i++)
		sleep_ms(10);
	for (int i = 0; i < 30; i++)
		sleep_ms(10);
	fprintf(stderr, "SIGINT=%d SIGTERM=%d\n", (int)interrupts, (int)terminations);
	return interrupts + terminations ? 0 : 1;
}

static int prof(double seconds)
{
	install(SIGPROF);
	struct itimerval it = { { 0, 10000 }, { 0, 10000 } };
	setitimer(ITIMER_PROF, &it, NULL);
	double start = thread_cpu_seconds();
	burn_cpu(seconds);
	double used = thread_cpu_seconds() - start;
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_PROF, &off, NULL);
	fprintf(stderr, "sigprof own=%d stray=%d periods=%d\n", (int)prof_own, (int)prof_stray,
		(int)(used / 0.01));
	return 0;
}

static int takeover(int sig)
{
	burn_cpu(0.2);
	install(sig);
	burn_cpu(0.3);
	fprintf(stderr, "got=%d\n", (int)taken);
	return 0;
}

static int notify(int parent)
{
	static const int sigs[] = { SIGUSR1, SIGUSR2, SIGALRM };
	for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
		install(sigs[i]);
	install(SIGRTMIN + 3);
	burn_cpu(0.1);
	for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
		kill(0, sigs[i]);
		burn_cpu(0.05);
	}
	kill(0, SIGRTMIN + 3);
	if (parent)
		kill(getppid(), SIGUSR1);
	burn_cpu(0.1);
	fprintf(stderr, "notified=%d\n", (int)taken);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "notify"))
		return notify(atoi(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "count"))
		return count(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "prof"))
		return prof(atof(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "takeover"))
		return takeover(atoi(argv[2]));
	fprintf(stderr, "usage: collect_signals count READY | prof SECONDS | takeover SIG | notify PARENT\n");
	return 2;
}
