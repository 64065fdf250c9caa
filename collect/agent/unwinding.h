/*
 * unwinding.h - the agent's unwinding: a thread's stack as a stack id
 * (capture.c: the frame tables of frametab.c, libunwind where they cannot
 * answer), the map of the loaded objects the tables follow and analyze
 * symbolizes by (modules.c, kept current by loader.c's wrappers), and the
 * gate by which no libunwind unwind crosses a fork (unwind_gate.c).
 * unwinder.c keeps libunwind a guest of the program. Sampling and
 * allocations capture through it; it calls only the core.
 */
#ifndef IPSCOPE_UNWINDING_H
#define IPSCOPE_UNWINDING_H

#include <ucontext.h>

#include "agent.h"

/* unwind_gate.c */
/* Around a libunwind unwind or a module scan: 0 to go ahead (then unwind_gate_leave), -1 while a fork is under way. */
int unwind_gate_enter(void);
/* The same outside signal handlers: waits for a fork under way to end (a second at most; -1 then). */
int unwind_gate_wait(void);
void unwind_gate_leave(void);
/* Fork's prepare handler: no new unwinds, and those in flight waited for (briefly); the parent's opens it again. */
void unwind_gate_close(void);
void unwind_gate_open(void);
/* A forked child: no unwind in flight, no fork under way. */
void unwind_gate_reset(void);

/* unwinder.c */
/* The syscall() wrapper's question (sandbox.c): whether libunwind made this call, answered in result. */
int unwinder_syscall(long number, long a1, long a2, long a3, const void *ret_addr, long *result);

/* capture.c */
/* At a thread's start: find its stack's bounds (the table walk reads nothing else); on the initial
 * thread, let libunwind set itself up outside a signal handler. */
void capture_warm_up(void);
/* libunwind's walk from a signal frame's registers (a cursor, no trace cache): the number of frames;
 * *truncated when more than max. */
uint32_t capture_unwind_regs(const gregset_t regs, uint64_t *ips, uint32_t max, int *truncated);
/* Before capture_warm_up on a thread pthread_create started: its stack's size (its attribute's, or the default). */
void capture_stack_size(size_t size);
/* At its end (sampling stopped): unmap what capture_warm_up set up. */
void capture_thread_end(void);
/*
 * The stack of the calling thread as an agent-wide stack id, its definition
 * written to ring when new; UINT32_MAX when it could not be recorded. From a
 * signal handler pass the interrupted context (the stack starts at its exact
 * pc); elsewhere pass NULL and the number of the caller's own frames to drop
 * (the stack starts at a return address). Allocation-free.
 */
uint32_t capture_stack(uint32_t ring, const ucontext_t *uc, uint32_t skip);
/* skip for capture_stack: drop every leading frame in the agent's own text (allocation hooks). */
#define CAPTURE_SKIP_AGENT UINT32_MAX
/* Whether the caller runs on its thread's own stack with at least room bytes below it. */
int capture_stack_has_room(uint64_t room);

/* own_stack.c */
/* Call fn(arg), on a stack of the agent's own when the current one may be small (a coroutine's, an
 * alternate signal stack): from the sampling handler. */
void unwind_on_own_stack(void (*fn)(void *), void *arg);
/* The calling thread ends: unmap its stack of the agent's, if it had one. */
void own_stack_thread_end(void);

/* modules.c */
/* Record modules loaded since the last call, and unloads; call with the signal blocked. */
void modules_rescan(void);
/* A forked child: every module is to be recorded again, for its own pid. */
void modules_forget(void);
/* Build the frame tables walks asked for (the agent's thread, now and then). */
void modules_build_tables(void);
/* The same from the sampling handler of a process with one thread: not when another holds the modules' lock. */
void modules_build_tables_if_free(void);

#endif
