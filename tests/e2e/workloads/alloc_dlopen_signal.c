/* alloc_dlopen_signal - a signal handler that allocates while the program
 * loads and unloads a library (e2e_alloc_cases): 300 dlopen/dlclose pairs of
 * argv[1] under a 100 us SIGALRM whose handler mallocs 200 B and frees it
 * (handler_allocates). The agent rescans the loaded objects at every dlopen
 * and dlclose, so the handler keeps landing in those rescans. Known answer:
 * every handler run is one allocation of 200 B, freed; the count is printed
 * to stderr (handled=N). */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

void *volatile sink;
static volatile sig_atomic_t handled;

__attribute__((noinline)) static void handler_allocates(int sig)
{
	(void)sig;
	void *p = malloc(200);
	sink = p;
	free(p);
	handled++;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler_allocates;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = { { 0, 100 }, { 0, 100 } };
	setitimer(ITIMER_REAL, &it, NULL);
	for (int i = 0; i < 300; i++) {
		void *h = dlopen(argv[1], RTLD_NOW);
		if (!h) {
			fprintf(stderr, "dlopen: %s\n", dlerror());
			return 1;
		}
		dlclose(h);
	}
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_REAL, &off, NULL);
	fprintf(stderr, "handled=%d\n", (int)handled);
	return 0;
}
