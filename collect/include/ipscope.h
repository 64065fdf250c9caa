/*
 * ipscope.h - bracket the region of a program to profile, the counterpart of
 * Julia's `@profile expr`:
 *
 *     #include <ipscope.h>
 *     ipscope_start();  ...the work to profile...  ipscope_stop();
 *
 * and run it as `collect --paused ./program` (sampling starts off; without
 * --paused it starts on and ipscope_stop() pauses it). Header only, nothing
 * to link: the functions call the agent's through weak references, so
 * without collect (no agent preloaded) they do nothing and cost a compare.
 * They act on the whole run (every thread; in a followed process tree, only
 * in the process collect started), and a --duration that is over stays over.
 * Async-signal-safe: one atomic store in shared memory.
 */
#ifndef IPSCOPE_H
#define IPSCOPE_H

#ifdef __cplusplus
extern "C" {
#endif

/* libipscope-agent.so's, when collect preloaded it; null otherwise. */
extern void ipscope_agent_start(void) __attribute__((weak));
extern void ipscope_agent_stop(void) __attribute__((weak));

/* Turn sampling on (a no-op without collect). */
static inline void ipscope_start(void)
{
	if (ipscope_agent_start)
		ipscope_agent_start();
}

/* Turn sampling off (a no-op without collect). */
static inline void ipscope_stop(void)
{
	if (ipscope_agent_stop)
		ipscope_agent_stop();
}

#ifdef __cplusplus
}
#endif

#endif
