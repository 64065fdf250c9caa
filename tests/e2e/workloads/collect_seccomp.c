/*
 * collect_seccomp - a program that sandboxes itself with a seccomp filter at
 * the top of main and then works, for tests/e2e/collect_seccomp.sh. Under
 * collect it must run as bare: the agent may make no system call the filter
 * forbids (the process is killed by SIGSYS at the first).
 *
 *   threads HOW   forbids perf_event_open and timer_create, then starts two
 *                 threads that burn 0.2 s each
 *   fork HOW      forbids openat, then forks a child that burns 0.1 s and
 *                 exits 7; the parent burns 0.1 s and exits with the child's
 *                 status
 *
 * HOW: prctl (prctl(PR_SET_SECCOMP)), seccomp (the system call through
 * syscall(), as libseccomp makes it) or tsync (the same, on every thread):
 * each forbidden call kills the process (SECCOMP_RET_KILL_PROCESS); errno
 * (prctl): each fails with EPERM (SECCOMP_RET_ERRNO).
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "workload_util.h"

/* Kill the process (or fail with EPERM) at either of two system calls (b: -1 for one only), allow the rest. */
static int sandbox(const char *how, long a, long b)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)a, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)b, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, !strcmp(how, "errno") ? SECCOMP_RET_ERRNO | EPERM : SECCOMP_RET_KILL_PROCESS),
	};
	struct sock_fprog prog = { sizeof code / sizeof *code, code };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	if (!strcmp(how, "prctl") || !strcmp(how, "errno"))
		return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			    !strcmp(how, "tsync") ? SECCOMP_FILTER_FLAG_TSYNC : 0, &prog);
}

static void *work(void *arg)
{
	(void)arg;
	burn_cpu(0.2);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: collect_seccomp threads|fork prctl|seccomp|tsync|errno\n");
		return 2;
	}
	if (!strcmp(argv[1], "threads")) {
		if (sandbox(argv[2], SYS_perf_event_open, SYS_timer_create) < 0)
			return 3;
		pthread_t t[2];
		for (int i = 0; i < 2; i++)
			if (pthread_create(&t[i], NULL, work, NULL))
				return 1;
		for (int i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
		printf("threads done\n");
		return 0;
	}
	if (!strcmp(argv[1], "fork")) {
		if (sandbox(argv[2], SYS_openat, -1) < 0)
			return 3;
		fflush(stdout);
		pid_t child = fork();
		if (child == 0) {
			burn_cpu(0.1);
			_exit(7);
		}
		burn_cpu(0.1);
		int status;
		if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status))
			return 1;
		return WEXITSTATUS(status);
	}
	return 2;
}
