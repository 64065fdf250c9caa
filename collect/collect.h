/*
 * collect.h - the pieces of the collect program: option parsing (collect.c),
 * starting the program under the agent (launch.c) and moving records from the
 * agent's rings into the trace (drain.c).
 */
#ifndef IPSCOPE_COLLECT_H
#define IPSCOPE_COLLECT_H

#include <stdint.h>
#include <signal.h>
#include <sys/types.h>

#include "trace.h"
#include "transport.h"

struct collect_options {
	const char *output; /* NULL: stdout */
	const char *program_stdout; /* NULL: default (stderr when the trace is on stdout) */
	uint64_t interval_ns;
	uint32_t max_frames;
	uint32_t source; /* enum transport_source; NONE: the best available */
	int zstd_level;
	int quiet;
	char **argv; /* program and its arguments */
};

/* launch.c */
struct launch {
	pid_t pid;
	int shm_fd;
	struct transport transport;
	sigset_t original_mask; /* what the program gets back */
	struct sigaction original_sigchld;
};
/* Create the shared memory for the agent and take over SIGCHLD; 0 or -1 with a message printed. */
int launch_prepare(struct launch *l, const struct collect_options *o);
/* Start the program; 0 once exec succeeded, else the shell's status (126/127) after a message. */
int launch_start(struct launch *l, const struct collect_options *o, int trace_on_stdout);
/* Wait up to timeout_ms for the program to end; 1 with *status set when it has, else 0. */
int launch_wait(struct launch *l, int timeout_ms, int *status);

/* drain.c */
struct drain;
/* A drain that writes what the agent recorded in process pid to w (NULL: discard). */
struct drain *drain_new(struct trace_writer *w, const struct transport *t, uint32_t pid);
/* Move every published record of every ring into the trace; -1 once writing failed (it then keeps
 * emptying the rings so the program never waits on them). */
int drain_all(struct drain *d);
/* Totals so far. */
void drain_totals(const struct drain *d, uint64_t *samples, uint64_t *weight, uint64_t *lost,
		  uint32_t *threads);
void drain_free(struct drain *d);

#endif
