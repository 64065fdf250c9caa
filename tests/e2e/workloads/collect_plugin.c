/* collect_plugin - the shared library collect_dlopen loads at run time. */
#include "workload_util.h"

void plugin_work(double seconds); /* found through dlsym */

void plugin_work(double seconds)
{
	burn_cpu(seconds);
}
