/*
 * unwind_gate.c - no unwind across a fork. libunwind's caches are guarded
 * by a lock, and a module scan holds the loader's (modules.c); a fork while
 * another thread holds one would leave it held in the child forever. So
 * every libunwind unwind and every module scan passes a gate
 * (unwind_gate_enter, unwind_gate_leave) that the fork's prepare handler
 * closes (lifecycle.c): it stops new unwinds and waits (a few milliseconds
 * at most) for those in flight; the parent's handler opens it again, and a
 * child starts with it open.
 *
 * An allocation hook of another thread that meets the gate closed waits for
 * the fork to end instead of losing its stack (unwind_gate_wait): between
 * the agent's prepare and parent handlers runs libc's own fork work, which
 * takes no lock a thread inside a malloc hook holds (it has left the real
 * malloc), and the handlers of libraries that registered theirs before the
 * agent did; one of those that waited for a lock such a thread holds would
 * hold the fork up until the hook gives up waiting (FORK_HOOK_WAIT_NS). A
 * signal handler never waits: its unwind is declined. The table walk
 * (frametab.c) takes no lock and needs no gate.
 */
#include "unwinding.h"

#include <sched.h>
#include <time.h>

#define FORK_WAIT_NS 50000000ull
/* How long a hook waits for a fork to end (unwind_gate_wait): far longer than a hook waited for a fork
 * on a loaded machine (bench/README.md); a fork that needs a lock the waiting thread holds costs this
 * once, and that allocation's stack is lost. */
#define FORK_HOOK_WAIT_NS 1000000000ull

static _Atomic int forking, unwinding; /* forking: threads between the agent's prepare and parent handlers */

int unwind_gate_enter(void)
{
	atomic_fetch_add(&unwinding, 1);
	if (!atomic_load(&forking))
		return 0;
	atomic_fetch_sub(&unwinding, 1);
	return -1;
}

int unwind_gate_wait(void)
{
	uint64_t give_up = agent_now_ns() + FORK_HOOK_WAIT_NS;
	for (unsigned spins = 0; agent_now_ns() < give_up; spins++) {
		if (unwind_gate_enter() == 0)
			return 0;
		if (spins < 64) {
			sched_yield();
		} else {
			struct timespec ts = { 0, 100000 };
			nanosleep(&ts, NULL);
		}
	}
	return -1;
}

void unwind_gate_leave(void)
{
	atomic_fetch_sub(&unwinding, 1);
}

void unwind_gate_close(void)
{
	atomic_fetch_add(&forking, 1); /* a count: another thread's fork may end first */
	uint64_t give_up = agent_now_ns() + FORK_WAIT_NS;
	while (atomic_load(&unwinding) > 0 && agent_now_ns() < give_up)
		sched_yield();
}

void unwind_gate_open(void)
{
	atomic_fetch_sub(&forking, 1);
}

void unwind_gate_reset(void)
{
	atomic_store(&unwinding, 0);
	atomic_store(&forking, 0);
}
