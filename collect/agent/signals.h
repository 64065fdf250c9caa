/*
 * signals.h - the program's signals kept clear of the sampling signal
 * (signals.c): the mask the program believes it has, which a thread it
 * creates inherits, and the sets it waits on (blocking.c's waits too).
 */
#ifndef IPSCOPE_SIGNALS_H
#define IPSCOPE_SIGNALS_H

#include "agent.h"

/* Whether the program believes the calling thread blocks the sampling signal (the kernel never does). */
int sigmask_program_blocks(void);
/* A new thread starts with its creator's belief (program_threads.c: sigmask_program_blocks there). */
void sigmask_inherit(int creator_blocks);
/* set without the sampling signal (into copy when it had it): a wait must never take the profiler's signal. */
const sigset_t *sigmask_without_ours(const sigset_t *set, sigset_t *copy);

#endif
