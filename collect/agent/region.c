/*
 * region.c - region control: the two functions collect/include/ipscope.h's
 * ipscope_start() and ipscope_stop() find by weak reference, turning
 * sampling on and off for the whole run (the header's paused word, which
 * collect's --paused, --delay, --duration and SIGUSR2 also move), in a
 * process this image attached in (a raw fork child's state is its parent's).
 */
#include "lifecycle.h"

#include <unistd.h>

AGENT_EXPORT void ipscope_agent_start(void)
{
	if (!agent_transport.header || agent_config.pid != getpid())
		return;
	uint32_t off = 1; /* 2 (collect's --duration is over) stays */
	atomic_compare_exchange_strong(&agent_transport.header->paused, &off, 0);
}

AGENT_EXPORT void ipscope_agent_stop(void)
{
	if (!agent_transport.header || agent_config.pid != getpid())
		return;
	uint32_t on = 0;
	atomic_store(&agent_transport.header->ever_paused, 1);
	atomic_compare_exchange_strong(&agent_transport.header->paused, &on, 1);
}
