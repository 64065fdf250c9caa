/*
 * sampler.c - what makes a thread take a sample, and the signal handler that
 * takes it.
 *
 * The signal: a real-time signal whose disposition is still the default when
 * the agent starts, highest first (or collect --signal N). SIGPROF and
 * ITIMER_PROF stay the program's; real-time signals queue instead of
 * coalescing, so a burst of samples is not folded into one.
 *
 * The sources, per thread, best first:
 *  - user mode: a perf_event_open software task-clock event (allowed for
 *    one's own threads at perf_event_paranoid 2) that signals its own thread
 *    on every overflow, at the requested rate. It excludes kernel mode: an
 *    overflow there would queue the signal while the thread is still in the
 *    system call, and the signal then interrupts the sleep that follows
 *    (measured: 3897 of 20000 nanosleeps and 8945 of 40000 polls returned
 *    EINTR at a 20 us period), which changes what the program sees. Each of
 *    its samples stands for one period of user-mode time. Its descriptor is
 *    closed as soon as it is set up: a one-page mapping of it (not inherited
 *    across fork) keeps the event alive, and unmapping it ends it.
 *  - kernel mode: a CPU-time timer (timer_create on CLOCK_THREAD_CPUTIME_ID).
 *    The kernel fires it on the scheduler tick and sends its signal as task
 *    work on the way back to user space, so a tick that found the thread in a
 *    system call is delivered at the system call's return, with the ucontext
 *    at the instruction after `syscall`: the sample lands on the user stack
 *    that made the call, and interrupts nothing. Ticks that found the thread
 *    in user mode are already covered by perf and are dropped. Each kept
 *    sample stands for 1 + overruns periods (the CPU time since the timer's
 *    previous signal), but never for more than perf left uncounted: ticks
 *    that see a thread rarely (beside other load) would otherwise charge
 *    the user time perf counted once more to a system call (tick_weight.h).
 *    Resolution is the tick (250/s here) for kernel time only. The
 *    two sources split the thread's time by its pc: at a system call is the
 *    timer's, elsewhere perf's (see sample_weight). Kernel time outside
 *    system calls (page faults) is the timer's too, when its tick found the
 *    thread in the kernel (kernel_tick): charged at the faulting instruction
 *    (zstd -19's memset went from 2.8% to 4.8-5.0% of its samples, perf says
 *    5.6%; its samples from 95% of its CPU time to 99.7-100.3%). At exit the
 *    thread's measured CPU time shows what the samples missed.
 *  - where the kernel refuses perf events (or a thread cannot map its page),
 *    the CPU-time timer samples both modes: tick resolution, weights 1 +
 *    overruns.
 *
 * A thread's first and last periods: its event starts counting when the
 * thread starts, so the first period is as long as any other (the first
 * sample is not biased), but the last, partial one is never sampled: a
 * thread shorter than the interval may have no sample at all. That is why
 * each thread's own CPU clock goes into its exit record: analyze shows what
 * the samples miss. The timer's first expiry is random within the interval.
 *
 * Threads the agent did not start are adopted by whoever finds them
 * (sampler_adopt): their sources name them by tid. If such a thread's TLS is
 * another thread's (a raw clone()), its handler must not touch agent_self:
 * while any is known, the handler first asks foreign.c, which tells it by its
 * kernel tid, and hands its sample over (foreign_signal).
 */
#include "sampling.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "tick_weight.h"
#include "trace.h"
#include "unwinding.h"

#define SOURCE_PERF 1u /* sampler_self.sources: this thread has a perf event */
#define SOURCE_TIMER 2u /* and a CPU-time timer */
#define SOURCE_WALL 4u /* wall mode: the background thread signals it (wall.c) */
#define MAX_SLOTS 65536
#define SHORT_THREAD_INTERVALS 10 /* a thread of less CPU time is charged all its samples missed */

/* The calling thread's sampling, as its handler reads it: its slot, and what was started there. */
static AGENT_TLS __thread struct sampler_thread {
	int slot; /* index of its slot in slots[], -1: none */
	uint32_t sources; /* SOURCE_*: what its slot started */
	uint64_t periods; /* the weight of its samples so far (charge_unsampled) */
	uint32_t last_stack; /* its last sample's stack id, 0: none yet */
	uint32_t last_hint; /* and where its table had it then (stack_table_last) */
	int paused; /* a sample of it was dropped while sampling was off: no charge at its end */
	uint64_t routine; /* the function it was started with (program_threads.c), 0: unknown */
} sampler_self = { .slot = -1 };

/*
 * Every thread's sources, so that sampler_stop_all can end them from any
 * thread. Slots are claimed by their thread; either side takes a resource
 * out with an atomic exchange, so each is released exactly once.
 */
struct sampling_slot {
	_Atomic int used;
	_Atomic int timer_armed;
	void *_Atomic perf_page;
	timer_t timer;
	_Atomic uint32_t tid; /* 0 until known */
	/* What was started for it (an adopted thread learns it here; wall mode's sampler thread, when it starts,
	 * changes it to SOURCE_WALL and each thread learns that at its next signal: sampler_to_wall). */
	_Atomic uint32_t sources;
	int adopted; /* started by another thread: it has no trampoline to stop it */
	_Atomic uint32_t perf_periods; /* perf's periods since the timer's last signal (tick_weight.h) */
	_Atomic uint32_t kernel_owed; /* uncounted periods not claimed yet (tick_weight.h) */
	_Atomic uint64_t system_us; /* the thread's system time at the timer's last signal (kernel_tick) */
};
static struct sampling_slot slots[MAX_SLOTS];
static _Atomic int slots_high; /* slots[0 .. slots_high) have been used */

static int claim_slot(void)
{
	for (int i = 0; i < MAX_SLOTS; i++) {
		int expected = 0;
		if (atomic_load_explicit(&slots[i].used, memory_order_relaxed) == 0 &&
		    atomic_compare_exchange_strong(&slots[i].used, &expected, 1)) {
			int high = atomic_load(&slots_high);
			while (high <= i && !atomic_compare_exchange_weak(&slots_high, &high, i + 1))
				;
			return i;
		}
	}
	return -1;
}

static void release_sources(struct sampling_slot *s)
{
	void *page = atomic_exchange(&s->perf_page, NULL);
	if (page)
		munmap(page, AGENT_PERF_PAGE_BYTES);
	if (atomic_exchange(&s->timer_armed, 0))
		timer_delete(s->timer);
}

/* Start tid's sources in slot s (wall mode, once its sampler thread runs: that thread is its source); what
 * started. */
static uint32_t start_sources(struct sampling_slot *s, uint32_t i, uint32_t tid)
{
	uint32_t sources = 0;
	if (agent_config.wall && background_wall_sampler()) {
		sources = SOURCE_WALL;
	} else {
		if (agent_config.source == TRANSPORT_SOURCE_PERF) {
			void *page = source_perf_start(tid);
			if (page) {
				atomic_store(&s->perf_page, page);
				sources |= SOURCE_PERF;
			} else {
				atomic_fetch_add(&agent_transport.header->perf_fallback_threads, 1);
			}
		}
		if (source_timer_start(&s->timer, tid) == 0) {
			atomic_store(&s->timer_armed, 1);
			sources |= SOURCE_TIMER;
		}
	}
	atomic_store(&s->perf_periods, 0);
	atomic_store(&s->kernel_owed, 0);
	atomic_store(&s->system_us, 0);
	atomic_store(&s->tid, tid);
	atomic_store(&s->sources, sources);
	if (agent_config.wall) {
		wall_slot_reset(i, tid);
		/* The sampler thread started meanwhile, and its sampler_to_wall may have passed this slot before
		 * sources were set: either it sees them or this sees its flag (both sequentially consistent). */
		if (sources != SOURCE_WALL && background_wall_sampler()) {
			release_sources(s);
			sources = SOURCE_WALL;
			atomic_store(&s->sources, sources);
		}
	}
	return sources;
}

static void free_slot(uint32_t i);

void sampler_thread_start(void)
{
	if (!agent_config.signal || sampler_self.sources || agent_signal_taken() || agent_self.background)
		return;
	int i = claim_slot();
	if (i < 0)
		return;
	sampler_self.slot = i;
	sampler_self.sources = start_sources(&slots[i], (uint32_t)i, agent_gettid());
	/* A scan that adopted this thread before it got here: its own slot samples it (sampler_adopt
	 * checks the other way round, so one of the two sees the other). */
	uint32_t high = (uint32_t)atomic_load(&slots_high), tid = agent_gettid();
	for (uint32_t j = 0; j < high; j++)
		if (j != (uint32_t)i && atomic_load(&slots[j].used) && slots[j].adopted && atomic_load(&slots[j].tid) == tid)
			free_slot(j);
}

static void free_slot(uint32_t i)
{
	struct sampling_slot *s = &slots[i];
	if (agent_config.wall)
		wall_slot_reset(i, 0);
	release_sources(s);
	if (s->adopted)
		foreign_release(atomic_load(&s->tid));
	atomic_store(&s->tid, 0);
	s->adopted = 0;
	atomic_store(&s->used, 0);
}

/*
 * Wall mode's sampler thread is about to start (background.c): until now each thread was sampled by its
 * CPU-time timer, as in cpu mode, and collect read its time off CPU from outside (wall_watch.c). Every
 * slot becomes that thread's to signal; a thread learns it at its next signal (handle_signal), and a timer
 * signal already on its way is then not counted.
 */
void sampler_to_wall(void)
{
	uint32_t high = (uint32_t)atomic_load(&slots_high);
	for (uint32_t i = 0; i < high; i++) {
		struct sampling_slot *s = &slots[i];
		if (!atomic_load(&s->used) || atomic_load(&s->sources) == SOURCE_WALL)
			continue;
		release_sources(s);
		atomic_store(&s->sources, SOURCE_WALL);
		wall_slot_reset(i, atomic_load(&s->tid));
	}
}

/* CPU time of the threads that stopped their own slot (sampler_accounted_cpu_ns). */
static _Atomic uint64_t ended_cpu_ns;

static int write_sample(uint32_t ring, uint32_t id, uint32_t weight, uint64_t now, uint32_t state, int32_t syscall_nr);

/*
 * A thread's CPU time after its last sample (all of it, for a thread that
 * ended before its first): one more sample at its end, so that short
 * threads and each thread's last period are in the profile, not only in
 * info's "unsampled" line. Its stack is the thread's last sample's, or the
 * function it was started with when it has none, flagged
 * TRACE_STACK_EXIT_CHARGE (analyze shows a "[thread exit: unsampled]" leaf).
 * The weight is in periods: the time's whole periods, and one more with the
 * probability of the rest (unbiased over many threads). A thread shorter
 * than SHORT_THREAD_INTERVALS is charged all its samples missed: its start
 * and end are most of its life (the page faults of a new stack, glibc's and
 * the loader's setup), which the user-mode event never counts (500 threads
 * of 1.5 ms measured 2.6-3.4 ms each under collect, and their samples held
 * 16% of it). A longer thread is charged at most one interval: what it
 * missed beyond is spread over its life, not its last stack's.
 * None when sampling was off during its life or is off now (that time is
 * not the run's). collect counts them (META exit_charged).
 */
static void charge_unsampled(void)
{
	uint64_t interval = agent_config.interval_ns;
	if (agent_config.wall || !sampler_self.sources || sampler_self.paused || !agent_sampling_on() ||
	    !agent_flags->enabled || !interval)
		return;
	uint64_t cpu = agent_thread_cpu_ns(0), covered = sampler_self.periods * interval;
	agent_self.end_cpu_ns = cpu; /* the exit record's (thread_records.c) */
	if (cpu <= covered)
		return;
	uint64_t charge = cpu - covered;
	if (cpu >= SHORT_THREAD_INTERVALS * interval && charge > interval)
		charge = interval;
	uint64_t x = agent_now_ns() ^ ((uint64_t)agent_gettid() << 32);
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	uint32_t weight = (uint32_t)(charge / interval) + (x % interval < charge % interval);
	uint32_t ring = weight ? agent_thread_ring() : AGENT_NO_RING;
	if (ring == AGENT_NO_RING)
		return;
	/* The last sample's frames straight from the table, which is made roomy first so that they stay put
	 * (no copy on the stack: a thread of PTHREAD_STACK_MIN ends here too). */
	const uint64_t *frames = NULL;
	uint32_t n = sampler_self.last_stack ?
			     stack_table_frames(agent_self.stacks, sampler_self.last_stack, sampler_self.last_hint, &frames) : 0;
	uint32_t flags = TRACE_STACK_EXIT_CHARGE | TRACE_STACK_LEAF_EXACT; /* exact, as every sample's leaf */
	if (n) {
		const struct stack_table *before = agent_self.stacks;
		if (stack_table_reserve(&agent_self.stacks, n) < 0)
			return;
		if (agent_self.stacks != before) /* moved: the hint is stale */
			n = stack_table_frames(agent_self.stacks, sampler_self.last_stack, UINT32_MAX, &frames);
	}
	uint64_t routine = sampler_self.routine + 1; /* a return address into it: looked up at ip - 1 */
	if (!n && sampler_self.routine) {
		frames = &routine;
		n = 1;
		flags = TRACE_STACK_EXIT_CHARGE;
	}
	if (!n)
		return; /* no stack to charge (the initial thread, never sampled) */
	uint32_t id = stack_table_id(&agent_self.stacks, ring, frames, n, flags);
	if (!write_sample(ring, id, weight, agent_now_ns(), TRACE_STATE_ON_CPU, -1))
		return;
	atomic_fetch_add(&agent_transport.header->exit_charged, weight);
	atomic_fetch_add(&agent_transport.header->exit_charged_threads, 1);
}

void sampler_thread_routine(uint64_t routine)
{
	sampler_self.routine = routine;
}

void sampler_thread_stop(void)
{
	if (sampler_self.slot < 0)
		return;
	charge_unsampled();
	free_slot((uint32_t)sampler_self.slot);
	/* The clock the charge read, if it did: one read of it at a thread's end. */
	atomic_fetch_add(&ended_cpu_ns, agent_self.end_cpu_ns ? agent_self.end_cpu_ns : agent_thread_cpu_ns(0));
	sampler_self.slot = -1;
	sampler_self.sources = 0;
	sampler_self.periods = 0;
	sampler_self.last_stack = 0;
	sampler_self.paused = 0;
}

int sampler_knows(uint32_t tid)
{
	uint32_t high = (uint32_t)atomic_load(&slots_high);
	for (uint32_t i = 0; i < high; i++)
		if (atomic_load_explicit(&slots[i].tid, memory_order_relaxed) == tid && atomic_load(&slots[i].used))
			return 1;
	return 0;
}

int sampler_adopt(uint32_t tid)
{
	if (agent_signal_taken() || sampler_knows(tid))
		return -1;
	int i = claim_slot();
	if (i < 0)
		return -1;
	slots[i].adopted = 1;
	/* Its TLS may be another thread's (a raw clone()): state by tid first, before any signal reaches it. */
	if (foreign_register(tid, (uint32_t)i) < 0) {
		slots[i].adopted = 0;
		atomic_store(&slots[i].used, 0);
		return -1;
	}
	atomic_store(&slots[i].tid, tid);
	if (!start_sources(&slots[i], (uint32_t)i, tid) || sampler_adopted_twice((uint32_t)i)) {
		free_slot((uint32_t)i);
		return -1;
	}
	return 0;
}

uint32_t sampler_slots_high(void)
{
	return (uint32_t)atomic_load(&slots_high);
}

int sampler_adopted_twice(uint32_t i)
{
	uint32_t tid = atomic_load(&slots[i].tid), high = (uint32_t)atomic_load(&slots_high);
	if (!slots[i].adopted || !tid)
		return 0;
	for (uint32_t j = 0; j < high; j++)
		if (j != i && atomic_load(&slots[j].used) && atomic_load(&slots[j].tid) == tid && !slots[j].adopted)
			return 1;
	return 0;
}

void sampler_release_adopted(uint32_t i)
{
	if (slots[i].adopted)
		free_slot(i);
}

uint64_t sampler_accounted_cpu_ns(void)
{
	uint64_t sum = atomic_load(&ended_cpu_ns);
	uint32_t high = (uint32_t)atomic_load(&slots_high);
	for (uint32_t i = 0; i < high; i++) {
		uint32_t tid = atomic_load(&slots[i].tid);
		if (tid && atomic_load(&slots[i].used))
			sum += agent_thread_cpu_ns(tid);
	}
	return sum;
}

void sampler_reap_adopted(void)
{
	uint32_t high = (uint32_t)atomic_load(&slots_high);
	for (uint32_t i = 0; i < high; i++) {
		uint32_t tid = atomic_load(&slots[i].tid);
		if (atomic_load(&slots[i].used) && slots[i].adopted && tid &&
		    (sampler_adopted_twice(i) || !agent_thread_cpu_ns(tid)))
			free_slot(i);
	}
}

/* The first signal to a thread the agent did not start: learn its slot (gettid once). */
static int adopt_self(const siginfo_t *si)
{
	uint32_t tid = (uint32_t)syscall(SYS_gettid), high = (uint32_t)atomic_load(&slots_high);
	if (agent_self.tid && agent_self.tid != tid)
		return 0; /* its thread-local storage is another thread's (a raw clone()): not touched */
	(void)si;
	for (uint32_t i = 0; i < high; i++)
		if (atomic_load(&slots[i].used) && atomic_load(&slots[i].tid) == tid && atomic_load(&slots[i].sources)) {
			agent_self.tid = tid;
			sampler_self.slot = (int)i;
			sampler_self.sources = atomic_load(&slots[i].sources);
			agent_self.start_pending = 1;
			agent_self.registered = 0; /* nothing of it to end: the slot is released once it is gone */
			return 1;
		}
	return 0;
}

void sampler_stop_all(void)
{
	int high = atomic_load(&slots_high);
	for (int i = 0; i < high; i++)
		if (atomic_load(&slots[i].used))
			release_sources(&slots[i]);
}

void sampler_forget(void)
{
	/* Not inherited: the pages are MADV_DONTFORK, timers are per process. Unmapping
	 * or deleting by the stale handles could hit the child's own mappings or timers. */
	wall_forget();
	int high = atomic_load(&slots_high);
	foreign_forget();
	memset(slots, 0, (size_t)high * sizeof *slots);
	atomic_store(&slots_high, 0);
	sampler_self.slot = -1;
	sampler_self.sources = 0;
	sampler_self.periods = 0;
	sampler_self.last_stack = 0; /* the parent's table's */
	sampler_self.paused = 0;
}

/* The interrupted pc follows a `syscall` instruction (or is one, about to be restarted). */
static int at_syscall(const ucontext_t *uc)
{
	const uint8_t *pc = (const uint8_t *)uc->uc_mcontext.gregs[REG_RIP];
	uintptr_t in_page = (uintptr_t)pc & 4095;
	return (in_page >= 2 && pc[-2] == 0x0f && pc[-1] == 0x05) || (in_page <= 4094 && pc[0] == 0x0f && pc[1] == 0x05);
}

/* Whether a wall-mode signal (from the background thread) is for slot i. */
static int wall_signal_for(const siginfo_t *si, int i)
{
	return si->si_code == SI_QUEUE && si->si_pid == agent_config.pid &&
	       si->si_value.sival_int == SAMPLER_WALL_VALUE(i);
}

/*
 * Whether the scheduler tick behind this timer signal, which arrived outside a
 * system call, found the thread in the kernel: a page fault (or an
 * interrupt's work) it returns from to the faulting instruction, where the
 * signal lands. The kernel charges each tick to the mode it finds the thread
 * in (tick-based accounting, CONFIG_TICK_CPU_ACCOUNTING), before it fires the
 * CPU-time timers of that tick: the thread's system time rose since the
 * timer's previous signal exactly when a tick found it in the kernel (with
 * precise accounting, when it spent any time there). One getrusage per timer
 * signal (the scheduler's rate, not the sampling rate); none where the
 * thread must make no system call (may_syscall 0: a sandboxed or foreign
 * thread), which then leaves such time uncharged as before.
 */
static int kernel_tick(int slot, int may_syscall)
{
	struct rusage ru;
	if (!may_syscall || getrusage(RUSAGE_THREAD, &ru) != 0)
		return 0;
	uint64_t now = (uint64_t)ru.ru_stime.tv_sec * 1000000u + (uint64_t)ru.ru_stime.tv_usec;
	uint64_t before = atomic_exchange_explicit(&slots[slot].system_us, now, memory_order_relaxed);
	return before && now > before;
}

/*
 * Periods this signal stands for; 0 when it is not ours, or when the other
 * source covers that moment. With both sources the two split time by where
 * the thread was: at a system call (its pc at or just after `syscall`) is the
 * timer's, anywhere else perf's. A perf overflow that shows the pc just
 * after `syscall` was, nearly always, raised in the kernel while interrupts
 * were off on the way out of the call and taken on the first user
 * instruction: counting it as user time too would count that time twice
 * (measured on 1000-futex-wake loops: user time +30%).
 */
static uint32_t sample_weight(const siginfo_t *si, const ucontext_t *uc, uint32_t sources, int slot,
			      int may_syscall, int32_t *syscall_nr)
{
	*syscall_nr = -1;
	if (sources & SOURCE_WALL)
		return wall_signal_for(si, slot) ? wall_take_weight((uint32_t)slot, syscall_nr) : 0;
	int both = (sources & (SOURCE_PERF | SOURCE_TIMER)) == (SOURCE_PERF | SOURCE_TIMER);
	if ((si->si_code == POLL_IN || si->si_code == POLL_HUP) && (sources & SOURCE_PERF)) {
		if (both && at_syscall(uc))
			return 0;
		/* Only this thread's handlers write it, one at a time (the handler blocks the signal): no locked add. */
		atomic_store_explicit(&slots[slot].perf_periods,
				      atomic_load_explicit(&slots[slot].perf_periods, memory_order_relaxed) + 1,
				      memory_order_relaxed);
		return 1;
	}
	if (si->si_code != SI_TIMER || si->si_value.sival_ptr != &source_timer_cookie || !(sources & SOURCE_TIMER))
		return 0;
	/* Only this thread's handlers touch these, one at a time (the handler blocks the signal). */
	uint32_t perf_counted = atomic_load_explicit(&slots[slot].perf_periods, memory_order_relaxed);
	atomic_store_explicit(&slots[slot].perf_periods, 0, memory_order_relaxed);
	uint32_t periods = 1u + (uint32_t)(si->si_overrun > 0 ? si->si_overrun : 0);
	if (!both)
		return periods;
	uint32_t owed = atomic_load_explicit(&slots[slot].kernel_owed, memory_order_relaxed), weight = 0;
	int in_kernel = kernel_tick(slot, may_syscall);
	if (at_syscall(uc))
		weight = tick_weight(periods, perf_counted, &owed);
	else if (in_kernel)
		weight = tick_uncounted(periods, perf_counted, &owed); /* a fault's time, at the faulting instruction */
	else
		tick_owe(periods, perf_counted, &owed);
	atomic_store_explicit(&slots[slot].kernel_owed, owed, memory_order_relaxed);
	return weight;
}

static void count_lost(void)
{
	if (agent_self.ring != AGENT_NO_RING)
		atomic_fetch_add(&transport_ring(&agent_transport, agent_self.ring)->lost, 1);
	else
		atomic_fetch_add(&agent_transport.header->lost_no_ring, 1);
}

/* A sample of the calling thread into ring (id: its stack, UINT32_MAX: none could be had); 0 when lost. */
static int write_sample(uint32_t ring, uint32_t id, uint32_t weight, uint64_t now, uint32_t state, int32_t syscall_nr)
{
	if (agent_write_sample(ring, agent_gettid(), id, weight, now, state, syscall_nr))
		return 1;
	count_lost();
	return 0;
}

static void record_sample(uint32_t weight, const ucontext_t *uc, uint64_t now, uint32_t state, int32_t syscall_nr)
{
	if (agent_self.depth) {
		/* Inside an allocation hook (or another ring write): the time is the
		 * profiler's, and the writer it interrupted records it (nesting.c). */
		atomic_fetch_add_explicit(&agent_self.hook_weight, weight, memory_order_relaxed);
		agent_self.hook_time_ns = now;
		return;
	}
	uint32_t ring = agent_thread_ring();
	if (ring == AGENT_NO_RING) {
		count_lost();
		return;
	}
	uint32_t id = capture_stack(ring, uc, 0);
	if (id != UINT32_MAX) {
		sampler_self.last_stack = id;
		sampler_self.last_hint = stack_table_last(agent_self.stacks);
	}
	(void)write_sample(ring, id, weight, now, state, syscall_nr);
}

/* The system call a glibc wrapper makes: its number is loaded by `mov $nr, %eax` (b8 imm32) just before. */
static int32_t syscall_before(const uint8_t *pc)
{
	uintptr_t in_page = (uintptr_t)pc & 4095;
	if (in_page < 7 || pc[-7] != 0xb8)
		return -1;
	int32_t nr;
	memcpy(&nr, pc - 6, sizeof nr);
	return nr >= 0 && nr < 1024 ? nr : -1;
}

/*
 * A wall-mode signal that found the thread in a blocking system call (the
 * background thread signals only running threads, but a thread may block in
 * the moment between): the kernel either rewound it to restart the call
 * (pc at `syscall`) or made the call fail with EINTR, which the wrappers of
 * blocking.c retry. Either way the thread was off CPU in that call.
 */
static uint32_t wall_state(const ucontext_t *uc, int32_t *syscall_nr, int *eintr_ours)
{
	const uint8_t *pc = (const uint8_t *)uc->uc_mcontext.gregs[REG_RIP];
	uintptr_t in_page = (uintptr_t)pc & 4095;
	int after = in_page >= 2 && pc[-2] == 0x0f && pc[-1] == 0x05;
	if (after && uc->uc_mcontext.gregs[REG_RAX] == -EINTR) {
		*eintr_ours = 1;
		if (*syscall_nr < 0)
			*syscall_nr = syscall_before(pc);
		return TRACE_STATE_SLEEPING;
	}
	return *syscall_nr >= 0 ? TRACE_STATE_SLEEPING : TRACE_STATE_ON_CPU;
}

/* One writer per ring: a plain read-modify-write, no locked instruction. */
static void add(_Atomic uint64_t *counter, uint64_t n)
{
	atomic_store_explicit(counter, atomic_load_explicit(counter, memory_order_relaxed) + n, memory_order_relaxed);
}

/*
 * What the program paid for this signal: time in the handler on the vDSO's
 * CLOCK_MONOTONIC (no system call), on the thread's own ring. It is wall
 * time: a call that took longer than any handler does was preempted and is
 * only counted, so collect can extrapolate from the others.
 */
static void account_cost(uint64_t start)
{
	if (agent_self.ring == AGENT_NO_RING)
		return;
	struct transport_ring *r = transport_ring(&agent_transport, agent_self.ring);
	uint64_t spent = agent_now_ns() - start;
	if (spent < TRANSPORT_PREEMPTED_NS) {
		add(&r->handler_ns, spent);
		add(&r->handler_timed, 1);
	}
	add(&r->handler_calls, 1);
}

/*
 * A thread whose TLS is another's (foreign.c): its sample goes to the agent's
 * thread to unwind. Nothing here writes TLS, errno included.
 */
static int foreign_signal(const siginfo_t *si, const ucontext_t *uc)
{
	struct foreign_thread *f = foreign_self();
	if (!f)
		return 0;
	uint32_t slot = foreign_slot(f), sources = atomic_load_explicit(&slots[slot].sources, memory_order_relaxed);
	int32_t syscall_nr;
	int eintr = 0;
	uint64_t now = agent_now_ns();
	uint32_t weight = agent_flags->enabled ? sample_weight(si, uc, sources, (int)slot, 0, &syscall_nr) : 0;
	uint32_t state = sources & SOURCE_WALL ? wall_state(uc, &syscall_nr, &eintr) : TRACE_STATE_ON_CPU;
	if (weight && agent_sampling_on())
		foreign_post(f, weight, state, syscall_nr, uc, now);
	return 1;
}

struct signal_args {
	siginfo_t *si;
	void *ucontext;
};

/* The handler's work, on a stack of the agent's own when the interrupted one may be small (own_stack.c). */
static void handle_signal(void *arg)
{
	siginfo_t *si = ((struct signal_args *)arg)->si;
	void *ucontext = ((struct signal_args *)arg)->ucontext;
	agent_self.signals_taken++;
	if (agent_flags->enabled && !sampler_self.sources && !agent_self.in_handler && !adopt_self(si))
		return;
	if (agent_config.wall && sampler_self.slot >= 0) /* the sampler thread took it over (sampler_to_wall) */
		sampler_self.sources = atomic_load_explicit(&slots[sampler_self.slot].sources, memory_order_relaxed);
	if (agent_flags->enabled && sampler_self.sources) {
		uint64_t start = agent_now_ns();
		agent_self.in_handler = 1;
		int32_t syscall_nr;
		uint32_t weight = sample_weight(si, ucontext, sampler_self.sources, sampler_self.slot, !agent_self.sandboxed,
					       &syscall_nr);
		uint32_t state = sampler_self.sources & SOURCE_WALL ?
				 wall_state(ucontext, &syscall_nr, &agent_self.eintr_ours) : TRACE_STATE_ON_CPU;
		if (weight && agent_sampling_on()) {
			sampler_self.periods += weight;
			record_sample(weight, ucontext, start, state, syscall_nr);
		} else if (weight) {
			sampler_self.paused = 1;
		}
		background_handler_duty(); /* a process with one thread: the agent's thread's work */
		agent_self.in_handler = 0;
		account_cost(start);
	}
}

static void on_signal(int sig, siginfo_t *si, void *ucontext)
{
	(void)sig;
	if (foreign_active() && foreign_signal(si, ucontext))
		return;
	int saved_errno = errno;
	struct signal_args args = { si, ucontext };
	unwind_on_own_stack(handle_signal, &args);
	errno = saved_errno;
}

/* The highest real-time signal the program left at its default and does not block. */
static int free_signal(void)
{
	sigset_t blocked;
	pthread_sigmask(SIG_BLOCK, NULL, &blocked);
	for (int sig = SIGRTMAX; sig >= SIGRTMIN; sig--) {
		struct sigaction old;
		if (REAL(sigaction)(sig, NULL, &old) == 0 && old.sa_handler == SIG_DFL &&
		    !sigismember(&blocked, sig))
			return sig;
	}
	return 0;
}

int sampler_init(uint32_t requested_source, int requested_signal)
{
	_Static_assert(sizeof(void *) == sizeof(uint64_t), "64-bit only");
	struct transport_header *h = agent_transport.header;
	unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);

	/* The first process alone speaks for the run in the header; the others' errors stay theirs. */
	static char scratch_error[sizeof h->agent_error];
	char *error = h->pid == (uint32_t)getpid() ? h->agent_error : scratch_error;
	agent_config.signal = requested_signal ? requested_signal : free_signal();
	if (!agent_config.signal) {
		strcpy(error, "every real-time signal is in use: choose one with --signal");
		return -1;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	/* Asynchronous signals wait until the handler is done (microseconds): libunwind
	 * then needs no masking of its own (unwinder.c). Faults stay deliverable. */
	sigfillset(&sa.sa_mask);
	static const int faults[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGABRT, SIGSYS };
	for (size_t i = 0; i < sizeof faults / sizeof *faults; i++)
		sigdelset(&sa.sa_mask, faults[i]);
	if (REAL(sigaction)(agent_config.signal, &sa, NULL) < 0) {
		strcpy(error, "cannot install the sampling signal's handler");
		return -1;
	}
	/* Probe the precise source once; every thread then uses the same one (in wall mode, until its sampler
	 * thread starts: background.c). */
	int fd = requested_source == TRANSPORT_SOURCE_TIMER ? -1 : source_perf_open(agent_config.interval_ns, 0);
	if (fd < 0 && requested_source == TRANSPORT_SOURCE_PERF && !agent_config.wall) {
		strcpy(error, "perf_event_open refused a task-clock event "
				       "(see /proc/sys/kernel/perf_event_paranoid)");
		return -1;
	}
	struct stat opened;
	if (fd >= 0 && fstat(fd, &opened) == 0)
		source_perf_close(fd, &opened, 0);
	agent_config.source = fd >= 0 ? TRANSPORT_SOURCE_PERF : TRANSPORT_SOURCE_TIMER;
	if (h->pid == (uint32_t)getpid()) {
		h->source = agent_config.source;
		h->signal = (uint32_t)agent_config.signal;
	}
	return 0;
}
