/*
 * wall.c - wall mode: every thread sampled at every interval, running or
 * blocked, by the agent's background thread (background.c), which calls
 * wall_tick for each sampling slot at every tick.
 *
 * Signalling a blocked thread is what a wall-clock profiler must not do: the
 * signal makes nanosleep, poll, epoll_wait, select, sigtimedwait and socket
 * calls with timeouts return early or fail with EINTR
 * (doc/ARCHITECTURE.md), and waking a thread costs CPU time
 * (bench/README.md). So at every tick the background thread looks at each
 * thread first and signals only those that are running:
 *
 *  - Its CPU clock (clock_gettime on another thread's CPU-time clock)
 *    has not moved since the last tick and the last tick found it blocked:
 *    it has not run at all since, so it is still in the same call with the
 *    same stack. The sample is the cached one (same stack id, state, system
 *    call); no signal, no /proc, no unwind. This is the common case of a
 *    blocked thread. A thread blocked for LONG_BLOCKED_TICKS in a row is
 *    then looked at only every CHECK_EVERY ticks, its sample standing for
 *    them all: that is what keeps 64 idle threads cheap (the clock read was
 *    most of the cost: bench/README.md, bench/wall-overhead). Nothing is
 *    guessed: if its clock moved meanwhile, it ran for that much CPU time,
 *    which (in ticks, rounded up) goes to this tick's normal sample below,
 *    and the rest of the ticks to the blocked call it was in.
 *  - Its clock moves while we look (read twice): it is on a CPU now. It is
 *    sent the sampling signal (rt_tgsigqueueinfo, carrying its slot) and its
 *    handler takes the sample with its exact context, as in cpu mode.
 *  - Otherwise it ran since the last tick and is not running now: blocked
 *    again, or runnable. /proc/self/task/TID/syscall says which, and for a
 *    blocked thread gives the system call number and the user stack pointer
 *    and pc at the call. Its stack is in our own address space, so it is
 *    unwound right here with libunwind from that pc and sp (unwinder of a
 *    synthetic context holding only those two registers: frames whose CFA is
 *    the frame pointer, -O0 code, need rbp, which is recovered by looking
 *    above the failing frame for a saved-rbp/return-address pair and
 *    unwinding again with it). The thread may wake and run while this reads
 *    its stack, so the result counts only if its CPU clock did not move from
 *    before the /proc read to after the unwind; if it did, the tick's weight
 *    is carried to the next tick. An unwind that does not reach the
 *    thread's root is kept as far as it got and marked truncated. A
 *    runnable thread is signalled (its handler runs when it gets a CPU).
 *
 * A thread is thus signalled only when it was seen running; if it blocks in
 * the microseconds before the signal lands, the signal interrupts a call
 * that just began: the kernel restarts the restartable ones and the
 * wrappers in blocking.c retry the others against their deadline.
 *
 * Weights: each sample stands for the intervals since the background
 * thread's last tick (more than one when it was delayed); a thread whose
 * handler has not run yet when the next tick comes is not signalled again,
 * its weight accumulates. Weight owed to a thread that ended before its
 * sample was taken is counted in the header (exited_unsampled), not lost.
 */
#include "sampling.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "trace.h"
#include "unwinding.h"

#define MAX_SLOTS 65536
#define RBP_GUESSES 8
#define MAX_WALL_FRAMES 1024
#define LONG_BLOCKED_TICKS 200 /* ticks in the same blocked call before it is looked at less often */
#define CHECK_EVERY 8          /* ...every this many ticks */

struct wall_slot {
	_Atomic uint32_t gen; /* a new thread took the slot: the cached view is stale */
	_Atomic uint32_t tid;
	_Atomic uint32_t pending; /* weight owed by the handler */
	_Atomic uint32_t signalled; /* a signal is on its way: do not send another */
	_Atomic int32_t blocked_syscall; /* the background thread asked a blocked thread: its call, else -1 */
	/* The background thread's own view, reset when gen changes. */
	uint32_t seen_gen;
	uint64_t last_cpu;
	uint32_t carry; /* weight not sampled yet (the thread ran while it was read) */
	uint32_t owed; /* ticks of a long-blocked thread not looked at yet */
	uint32_t blocked_ticks; /* ticks in a row found in the cached blocked call */
	int cached;
	uint32_t stack_id, state;
	int32_t syscall;
};

static struct wall_slot wall_slots[MAX_SLOTS];

static struct wall_slot wall_slots[MAX_SLOTS];

void wall_slot_reset(uint32_t i, uint32_t tid)
{
	struct wall_slot *w = &wall_slots[i];
	uint32_t owed = atomic_exchange(&w->pending, 0);
	if (owed)
		atomic_fetch_add(&agent_transport.header->exited_unsampled, owed);
	atomic_store(&w->signalled, 0);
	atomic_store(&w->blocked_syscall, -1);
	atomic_fetch_add(&w->gen, 1);
	atomic_store(&w->tid, tid);
}

uint32_t wall_take_weight(uint32_t i, int32_t *syscall_nr)
{
	struct wall_slot *w = &wall_slots[i];
	*syscall_nr = atomic_exchange(&w->blocked_syscall, -1);
	uint32_t weight = atomic_exchange(&w->pending, 0);
	atomic_store(&w->signalled, 0);
	return weight;
}

/* ---- what the background thread reads ---- */

/* /proc/self/task/TID/syscall: 1 running (or runnable), 0 blocked (nr, sp, pc), -1 gone or unreadable. */
static int read_syscall(uint32_t tid, long *nr, uint64_t *sp, uint64_t *pc)
{
	char path[64], buf[256];
	snprintf(path, sizeof path, "/proc/self/task/%u/syscall", tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	ssize_t n = fstat(fd, &st) == 0 ? read(fd, buf, sizeof buf - 1) : -1;
	agent_close_own(fd, &st);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	if (!strncmp(buf, "running", 7))
		return 1;
	char *p = buf, *end;
	*nr = strtol(p, &end, 10);
	if (end == p)
		return -1;
	uint64_t field[8];
	for (int i = 0; i < 8; i++) {
		p = end;
		field[i] = strtoull(p, &end, 16);
		if (end == p)
			return -1;
	}
	*sp = field[6];
	*pc = field[7];
	return 0;
}

/* Whether addr lies in some loaded executable segment (a plausible return address). */
static int in_text(uint64_t addr)
{
	unw_proc_info_t pi;
	return unw_get_proc_info_by_ip(unw_local_addr_space, (unw_word_t)addr, &pi, NULL) == 0;
}

/*
 * A candidate frame pointer above sp: the first word pair (saved rbp,
 * return address) where the saved rbp is 0 or points higher up the stack
 * and the return address is in code. Read with process_vm_readv, which fails
 * cleanly on memory that is not mapped.
 */
static uint64_t guess_rbp(uint64_t from)
{
	uint64_t words[256];
	struct iovec local = { words, sizeof words }, remote = { (void *)from, sizeof words };
	ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	for (size_t i = 0; got > 16 && i + 1 < (size_t)got / 8; i++) {
		uint64_t at = from + 8 * i, saved = words[i], ret = words[i + 1];
		if ((saved == 0 || (saved > at && saved - at < (1u << 24))) && ret > 4096 && in_text(ret))
			return at;
	}
	return 0;
}

/*
 * Unwind a blocked thread from its system call's pc and sp. Returns the
 * number of frames; *complete says whether it reached the thread's root (or
 * filled max frames).
 */
static uint32_t unwind_blocked(uint64_t sp, uint64_t pc, uint64_t *ips, uint32_t max, int *complete)
{
	uint64_t rbp = 0;
	uint32_t best = 0;
	*complete = 0;
	for (int attempt = 0; attempt <= RBP_GUESSES; attempt++) {
		ucontext_t uc;
		memset(&uc, 0, sizeof uc);
		uc.uc_mcontext.gregs[REG_RIP] = (greg_t)pc;
		uc.uc_mcontext.gregs[REG_RSP] = (greg_t)sp;
		uc.uc_mcontext.gregs[REG_RBP] = (greg_t)rbp;
		unw_cursor_t cursor;
		if (unw_init_local(&cursor, &uc) < 0)
			return best;
		uint32_t n = 0;
		int step = 1;
		unw_word_t frame_sp = sp;
		uint64_t frames[MAX_WALL_FRAMES + 1];
		while (n < max + 1) {
			unw_word_t ip;
			unw_get_reg(&cursor, UNW_REG_IP, &ip);
			unw_get_reg(&cursor, UNW_REG_SP, &frame_sp);
			frames[n++] = ip;
			if ((step = unw_step(&cursor)) <= 0)
				break;
		}
		/* A pc of 0 (or below the first page) is no frame: a guessed rbp that was a stale frame's led
		 * there, and libunwind calls that the end of the stack. It is not the root. */
		if (n && frames[n - 1] < 4096) {
			n--;
			if (step == 0)
				step = -1;
		}
		if (step == 0 || n > max || n > best) {
			best = n > max ? max : n;
			memcpy(ips, frames, best * sizeof *ips);
		}
		if (step == 0 || n > max) {
			*complete = n > max ? 2 : 1;
			return best;
		}
		/* The frame it stopped at may keep its CFA in rbp, which /proc does not give: the candidates
		 * above where the first walk stopped, in order. Not from where a guess's walk stopped: a stale
		 * pair (a vDSO call's, left in the locals of the agent's sleep_until) led a walk far up the
		 * stack, past the frame's true rbp, and every sample of that sleep was cut. */
		uint64_t from = attempt == 0 ? frame_sp : rbp + 8;
		if (!(rbp = guess_rbp(from)))
			return best;
	}
	return best;
}

/* ---- what it writes ---- */

static void emit(uint32_t ring, uint64_t now, uint32_t tid, uint32_t stack_id, uint32_t weight, uint32_t state,
		 int32_t syscall_nr)
{
	if (!agent_write_sample(ring, tid, stack_id, weight, now, state, syscall_nr))
		atomic_fetch_add(&transport_ring(&agent_transport, ring)->lost, 1);
}

static int signal_thread(uint32_t i, uint32_t tid, uint32_t weight, int32_t blocked_syscall)
{
	struct wall_slot *w = &wall_slots[i];
	atomic_fetch_add(&w->pending, weight);
	atomic_store(&w->blocked_syscall, blocked_syscall);
	atomic_store(&w->signalled, 1);
	siginfo_t si;
	memset(&si, 0, sizeof si);
	si.si_signo = agent_config.signal;
	si.si_code = SI_QUEUE;
	si.si_pid = agent_config.pid;
	si.si_uid = getuid();
	si.si_value.sival_int = SAMPLER_WALL_VALUE(i);
	if (REAL(syscall)(SYS_rt_tgsigqueueinfo, agent_config.pid, (pid_t)tid, agent_config.signal, &si) == 0)
		return 0;
	atomic_store(&w->signalled, 0);
	uint32_t owed = atomic_exchange(&w->pending, 0);
	atomic_fetch_add(&agent_transport.header->exited_unsampled, owed);
	return -1;
}

/* A blocked thread's sample from its registers in /proc: 0, or -1 when it ran meanwhile. */
static int sample_blocked(uint32_t ring, struct wall_slot *w, uint32_t tid, uint64_t cpu, long nr, uint64_t sp,
			  uint64_t pc)
{
	uint64_t ips[MAX_WALL_FRAMES];
	int complete = 0;
	uint32_t n = 0, flags = TRACE_STACK_LEAF_EXACT;
	if (unwind_gate_enter() == 0) {
		n = unwind_blocked(sp, pc, ips, agent_config.max_frames, &complete);
		unwind_gate_leave();
	}
	if (agent_thread_cpu_ns(tid) != cpu)
		return -1; /* it ran: the stack read may be torn */
	if (!n) {
		ips[0] = pc;
		n = 1;
	}
	if (complete != 1)
		flags |= TRACE_STACK_TRUNCATED;
	uint32_t id = stack_table_id(&agent_self.stacks, ring, ips, n, flags);
	if (id == UINT32_MAX)
		return -1;
	w->cached = 1;
	w->stack_id = id;
	w->state = nr < 0 ? TRACE_STATE_STOPPED : TRACE_STATE_SLEEPING;
	w->syscall = nr < 0 ? -1 : (int32_t)nr;
	w->last_cpu = cpu;
	return 0;
}

void wall_tick(uint32_t ring, uint32_t i, uint64_t now, uint32_t weight)
{
	struct wall_slot *w = &wall_slots[i];
	uint32_t tid = atomic_load(&w->tid), gen = atomic_load(&w->gen);
	if (!tid || tid == agent_gettid())
		return; /* the background thread (the caller) never samples itself */
	if (w->seen_gen != gen) {
		/* The thread of the ticks owed ended before they were sampled: counted, not lost. */
		if (w->owed + w->carry)
			atomic_fetch_add(&agent_transport.header->exited_unsampled, w->owed + w->carry);
		w->seen_gen = gen;
		w->cached = 0;
		w->carry = 0;
		w->owed = 0;
		w->blocked_ticks = 0;
		w->last_cpu = 0;
	}
	if (atomic_load(&w->signalled)) {
		atomic_fetch_add(&w->pending, weight); /* its handler has not run yet */
		return;
	}
	if (w->cached && w->blocked_ticks >= LONG_BLOCKED_TICKS && w->owed + weight < CHECK_EVERY) {
		w->owed += weight;
		return;
	}
	if (sampler_adopted_twice(i)) {
		sampler_release_adopted(i); /* its own slot samples it */
		return;
	}
	weight += w->carry + w->owed;
	w->carry = 0;
	w->owed = 0;
	uint64_t cpu = agent_thread_cpu_ns(tid);
	if (!cpu) {
		/* Gone between being chosen and being sampled: counted, not lost. */
		atomic_fetch_add(&agent_transport.header->exited_unsampled, weight);
		sampler_release_adopted(i);
		w->cached = 0;
		return;
	}
	if (w->cached && cpu == w->last_cpu) {
		w->blocked_ticks += weight;
		emit(ring, now, tid, w->stack_id, weight, w->state, w->syscall);
		return;
	}
	if (w->cached && cpu > w->last_cpu && weight > 1) {
		/* It woke during ticks not looked at: it ran this long, and was blocked for the rest. */
		uint64_t ran = (cpu - w->last_cpu + agent_config.interval_ns - 1) / agent_config.interval_ns;
		if (ran < weight) {
			emit(ring, now, tid, w->stack_id, weight - (uint32_t)ran, w->state, w->syscall);
			weight = (uint32_t)ran;
		}
	}
	w->cached = 0;
	w->blocked_ticks = 0;
	uint64_t again = agent_thread_cpu_ns(tid);
	if (again != cpu) {
		w->last_cpu = again;
		signal_thread(i, tid, weight, -1); /* on a CPU now */
		return;
	}
	long nr;
	uint64_t sp, pc;
	int r = read_syscall(tid, &nr, &sp, &pc);
	if (r < 0) {
		atomic_fetch_add(&agent_transport.header->exited_unsampled, weight);
		return;
	}
	if (r == 1) {
		w->last_cpu = cpu;
		signal_thread(i, tid, weight, -1); /* runnable: the handler runs when it gets a CPU */
		return;
	}
	if (sample_blocked(ring, w, tid, cpu, nr, sp, pc) < 0) {
		w->carry = weight;
		return;
	}
	emit(ring, now, tid, w->stack_id, weight, w->state, w->syscall);
}

void wall_finish(uint32_t ring)
{
	/* Ticks owed to long-blocked threads: theirs if they did not run since, else counted unsampled. */
	uint32_t high = sampler_slots_high();
	for (uint32_t i = 0; ring != AGENT_NO_RING && i < high; i++) {
		struct wall_slot *w = &wall_slots[i];
		uint32_t tid = atomic_load(&w->tid);
		if (!w->owed || w->seen_gen != atomic_load(&w->gen))
			continue;
		if (tid && w->cached && agent_thread_cpu_ns(tid) == w->last_cpu)
			emit(ring, agent_now_ns(), tid, w->stack_id, w->owed, w->state, w->syscall);
		else
			atomic_fetch_add(&agent_transport.header->exited_unsampled, w->owed);
		w->owed = 0;
	}
}

void wall_forget(void)
{
	/* The per-slot view is the parent's (sampler_forget calls this before it forgets the slots). */
	memset(wall_slots, 0, sampler_slots_high() * sizeof *wall_slots);
}
