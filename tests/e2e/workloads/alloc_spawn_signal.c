/* alloc_spawn_signal - a signal handler that allocates while the program
 * starts threads and forks (e2e_alloc_cases). A 50 us SIGALRM whose handler
 * mallocs 200 B and frees it (handler_allocates) runs while the agent starts
 * each thread and across each fork, where it keeps its own work out of the
 * recorded allocations:
 *   threads: 1500 threads made and joined one at a time; the main thread
 *            blocks SIGALRM and starts each thread with it unblocked
 *            (pthread_attr_setsigmask_np), so the timer's signals land in
 *            the new threads from their first instructions;
 *   fork:    300 forks whose children _exit at once.
 * Known answer: every handler run in this process is one allocation of 200 B,
 * freed; the count is printed to stderr (handled=N). The children run no
 * handler (a child inherits no timer and no pending signal).
 *   reap:    no timer; 300 forks whose children _exit at once, reaped by a
 *            SIGCHLD handler (waitpid, which the agent records) that lands
 *            in the allocation hooks of a loop of 48 B malloc/free pairs
 *            (allocate_48). Known answer: the loop's allocations, printed
 *            (allocated=N), and reaped=300. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

void *volatile sink;
static atomic_int handled;

__attribute__((noinline)) static void handler_allocates(int sig)
{
	(void)sig;
	void *p = malloc(200);
	sink = p;
	free(p);
	atomic_fetch_add(&handled, 1);
}

/* SIGALRM blocked again at once: a handler's malloc must not interrupt glibc's own frees when
 * the thread ends (malloc is not async-signal-safe; the test keeps to where it works). */
static atomic_int reaped;
static long allocated;

static void reap_children(int sig)
{
	(void)sig;
	int saved = errno;
	while (waitpid(-1, NULL, WNOHANG) > 0)
		atomic_fetch_add(&reaped, 1);
	errno = saved;
}

__attribute__((noinline)) static void allocate_48(void)
{
	for (int k = 0; k < 2000; k++) {
		sink = malloc(48);
		free(sink);
	}
	allocated += 2000;
}

/* A child that exits at once: its pid in the parent, or -1 (said). */
static pid_t fork_exiting_child(void)
{
	pid_t pid = fork();
	if (pid < 0)
		perror("fork");
	if (pid == 0)
		_exit(0);
	return pid;
}

static int spawn_reaped(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = reap_children;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGCHLD, &sa, NULL);
	int children = 0;
	for (int i = 0; i < 300; i++) {
		if (fork_exiting_child() < 0)
			return 1;
		children++;
		allocate_48();
	}
	while (atomic_load(&reaped) < children)
		allocate_48();
	fprintf(stderr, "allocated=%ld reaped=%d\n", allocated, atomic_load(&reaped));
	return 0;
}

static void *short_thread(void *arg)
{
	sigset_t alarm;
	sigemptyset(&alarm);
	sigaddset(&alarm, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &alarm, NULL);
	return arg;
}

static int spawn_threads(void)
{
	sigset_t alarm, none;
	sigemptyset(&alarm);
	sigaddset(&alarm, SIGALRM);
	sigemptyset(&none);
	pthread_sigmask(SIG_BLOCK, &alarm, NULL);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setsigmask_np(&attr, &none);
	for (int i = 0; i < 1500; i++) {
		pthread_t t;
		if (pthread_create(&t, &attr, short_thread, NULL)) {
			fprintf(stderr, "pthread_create failed\n");
			return 1;
		}
		pthread_join(t, NULL);
	}
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_UNBLOCK, &alarm, NULL);
	return 0;
}

static int spawn_forks(void)
{
	for (int i = 0; i < 300; i++) {
		pid_t pid = fork_exiting_child();
		if (pid < 0)
			return 1;
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	if (strcmp(argv[1], "reap") == 0)
		return spawn_reaped();
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler_allocates;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = { { 0, 50 }, { 0, 50 } };
	setitimer(ITIMER_REAL, &it, NULL);
	int rc = strcmp(argv[1], "threads") == 0 ? spawn_threads() : strcmp(argv[1], "fork") == 0 ? spawn_forks() : 2;
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_REAL, &off, NULL);
	fprintf(stderr, "handled=%d\n", atomic_load(&handled));
	return rc;
}
