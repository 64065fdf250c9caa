/* collect_exit - ends the way argv[1] says: "status N" exits with N after
 * writing every byte value to stdout; "segv" dies from SIGSEGV; "selfkill"
 * burns 0.5 s of CPU and SIGKILLs itself; "crash HOW" burns 0.5 s of CPU in
 * crash_work and then dies by HOW: segv (a write through NULL), abort,
 * _exit (status 5) or kill (SIGKILL to itself); "child HOW" forks a child
 * that does "crash HOW", waits for it and prints "child_status=STATUS"
 * (the raw wait status). */
#include <sys/wait.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workload_util.h"

__attribute__((noinline)) static void crash_work(void)
{
	burn_cpu(0.5);
	__asm__ volatile("" ::: "memory");
}

static void crash(const char *how)
{
	crash_work();
	if (!strcmp(how, "segv"))
		*(volatile int *)(uintptr_t)0 = 1;
	else if (!strcmp(how, "abort"))
		abort();
	else if (!strcmp(how, "_exit"))
		_exit(5);
	else if (!strcmp(how, "kill"))
		kill(getpid(), SIGKILL);
	_exit(2);
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "crash"))
		crash(argv[2]);
	if (argc > 2 && !strcmp(argv[1], "child")) {
		pid_t pid = fork();
		if (pid == 0)
			crash(argv[2]);
		int status = 0;
		if (pid < 0 || waitpid(pid, &status, 0) != pid)
			return 1;
		printf("child_status=%d\n", status);
		return 0;
	}
	if (argc > 2 && !strcmp(argv[1], "status")) {
		for (int i = 0; i < 256; i++)
			putchar(i);
		printf("\nend of output\n");
		fflush(stdout);
		return atoi(argv[2]);
	}
	if (argc > 1 && !strcmp(argv[1], "segv")) {
		burn_cpu(0.1);
		raise(SIGSEGV);
	}
	if (argc > 1 && !strcmp(argv[1], "selfkill")) {
		burn_cpu(0.5);
		kill(getpid(), SIGKILL);
	}
	return 2;
}
