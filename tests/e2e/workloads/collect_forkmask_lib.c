/* collect_forkmask_lib - a library whose constructor (run before the
 * preloaded agent's) registers fork handlers that change the signal mask:
 * the child blocks SIGUSR1, the parent SIGUSR2 (collect_forkmask). */
#include <pthread.h>
#include <signal.h>

static void block(int sig)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

static void in_parent(void)
{
	block(SIGUSR2);
}

static void in_child(void)
{
	block(SIGUSR1);
}

__attribute__((constructor)) static void register_handlers(void)
{
	pthread_atfork(NULL, in_parent, in_child);
}

void forkmask_linked(void); /* the test program links it */

void forkmask_linked(void)
{
}
