/* collect_plugin_b - a second plugin laid out like collect_plugin, so that
 * loaded after collect_plugin is closed it lands on the same addresses. */
#include "workload_util.h"

void plugin_b_work(double seconds); /* found through dlsym */

void plugin_b_work(double seconds)
{
	burn_cpu(seconds);
}
