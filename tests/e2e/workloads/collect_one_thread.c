/*
 * collect_one_thread.c - a program that must stay single-threaded under
 * collect until it starts a thread of its own (issue 32). It burns CPU in
 * single_work (so the sampling handler runs and builds the frame tables
 * its walks ask for), then prints what a single-threaded program sees:
 *
 *   tasks=N        entries of /proc/self/task
 *   status=N       "Threads:" of /proc/self/status
 *   single=N       glibc's __libc_single_threaded (malloc's fast paths)
 *   unshare=E      errno of unshare(CLONE_NEWUSER) in a fork child, 0 if it
 *                  worked (EINVAL when the process has two threads; EPERM
 *                  where the machine forbids user namespaces: the same bare)
 *
 * and the same lines from a fork child (its own one thread). Before each
 * report it sleeps, 0.3 s in single_wait (main) and 0.2 s in child_wait (the
 * child): wall mode's samples off CPU of a single-threaded process. Then a
 * pthread burns 0.3 s in thread_work while main burns 0.3 s in single_work
 * again. Output before "--" is the same bare and under collect.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/single_threaded.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "workload_util.h"

__attribute__((noinline)) static void single_work(double seconds)
{
	burn_cpu(seconds);
}

__attribute__((noinline)) static void thread_work(void)
{
	burn_cpu(0.3);
}

__attribute__((noinline)) static void sleep_for(double seconds)
{
	struct timespec ts = { (time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9) };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* (the empty asm: not a tail call, so each stays on its stack) */
__attribute__((noinline)) static void single_wait(void)
{
	sleep_for(0.3);
	__asm__ volatile("");
}

__attribute__((noinline)) static void child_wait(void)
{
	sleep_for(0.2);
	__asm__ volatile("");
}

static int count_tasks(void)
{
	char cmd[64];
	snprintf(cmd, sizeof cmd, "ls /proc/%d/task | wc -l", (int)getpid());
	FILE *p = popen(cmd, "r");
	int n = -1;
	if (p) {
		if (fscanf(p, "%d", &n) != 1)
			n = -1;
		pclose(p);
	}
	return n;
}

static int status_threads(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	int n = -1;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	if (f)
		fclose(f);
	return n;
}

/* In a fork child, so the parent's namespaces stay as they are. */
static int unshare_errno(void)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(unshare(CLONE_NEWUSER) == 0 ? 0 : errno);
	int status;
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static void report(const char *who)
{
	/* Read before popen: its child is a process, not a thread, but the count comes first anyway. */
	int single = __libc_single_threaded, status = status_threads();
	printf("%s: tasks=%d status=%d single=%d unshare=%d\n", who, count_tasks(), status, single, unshare_errno());
	fflush(stdout);
}

static void *thread_main(void *arg)
{
	(void)arg;
	thread_work();
	return NULL;
}

int main(void)
{
	single_work(0.3);
	single_wait();
	report("main");
	pid_t pid = fork();
	if (pid == 0) {
		single_work(0.1);
		child_wait();
		report("child");
		_exit(0);
	}
	int status;
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return 1;
	printf("--\n");
	pthread_t t;
	if (pthread_create(&t, NULL, thread_main, NULL))
		return 3;
	single_work(0.3);
	pthread_join(t, NULL);
	printf("after a thread: single=%d\n", __libc_single_threaded);
	return 0;
}
