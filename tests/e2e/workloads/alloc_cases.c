/*
 * alloc_cases.c - allocation workloads with known answers (e2e_alloc_cases):
 *
 *   family N    each function of the malloc family, in family(): with N 1
 *               or 2 (N 0 does nothing, so valgrind's figures of "1" minus
 *               "0" are family()'s; 2 adds pvalloc, which memcheck 3.19
 *               aborts on): malloc(0) freed, free(NULL), posix_memalign
 *               64/100 leaked, aligned_alloc 64/128 freed, memalign 64/100
 *               leaked, valloc 100 freed, pvalloc 100 leaked, reallocarray
 *               (NULL, 10, 10) leaked, strdup("family") freed, realloc(NULL,
 *               50) grown in place or not to 70 then realloc(p, 0) (a free),
 *               calloc 3x7 freed. With 2, pvalloc(100) too (1 block, 100 B,
 *               leaked), which the test adds to memcheck's figures.
 *   threads     two threads, each 200000 x malloc(24) freed and 1000 x
 *               malloc(40) leaked, in worker(): 400000 + 2000 allocations,
 *               2000 x 40 = 80000 B leaked.
 *   signal      main loops 200000 x malloc(16)/free while SIGALRM's handler
 *               (an interval timer) allocates malloc(200) and frees it
 *               (handler_allocates) 50 times: main's loop 200000 x 16 B,
 *               the handler's 50 x 200 B, nothing leaked.
 *   fork        50000 x malloc(64) freed, forking 10 times in the middle
 *               (each child allocates 1000 x malloc(64), leaked, and exits),
 *               while another thread allocates and frees 100000 x
 *               malloc(16) (fork_worker), then 100 x malloc(8) leaked in the
 *               parent after the forks: parent 50000 + 100000 + 100
 *               allocations (and the thread's own set-up), 800 B leaked;
 *               each child 1000 allocations, 64000 B leaked, none of the
 *               thread's (it is not in the child).
 */
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

void *volatile sink;
void *volatile null; /* so the compiler cannot turn realloc(NULL, n) into malloc(n) */

__attribute__((noinline)) static void family(int with_pvalloc)
{
	void *p = malloc(0);
	sink = p;
	free(p);
	free(null);
	if (posix_memalign(&p, 64, 100) == 0)
		sink = p;
	p = aligned_alloc(64, 128);
	sink = p;
	free(p);
	sink = memalign(64, 100);
	p = valloc(100);
	sink = p;
	free(p);
	if (with_pvalloc)
		sink = pvalloc(100);
	sink = reallocarray(null, 10, 10);
	char *s = strdup("family");
	sink = s;
	free(s);
	p = realloc(null, 50);
	sink = p;
	p = realloc(p, 70);
	sink = p;
	p = realloc(p, 0);
	sink = p;
	p = calloc(3, 7);
	sink = p;
	free(p);
}

__attribute__((noinline)) static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 200000; i++) {
		void *p = malloc(24);
		sink = p;
		free(p);
	}
	for (int i = 0; i < 1000; i++)
		sink = malloc(40);
	return NULL;
}

static volatile sig_atomic_t handled;

__attribute__((noinline)) static void handler_allocates(int sig)
{
	(void)sig;
	if (handled >= 50)
		return;
	void *p = malloc(200);
	sink = p;
	free(p);
	handled++;
}

__attribute__((noinline)) static void main_loop(void)
{
	for (int i = 0; i < 200000; i++) {
		void *p = malloc(16);
		sink = p;
		free(p);
		if (i % 4000 == 0 && handled < 50)
			raise(SIGALRM); /* a signal in the middle of the loop, whatever the machine's speed */
	}
}

__attribute__((noinline)) static void before_fork(void)
{
	for (int i = 0; i < 50000; i++) {
		void *p = malloc(64);
		sink = p;
		free(p);
		if (i % 5000 == 2500) {
			pid_t pid = fork();
			if (pid == 0) {
				for (int k = 0; k < 1000; k++)
					sink = malloc(64);
				_exit(0);
			}
			waitpid(pid, NULL, 0);
		}
	}
}

__attribute__((noinline)) static void *fork_worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 100000; i++) {
		void *p = malloc(16);
		sink = p;
		free(p);
	}
	return NULL;
}

__attribute__((noinline)) static void after_fork(void)
{
	for (int i = 0; i < 100; i++)
		sink = malloc(8);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	if (!strcmp(mode, "family")) {
		int n = argc > 2 ? atoi(argv[2]) : 0;
		if (n)
			family(n == 2);
	} else if (!strcmp(mode, "threads")) {
		pthread_t a, b;
		pthread_create(&a, NULL, worker, NULL);
		pthread_create(&b, NULL, worker, NULL);
		pthread_join(a, NULL);
		pthread_join(b, NULL);
	} else if (!strcmp(mode, "signal")) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = handler_allocates;
		sigaction(SIGALRM, &sa, NULL);
		struct itimerval it = { { 0, 200 }, { 0, 200 } };
		setitimer(ITIMER_REAL, &it, NULL);
		main_loop();
		while (handled < 50)
			raise(SIGALRM);
		struct itimerval off = { { 0, 0 }, { 0, 0 } };
		setitimer(ITIMER_REAL, &off, NULL);
	} else if (!strcmp(mode, "fork")) {
		pthread_t t;
		pthread_create(&t, NULL, fork_worker, NULL);
		before_fork();
		pthread_join(t, NULL);
		after_fork();
	} else {
		return 2;
	}
	return 0;
}
