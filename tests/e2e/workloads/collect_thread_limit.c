/*
 * collect_thread_limit - starts threads (default attributes) until
 * pthread_create fails or 200 run, each waiting for the others; prints how
 * many ("threads=N"). Under `ulimit -v` that is how many stacks fit in the
 * address space: the profiler's own memory must not take many of them
 * (tests/e2e/collect_ulimit.sh). The threads never allocate.
 */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t go = PTHREAD_COND_INITIALIZER;
static int done;

static void *wait_for_all(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&lock);
	while (!done)
		pthread_cond_wait(&go, &lock);
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(void)
{
	static pthread_t threads[200];
	int n = 0;
	while (n < 200 && pthread_create(&threads[n], NULL, wait_for_all, NULL) == 0)
		n++;
	pthread_mutex_lock(&lock);
	done = 1;
	pthread_cond_broadcast(&go);
	pthread_mutex_unlock(&lock);
	for (int i = 0; i < n; i++)
		pthread_join(threads[i], NULL);
	printf("threads=%d\n", n);
	return 0;
}
