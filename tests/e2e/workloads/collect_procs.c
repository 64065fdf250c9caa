/*
 * collect_procs - a process tree with known work in each process, for
 * tests/e2e/collect_procs.sh:
 *
 *   tree BUSY  the parent burns 0.2 s in parent_work, then starts, one after
 *              the other (waiting for each): a fork() child that burns
 *              0.3 s in child_work and exits 3 (no exec: it runs this
 *              program's code under its own pid); a fork()+execv of BUSY
 *              0.25 (collect_busy: its own module map); a posix_spawn of
 *              BUSY 0.15; a vfork()+execv of BUSY 0.1. It prints
 *              "pid PID ROLE" for itself and each child.
 *   sink S     burns S seconds in sink_work, then reads stdin to its end
 *              (the second program of a pipeline).
 *   forks S    forks children that exit at once, one after the other, from
 *              fork_loop until its own CPU clock has advanced S seconds:
 *              with 32 MiB touched, its time is mostly the kernel's fork.
 *              It prints "pid PID forker" and its CPU time.
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "workload_util.h"

extern char **environ;

__attribute__((noinline)) static void parent_work(void)
{
	burn_cpu(0.2);
	__asm__ volatile("" ::: "memory"); /* not a tail call: this frame stays on the stack */
}

__attribute__((noinline)) static void child_work(void)
{
	burn_cpu(0.3);
	__asm__ volatile("" ::: "memory"); /* not a tail call: this frame stays on the stack */
}

__attribute__((noinline)) static void sink_work(double seconds)
{
	burn_cpu(seconds);
	__asm__ volatile("" ::: "memory");
}

static int wait_for(pid_t pid, int want)
{
	int status;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != want) {
		fprintf(stderr, "child %d: status 0x%x\n", (int)pid, status);
		return 1;
	}
	return 0;
}

static int tree(const char *busy)
{
	printf("pid %d parent\n", (int)getpid());
	parent_work();
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		child_work();
		_exit(3);
	}
	printf("pid %d fork\n", (int)pid);
	int bad = wait_for(pid, 3);
	char *exec_argv[] = { (char *)busy, "0.25", NULL };
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		execv(busy, exec_argv);
		_exit(127);
	}
	printf("pid %d exec\n", (int)pid);
	bad |= wait_for(pid, 0);
	char *spawn_argv[] = { (char *)busy, "0.15", NULL };
	if (posix_spawn(&pid, busy, NULL, NULL, spawn_argv, environ) != 0)
		return 1;
	printf("pid %d spawn\n", (int)pid);
	bad |= wait_for(pid, 0);
	char *vfork_argv[] = { (char *)busy, "0.1", NULL };
	fflush(stdout);
	pid = vfork();
	if (pid == 0) {
		execv(busy, vfork_argv);
		_exit(127);
	}
	printf("pid %d vfork\n", (int)pid);
	bad |= wait_for(pid, 0);
	return bad;
}

__attribute__((noinline)) static int fork_loop(double seconds)
{
	size_t size = 32u << 20;
	char *memory = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (memory == MAP_FAILED)
		return 1;
	memset(memory, 1, size);
	printf("pid %d forker\n", (int)getpid());
	fflush(stdout);
	double start = thread_cpu_seconds();
	int bad = 0, forks = 0;
	while (!bad && thread_cpu_seconds() - start < seconds) {
		pid_t pid = fork();
		if (pid == 0)
			_exit(0);
		bad = pid < 0 || wait_for(pid, 0);
		forks++;
	}
	printf("forks %d cpu_seconds %.6f\n", forks, thread_cpu_seconds() - start);
	__asm__ volatile("" ::: "memory");
	return bad;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "tree"))
		return tree(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "sink")) {
		sink_work(atof(argv[2]));
		char buf[4096];
		while (fread(buf, 1, sizeof buf, stdin) > 0)
			;
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "forks"))
		return fork_loop(atof(argv[2]));
	fprintf(stderr, "usage: collect_procs tree BUSY | sink SECONDS | forks SECONDS\n");
	return 2;
}
