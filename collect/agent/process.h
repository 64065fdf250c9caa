/*
 * process.h - the process tree as the agent tells collect (process.c): the
 * PROCESS records of an image attaching, a fork, an exec and a child reaped.
 */
#ifndef IPSCOPE_PROCESS_H
#define IPSCOPE_PROCESS_H

#include "agent.h"

/* Tell collect about this process (TR_PROCESS of kind, with parent, path and command line when known). */
void process_record(uint32_t kind, uint32_t pid, uint32_t parent, int status, const char *path, const char *command);
/* This image attached: its path and command line from /proc/self. */
void process_attached(void);

#endif
