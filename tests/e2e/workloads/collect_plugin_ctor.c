/* collect_plugin_ctor - a plugin whose constructor burns 0.2 s of CPU: it
 * runs inside dlopen, where the agent keeps the sampling signal blocked
 * (interpose.c), so every sample of those 0.2 s arrives at once when dlopen
 * returns. Its plugin_work then burns what collect_dlopen asks (0.3 s). */
#include "workload_util.h"

__attribute__((constructor)) static void plugin_ctor_init(void)
{
	burn_cpu(0.2);
}

void plugin_work(double seconds)
{
	burn_cpu(seconds);
}
