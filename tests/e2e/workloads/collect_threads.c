/* collect_threads - four threads burning unequal, known amounts of CPU
 * (0.1, 0.2, 0.3, 0.4 s times argv[1]); each names itself "worker-N" after it
 * started and prints its tid and measured CPU. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "workload_util.h"

static double scale = 1.0;

static void *worker(void *arg)
{
	long n = (long)arg;
	char name[16];
	snprintf(name, sizeof name, "worker-%ld", n);
	pthread_setname_np(pthread_self(), name);
	burn_cpu(0.1 * (double)n * scale);
	fprintf(stderr, "thread tid=%ld cpu_seconds=%.6f\n", (long)syscall(SYS_gettid), thread_cpu_seconds());
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t threads[4];
	if (argc > 1)
		scale = atof(argv[1]);
	for (long i = 0; i < 4; i++)
		if (pthread_create(&threads[i], NULL, worker, (void *)(i + 1)))
			return 1;
	for (int i = 0; i < 4; i++)
		pthread_join(threads[i], NULL);
	return 0;
}
