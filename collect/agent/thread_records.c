/*
 * thread_records.c - the records that say which threads ran and for how
 * long (TR_THREAD): a thread's start, its name, its end, and at the
 * process's exit the threads still running.
 *
 * Thread records carry the thread's own CPU clock (CLOCK_THREAD_CPUTIME_ID),
 * so analyze can tell how much of a thread's CPU time the samples cover. A
 * thread's start is written with the first record of its ring
 * (agent_thread_ring), from the signal handler too when its first sample
 * claimed the ring.
 */
#include "agent.h"

#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "trace.h"

/* Another thread's name as the kernel has it (/proc/self/task/TID/comm), into name[16]. */
static void read_comm(uint32_t tid, char name[16])
{
	memset(name, 0, 16);
	ssize_t n = agent_read_task_file(tid, "comm", name, 16);
	if (n > 0 && name[n - 1] == '\n')
		name[n - 1] = 0;
}

/* own: about the calling thread (else tid's: name, when given); may_wait: not in the signal handler. */
static void write_thread_record_named(uint32_t ring, uint32_t tid, uint64_t cpu_ns, uint32_t flags, int own,
				      int may_wait, const char *name)
{
	struct tr_thread *t = may_wait ? agent_reserve_waiting(ring, TR_THREAD, sizeof *t) :
					 transport_reserve(&agent_transport, ring, TR_THREAD, sizeof *t);
	if (!t)
		return;
	memset(t, 0, sizeof *t);
	t->time_ns = agent_now_ns();
	t->cpu_ns = cpu_ns;
	t->tid = tid;
	t->flags = flags;
	/* The kernel's name of the calling thread; another thread's as it was read for it. */
	if (own)
		prctl(PR_GET_NAME, t->name, 0, 0, 0);
	else if (name)
		memcpy(t->name, name, strnlen(name, sizeof t->name - 1)); /* the rest stays 0 */
	transport_commit(&agent_transport, ring);
}

static void write_thread_record(uint32_t ring, uint32_t tid, uint64_t cpu_ns, uint32_t flags, int own,
				int may_wait)
{
	write_thread_record_named(ring, tid, cpu_ns, flags, own, may_wait, NULL);
}

void agent_thread_record_start(uint32_t ring)
{
	agent_self.start_pending = 0;
	write_thread_record(ring, agent_gettid(), agent_thread_cpu_ns(0), TRACE_THREAD_START, 1,
			    !agent_self.in_handler);
}

void agent_thread_record_for(uint32_t tid, const char *name, uint32_t flags)
{
	sigset_t old;
	uint32_t ring = agent_write_begin(&old);
	if (ring != AGENT_NO_RING)
		write_thread_record_named(ring, tid, 0, flags, tid == agent_gettid(), 1, name);
	agent_write_end(&old);
}

void agent_thread_record(uint32_t flags)
{
	agent_enter();
	uint32_t ring = agent_ring_waiting();
	/* At its end, the time its last charge was computed from (sampler.c): the samples then hold exactly
	 * what the record says, and the agent's own end work after is left out of both. */
	uint64_t cpu = (flags & (TRACE_THREAD_EXIT | TRACE_THREAD_AT_END)) && agent_self.end_cpu_ns ? agent_self.end_cpu_ns : agent_thread_cpu_ns(0);
	agent_self.end_cpu_ns = 0;
	if (ring != AGENT_NO_RING)
		write_thread_record(ring, agent_gettid(), cpu, flags, 1, 1);
	else if (agent_self.start_pending) /* it never had a ring: it and its samples are missing */
		atomic_fetch_add(&agent_transport.header->threads_without_ring, 1);
	else
		agent_count_record_lost();
	agent_leave();
}

void agent_record_running_threads(void)
{
	uint32_t ring = agent_thread_ring();
	if (ring == AGENT_NO_RING)
		return;
	uint32_t n = transport_nrings(&agent_transport), self = agent_gettid();
	for (uint32_t i = 0; i < n; i++) {
		struct transport_ring *r = transport_ring(&agent_transport, i);
		uint32_t tid = r->tid;
		if (atomic_load(&r->state) != RING_OWNED || tid == self || !tid || r->pid != (uint32_t)agent_config.pid)
			continue;
		uint64_t cpu_ns = agent_thread_cpu_ns(tid);
		char name[16];
		read_comm(tid, name); /* set later by pthread_setname_np or prctl, perhaps */
		if (cpu_ns && !(r->flags & RING_AGENT_SAMPLER))
			write_thread_record_named(ring, tid, cpu_ns, TRACE_THREAD_AT_END | (name[0] ? TRACE_THREAD_NAME : 0),
						  0, 1, name);
	}
}

/* ---- the lifecycle's: a thread begins and ends, a forked child forgets ---- */

void agent_thread_records_begin(void)
{
	agent_self.start_pending = 1;
	agent_enter();
	agent_ring_waiting(); /* writes the START record */
	agent_leave();
}

void agent_thread_records_end(void)
{
	agent_thread_record(TRACE_THREAD_NAME | TRACE_THREAD_EXIT);
	if (agent_self.ring != AGENT_NO_RING) {
		agent_enter();
		agent_leave(); /* anything a handler left behind */
		struct transport_ring *r = transport_ring(&agent_transport, agent_self.ring);
		atomic_store_explicit(&r->state, RING_CLOSED, memory_order_release);
		agent_self.ring = AGENT_NO_RING;
	}
	/* Not counted internal: it only unmaps, so a program's handler allocating here is recorded. */
	stack_table_free(agent_self.stacks);
	agent_self.stacks = NULL;
}

void agent_thread_records_forget(void)
{
	agent_rings_forget();
	agent_self.ring = AGENT_NO_RING;
	stack_table_free(agent_self.stacks); /* the child's own copy of the parent's table */
	agent_self.stacks = NULL;
}
