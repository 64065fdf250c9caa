/* collect_forkmask - forks after burning some CPU and prints what the kernel
 * says of SIGUSR1 in the child and SIGUSR2 in the parent, which the fork
 * handlers of collect_forkmask_lib block (both 1 without collect): the
 * agent's own block of its signal across the fork must not undo them. */
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "workload_util.h"

void forkmask_linked(void);

/* The kernel's mask (the raw call: the agent's wrappers show the program its own view). */
static int blocked(int sig)
{
	sigset_t now;
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &now, _NSIG / 8);
	return sigismember(&now, sig);
}

int main(void)
{
	forkmask_linked();
	burn_cpu(0.05);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		printf("child: SIGUSR1 blocked %d\n", blocked(SIGUSR1));
		fflush(stdout);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, NULL, 0) != pid)
		return 1;
	printf("parent: SIGUSR2 blocked %d\n", blocked(SIGUSR2));
	return 0;
}
