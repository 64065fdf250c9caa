/* collect_plugin_ctor - a plugin whose constructor burns 0.2 s of CPU: it
 * runs inside dlopen, where the agent keeps the sampling signal blocked
 * (interpose.c), so every sample of those 0.2 s arrives at once when dlopen
 * returns. The constructor also starts a thread that burns 0.2 s (a thread
 * pool started at load, as OpenBLAS does) and waits for it: that thread must
 * be sampled although it was created inside the agent's section. Its
 * plugin_work then burns what collect_dlopen asks (0.3 s). */
#include <pthread.h>

#include "workload_util.h"

static void *ctor_thread(void *arg)
{
	(void)arg;
	burn_cpu(0.2);
	return NULL;
}

__attribute__((constructor)) static void plugin_ctor_init(void)
{
	burn_cpu(0.2);
	pthread_t t;
	if (pthread_create(&t, NULL, ctor_thread, NULL) == 0)
		pthread_join(t, NULL);
}

void plugin_work(double seconds); /* found through dlsym */

void plugin_work(double seconds)
{
	burn_cpu(seconds);
}
