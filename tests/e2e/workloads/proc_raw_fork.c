/* proc_raw_fork - a child made by the fork system call itself, not by
 * glibc's fork() (e2e_collect_procs): no fork handler runs in it, so the
 * agent's own handlers never learn of it. The child allocates, loads and
 * unloads argv[1], starts a thread that allocates, forks a grandchild with
 * glibc's fork (which exits 5) and waits for it, then exits 3 when all of
 * that worked. The parent prints "child status=N" and exits with the
 * child's status. Known answer, with or without collect: "child status=3",
 * exit status 3. (Under collect the child wrote into rings it does not
 * have and died of SIGSEGV.) */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

void *volatile sink;

static void *allocate(void *arg)
{
	for (int i = 0; i < 1000; i++) {
		sink = malloc(64);
		free(sink);
	}
	return arg;
}

static int child(const char *library)
{
	allocate(NULL);
	void *h = dlopen(library, RTLD_NOW);
	if (!h)
		return 10;
	dlclose(h);
	pthread_t t;
	if (pthread_create(&t, NULL, allocate, NULL) || pthread_join(t, NULL))
		return 11;
	pid_t g = fork();
	if (g < 0)
		return 12;
	if (g == 0) {
		allocate(NULL);
		_exit(5);
	}
	int status;
	if (waitpid(g, &status, 0) != g || !WIFEXITED(status) || WEXITSTATUS(status) != 5)
		return 13;
	return 3;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	allocate(NULL);
	pid_t pid = (pid_t)syscall(SYS_fork);
	if (pid < 0)
		return 2;
	if (pid == 0)
		_exit(child(argv[1]));
	int status;
	if (waitpid(pid, &status, 0) != pid)
		return 2;
	if (WIFSIGNALED(status)) {
		printf("child signal=%d\n", WTERMSIG(status));
		return 1;
	}
	printf("child status=%d\n", WEXITSTATUS(status));
	return WEXITSTATUS(status);
}
