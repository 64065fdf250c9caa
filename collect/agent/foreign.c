/*
 * foreign.c - threads whose thread-local storage is another thread's.
 *
 * A raw clone(CLONE_VM | CLONE_THREAD ..., no CLONE_SETTLS) makes a thread
 * that keeps its creator's thread pointer: every TLS variable it touches is
 * the creator's, agent_self (rings, stack table, guards) and errno
 * included, and so are libunwind's per-thread trace cache and glibc's
 * notion of who holds a recursive lock (the loader's, which libunwind takes
 * on a cache miss). Such a thread must never unwind itself nor write its
 * creator's TLS. So:
 *
 *  - Whoever discovers a thread it did not start (the clone() wrapper, the
 *    agent's thread scanning /proc/self/task) registers it here before its
 *    sources start (sampler_adopt): an entry of this table, mmap'd, published
 *    lock-free (an atomic pointer per index, the tid claimed by CAS).
 *  - While any entry is in use, the handler asks the kernel which thread it
 *    runs on (gettid by a raw system call, no errno) and compares it with
 *    the TLS owner's tid (agent_self.tid, only read). A thread that is not
 *    the owner and has an entry is foreign: its handler copies the
 *    interrupted registers into the entry, wakes the agent's thread
 *    (background.c, in cpu mode too) and waits on a futex. The agent's
 *    thread, a real thread with TLS of its own, unwinds the waiting
 *    thread's stack from those registers (libunwind's unw_init_local2 on a
 *    signal frame; the stack is ours and still), records the sample with the
 *    foreign tid in its own ring and lets it go. Everything the handler does
 *    on that path is raw system calls and stores into the entry.
 *  - A waiting thread gives up after POST_TIMEOUT_NS if its post was not
 *    taken (the agent's thread is gone, at exit): the sample is counted lost.
 *  - A thread whose TLS is unclaimed (agent_self.tid 0: a thread made before
 *    the agent started, by another library's constructor) claims it with a
 *    CAS and is sampled as any thread; its entry is then unused.
 *
 * Cost: a foreign thread is off CPU while its sample is taken (two futex
 * wake-ups and an unwind, tens of us); every other thread pays one gettid per
 * sample while foreign threads exist.
 */
#include "sampling.h"

#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "futex.h"
#include "trace.h"
#include "unwinding.h"

#define MAX_FOREIGN 1024
#define POST_TIMEOUT_NS 50000000ull
#define MAX_FOREIGN_FRAMES 1024

enum { POST_IDLE, POST_WAITING, POST_TAKEN };

struct foreign_thread {
	_Atomic uint32_t tid; /* 0: free */
	_Atomic uint32_t post; /* futex word: POST_* */
	uint32_t slot;
	uint32_t weight, state;
	int32_t syscall;
	uint64_t time_ns;
	gregset_t regs; /* the interrupted context */
};

static struct foreign_thread *_Atomic table[MAX_FOREIGN];
static _Atomic uint32_t table_high; /* entries [0, table_high) have been allocated */
static _Atomic uint32_t in_use;
static _Atomic int serviced; /* the agent's thread is there to take posts */

void foreign_serviced(int on)
{
	atomic_store(&serviced, on);
}

void foreign_forget(void)
{
	/* A forked child: the threads were the parent's (the mappings are private copies, kept for reuse). */
	uint32_t high = atomic_load(&table_high);
	for (uint32_t i = 0; i < high; i++)
		if (table[i])
			atomic_store(&table[i]->tid, 0);
	atomic_store(&in_use, 0);
	atomic_store(&serviced, 0);
}

int foreign_active(void)
{
	return atomic_load_explicit(&in_use, memory_order_acquire) != 0;
}

int foreign_register(uint32_t tid, uint32_t slot)
{
	for (uint32_t i = 0; i < MAX_FOREIGN; i++) {
		struct foreign_thread *f = atomic_load(&table[i]);
		if (!f) {
			void *m = mmap(NULL, sizeof *f, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (m == MAP_FAILED)
				return -1;
			struct foreign_thread *expected = NULL;
			if (!atomic_compare_exchange_strong(&table[i], &expected, m)) {
				munmap(m, sizeof *f); /* another discoverer published this index first */
				f = expected;
			} else {
				f = m;
				uint32_t high = atomic_load(&table_high);
				while (high <= i && !atomic_compare_exchange_weak(&table_high, &high, i + 1))
					;
			}
		}
		uint32_t free_tid = 0;
		if (atomic_load(&f->tid) == 0 && atomic_compare_exchange_strong(&f->tid, &free_tid, tid)) {
			/* No signal reaches tid before its sources start, after this returns. */
			f->slot = slot;
			atomic_store(&f->post, POST_IDLE);
			atomic_fetch_add(&in_use, 1);
			return 0;
		}
	}
	return -1;
}

static struct foreign_thread *find(uint32_t tid)
{
	uint32_t high = atomic_load_explicit(&table_high, memory_order_acquire);
	for (uint32_t i = 0; i < high; i++) {
		struct foreign_thread *f = atomic_load_explicit(&table[i], memory_order_acquire);
		if (f && atomic_load_explicit(&f->tid, memory_order_acquire) == tid)
			return f;
	}
	return NULL;
}

void foreign_release(uint32_t tid)
{
	struct foreign_thread *f = tid ? find(tid) : NULL;
	if (!f)
		return;
	/* A post in flight is the thread's last: let its waiter go. */
	atomic_store(&f->post, POST_IDLE);
	futex_wake(&f->post);
	uint32_t expected = tid;
	if (atomic_compare_exchange_strong(&f->tid, &expected, 0))
		atomic_fetch_sub(&in_use, 1);
}

struct foreign_thread *foreign_self(void)
{
	uint32_t tid = (uint32_t)raw_syscall6(SYS_gettid, 0, 0, 0, 0, 0, 0);
	uint32_t owner = __atomic_load_n(&agent_self.tid, __ATOMIC_ACQUIRE);
	if (owner == tid)
		return NULL;
	struct foreign_thread *f = find(tid);
	if (!f)
		return NULL;
	/* Unclaimed TLS (a thread made before the agent started): its own, unless a thread sharing it claims it first. */
	if (!owner && __atomic_compare_exchange_n(&agent_self.tid, &owner, tid, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		foreign_release(tid); /* sampled as a thread of its own from now on */
		return NULL;
	}
	return f;
}

uint32_t foreign_slot(const struct foreign_thread *f)
{
	return f->slot;
}

void foreign_post(struct foreign_thread *f, uint32_t weight, uint32_t state, int32_t syscall_nr,
		  const ucontext_t *uc, uint64_t now)
{
	uint32_t idle = POST_IDLE;
	if (!atomic_load(&serviced)) {
		atomic_fetch_add(&agent_transport.header->lost_no_ring, 1); /* at exit: nobody to unwind it */
		return;
	}
	if (atomic_load(&f->post) != POST_IDLE)
		return;
	memcpy(f->regs, uc->uc_mcontext.gregs, sizeof f->regs);
	f->weight = weight;
	f->state = state;
	f->syscall = syscall_nr;
	f->time_ns = now;
	if (!atomic_compare_exchange_strong(&f->post, &idle, POST_WAITING))
		return;
	agent_wake_background();
	uint64_t give_up = now + POST_TIMEOUT_NS;
	for (;;) {
		uint32_t p = atomic_load(&f->post);
		if (p == POST_IDLE)
			return;
		if (p == POST_WAITING && agent_now_ns() >= give_up) {
			uint32_t waiting = POST_WAITING;
			if (atomic_compare_exchange_strong(&f->post, &waiting, POST_IDLE)) {
				atomic_fetch_add(&agent_transport.header->lost_no_ring, 1);
				return;
			}
			continue; /* taken meanwhile: the stack is being read, stay still */
		}
		/* Taken: wait as long as it takes (the reader holds no lock this thread could hold). */
		futex_wait_until(&f->post, p, p == POST_WAITING ? give_up : agent_now_ns() + POST_TIMEOUT_NS);
	}
}

static void record(uint32_t ring, struct foreign_thread *f)
{
	uint64_t ips[MAX_FOREIGN_FRAMES];
	int truncated = 0;
	uint32_t n = 0, flags = TRACE_STACK_LEAF_EXACT;
	if (unwind_gate_enter() == 0) {
		n = capture_unwind_regs(f->regs, ips, agent_config.max_frames, &truncated);
		unwind_gate_leave();
	}
	if (!n) {
		ips[0] = (uint64_t)f->regs[REG_RIP];
		n = 1;
	}
	if (truncated)
		flags |= TRACE_STACK_TRUNCATED;
	uint32_t id = stack_table_id(&agent_self.stacks, ring, ips, n, flags);
	if (!agent_write_sample(ring, atomic_load(&f->tid), id, f->weight, f->time_ns, f->state, f->syscall))
		atomic_fetch_add(&transport_ring(&agent_transport, ring)->lost, 1);
}

void foreign_service(uint32_t *ring)
{
	uint32_t high = atomic_load(&table_high);
	for (uint32_t i = 0; i < high; i++) {
		struct foreign_thread *f = atomic_load(&table[i]);
		uint32_t waiting = POST_WAITING;
		if (!f || !atomic_compare_exchange_strong(&f->post, &waiting, POST_TAKEN))
			continue;
		if (*ring == AGENT_NO_RING)
			*ring = agent_thread_ring();
		if (*ring != AGENT_NO_RING)
			record(*ring, f);
		else
			atomic_fetch_add(&agent_transport.header->lost_no_ring, 1);
		atomic_store(&f->post, POST_IDLE);
		futex_wake(&f->post);
	}
}
