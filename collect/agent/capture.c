/*
 * capture.c - one backtrace of the calling thread, as a stack id: the one
 * function every kind of record calls (the sampling handler and the
 * allocation hooks), so unwinding, trimming and deduplication are done one
 * way.
 *
 * Unwinding is frametab.c's walk over the frame tables built from every
 * object's .eh_frame when it was mapped: a binary search per frame and two
 * reads of the thread's own stack, no lock, no system call, no allocation.
 * From a signal handler it starts at the interrupted context (its pc is
 * exact); elsewhere at a pc inside capture_stack, so the agent's frames come
 * first and are dropped (the hooks', however the compiler inlined them, or
 * the caller's count). The walk reads only the thread's stack, as
 * pthread_getattr_np gave it at the thread's start (the initial thread's:
 * below _start's sp), see capture_warm_up.
 *
 * Whatever the tables cannot say (a pc outside them, a frame whose rule is a
 * DWARF expression or in another register, a stack it does not know: a
 * thread the agent did not start, an alternate signal stack) is unwound by
 * libunwind instead, from the start, so every stack is either the tables'
 * or libunwind's, and the two agree wherever both answer (unit_frametab
 * compares them): in a handler, libunwind's cursor stepped from the
 * interrupted registers; in a hook, unw_backtrace, whose trace cache is set
 * up on a thread's first call (a pthread_once, a key, a pthread_setspecific
 * that may allocate, 256 KiB of buckets: nothing a handler may do). A build
 * configured -DIPSCOPE_FRAMETAB_STATS=ON prints at exit how many stacks
 * libunwind unwound (few: samples before their block's rows were built, and
 * PLT stubs); how often, and what a walk costs beside libunwind's, is in
 * bench/README.md. The rows of 16 KiB of a module's
 * text are built when a walk first meets them (frametab.c, by the agent's
 * thread, which that walk wakes, for every frame of the stack libunwind
 * took instead), or the whole module at once when allocations are
 * recorded: modules.c. A hook's walk whose frames are all those of a recent
 * walk (frametab_unwind's token) takes the id stacks.c remembered for that
 * token: no hash, no probe, no compare of frames. libunwind's fast path
 * walks a trace cache of frame descriptions; on a miss it takes its lock
 * and the loader's, so no libunwind unwind starts while a fork is
 * under way (unwind_gate.c): a lock taken in another thread at that moment would
 * stay taken in the child. The table walk takes no lock and needs no such
 * guard. A thread whose TLS is another's (a raw clone()) never unwinds
 * itself (foreign.c unwinds it from the agent's thread).
 */
#include "unwinding.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "frametab.h"
#include "trace.h"

/* What the calling thread's walks read besides its stack (capture_warm_up sets it up). */
static AGENT_TLS __thread struct capture_thread {
	uint64_t stack_lo, stack_hi; /* the thread's stack; 0: unknown, libunwind unwinds */
	uint64_t stack_size; /* what its creator asked for (capture_stack_size); 0: unknown */
	struct frametab_cache *frame_cache; /* the rows its walks looked up (frametab_chain.c) */
} capture_self;

#ifdef IPSCOPE_FRAMETAB_STATS
#include <stdio.h>
/* Counts for a measuring build only: walks, and fallbacks by reason (enum frametab_stop, negated). */
static _Atomic uint64_t walks, fallbacks[6];

__attribute__((destructor)) static void print_stats(void)
{
	uint32_t tables, blocks;
	uint64_t rows;
	frametab_stats(&tables, &rows, &blocks);
	char line[256];
	int n = snprintf(line, sizeof line,
			 "frametab[%d]: %u tables, %llu rows, %u blocks; %llu walks, fallbacks: no-table %llu unmodelled %llu "
			 "bad-stack %llu changed %llu unbuilt %llu no-bounds %llu\n",
			 (int)getpid(), tables, (unsigned long long)rows, blocks, (unsigned long long)walks,
			 (unsigned long long)fallbacks[1], (unsigned long long)fallbacks[2],
			 (unsigned long long)fallbacks[3], (unsigned long long)fallbacks[4],
			 (unsigned long long)fallbacks[5], (unsigned long long)fallbacks[0]);
	if (n > 0)
		(void)!write(2, line, (size_t)n);
}
#define COUNT(x) atomic_fetch_add_explicit(&(x), 1, memory_order_relaxed)
#else
#define COUNT(x) ((void)0)
#endif

extern void *__libc_stack_end; /* ld.so's: the initial thread's sp at _start */

void capture_warm_up(void)
{
	capture_self.stack_lo = capture_self.stack_hi = 0;
	sigset_t old;
	agent_internal_begin(&old); /* pthread_getattr_np allocates */
	if ((pid_t)agent_gettid() == getpid()) {
		/* The initial thread: its frames are all below _start's sp (pthread_getattr_np would read
		 * /proc/self/maps through a descriptor of its own to say more). */
		struct rlimit rl;
		uint64_t size = getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur < (1ull << 32) ? rl.rlim_cur : 1ull << 32;
		capture_self.stack_hi = (uint64_t)(uintptr_t)__libc_stack_end;
		capture_self.stack_lo = capture_self.stack_hi > size ? capture_self.stack_hi - size : 0;
	} else if (capture_self.stack_size) {
		/* Started by pthread_create, whose wrapper said how large its stack is. Not pthread_getattr_np:
		 * it allocates (an affinity mask), and a thread's first allocation gives it a malloc arena of
		 * its own, 64 MiB of address space a thread that never allocates does not have (under ulimit
		 * -v a program made 12 threads instead of 48). glibc puts the thread's descriptor, where its
		 * thread pointer (pthread_self) points, at the top of the stack's mapping: the stack lies
		 * below it, at most its size (walks read upward from sp only, so a low end below the
		 * mapping is never read). */
		capture_self.stack_hi = (uint64_t)(uintptr_t)pthread_self();
		capture_self.stack_lo =
			capture_self.stack_hi > capture_self.stack_size ? capture_self.stack_hi - capture_self.stack_size : 0;
	} else {
		pthread_attr_t attr;
		void *addr;
		size_t size;
		if (pthread_getattr_np(pthread_self(), &attr) == 0) {
			if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
				capture_self.stack_lo = (uint64_t)(uintptr_t)addr;
				capture_self.stack_hi = (uint64_t)(uintptr_t)addr + size;
			}
			pthread_attr_destroy(&attr);
		}
	}
	if (!capture_self.frame_cache)
		capture_self.frame_cache = frametab_cache_new(); /* a fork child keeps its copy */
	agent_internal_end(&old);
	/* libunwind's one-time setup (tdep_init: its tables, under a lock held with every signal blocked)
	 * happens on the first unwind of the process, done here outside a handler by a cursor on the
	 * initial thread, without walking. No walk: a 64-frame unw_backtrace here (its trace cache's set-up)
	 * was 0.8 ms of every process's start (bench/process-churn) and, when every thread did it, most of
	 * a short thread's cost (29% of 500 threads of 1.5 ms: bench/thread-churn). */
	if ((pid_t)agent_gettid() == getpid()) {
		unw_context_t context;
		unw_cursor_t cursor;
		if (unw_getcontext(&context) == 0)
			(void)unw_init_local(&cursor, &context);
	}
}

uint32_t capture_unwind_regs(const gregset_t regs, uint64_t *ips, uint32_t max, int *truncated)
{
	ucontext_t uc;
	memset(&uc, 0, sizeof uc);
	memcpy(uc.uc_mcontext.gregs, regs, sizeof uc.uc_mcontext.gregs);
	unw_cursor_t cursor;
	uint32_t n = 0;
	*truncated = 0;
	if (unw_init_local2(&cursor, &uc, UNW_INIT_SIGNAL_FRAME) < 0)
		return 0;
	for (;;) {
		unw_word_t ip;
		if (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0 || !ip)
			break;
		if (n == max) {
			*truncated = 1;
			break;
		}
		ips[n++] = ip;
		if (unw_step(&cursor) <= 0)
			break;
	}
	return n;
}

/* libunwind's stack, as capture_stack took it before the tables (the fallback); -1: a fork is under way. */
static int unwind_libunwind(uint64_t *ips, uint32_t cap, const ucontext_t *uc, uint32_t skip, int *first)
{
	/* A fork in progress: libunwind's lock must not be held across it. A hook (not a signal
	 * handler) waits for it to end, so another thread's allocations during a fork keep their stacks. */
	if (unwind_gate_enter() < 0 && (uc || unwind_gate_wait() < 0))
		return -1;
	if (uc) {
		/* A handler: libunwind's cursor from the interrupted registers, step by step (no trace cache). */
		int truncated;
		int n = (int)capture_unwind_regs(uc->uc_mcontext.gregs, ips, cap, &truncated);
		unwind_gate_leave();
		*first = 0;
		if (n == 0) {
			/* No unwind info where it stopped: keep the pc alone. */
			ips[0] = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
			n = 1;
		}
		return n;
	}
	int n = unw_backtrace((void **)ips, (int)cap);
	unwind_gate_leave();
	*first = skip == CAPTURE_SKIP_AGENT ? -1 : n < (int)(1 + skip) ? n : (int)(1 + skip);
	return n;
}

void capture_stack_size(size_t size)
{
	capture_self.stack_size = size;
}

int capture_stack_has_room(uint64_t room)
{
	uint64_t sp = (uint64_t)(uintptr_t)__builtin_frame_address(0);
	return capture_self.stack_hi && sp <= capture_self.stack_hi && sp >= capture_self.stack_lo + room;
}

void capture_thread_end(void)
{
	own_stack_thread_end();
	struct frametab_cache *cache = capture_self.frame_cache;
	capture_self.stack_lo = capture_self.stack_hi = 0;
	capture_self.frame_cache = NULL; /* before it is unmapped: no walk may find it after */
	atomic_signal_fence(memory_order_seq_cst);
	frametab_cache_free(cache);
}

uint32_t capture_stack(uint32_t ring, const ucontext_t *uc, uint32_t skip)
{
	uint32_t max = agent_config.max_frames; /* collect keeps it <= 1024 */
	/* frames of the agent (and caller) to find or drop */
	uint32_t lead = uc ? 1 : skip == CAPTURE_SKIP_AGENT ? 8 : 1 + skip;
	uint64_t ips[max + lead];
	int n = -1, first = -1;
	uint64_t token = 0; /* the walk's: equal to the last walk's, equal frames (a hook's only: its first is the scan's) */
	if (capture_self.stack_hi) {
		uint64_t pc, sp, bp;
		if (uc) {
			pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
			sp = (uint64_t)uc->uc_mcontext.gregs[REG_RSP];
			bp = (uint64_t)uc->uc_mcontext.gregs[REG_RBP];
		} else {
			/* Here, as libunwind's getcontext takes it: pc exact, sp and bp as they are at it. */
			__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
					 : "=r"(pc), "=r"(sp), "=r"(bp));
		}
		n = frametab_unwind(pc, sp, bp, capture_self.stack_lo, capture_self.stack_hi, ips,
				    uc ? max + 1 : max + lead, capture_self.frame_cache,
				    !uc && skip == CAPTURE_SKIP_AGENT ? &token : NULL);
		COUNT(walks);
		if (n < 0)
			COUNT(fallbacks[-n]);
		first = uc ? 0 : skip == CAPTURE_SKIP_AGENT ? -1 : (int)(1 + skip);
		if (n >= 0 && first > n)
			first = n;
	} else {
		COUNT(walks);
		COUNT(fallbacks[0]);
	}
	if (n < 0) {
		int walked = n;
		if ((n = unwind_libunwind(ips, max + lead, uc, skip, &first)) < 0) {
			/* libunwind declines during a fork: the rows this walk asked for must still be built,
			 * or every later sample there is lost too (a shell forking 300 children lost 9 of 11). */
			if (walked == FRAMETAB_UNBUILT)
				agent_wake_background();
			return UINT32_MAX;
		}
		/* Rows not built where the walk stopped: all this stack's frames are asked for, so the next
		 * walk through them need not decline; the agent's thread builds them (modules_build_tables). */
		int from = first < 0 ? 0 : first < n ? first : n;
		if ((walked == FRAMETAB_UNBUILT || walked == FRAMETAB_NO_TABLE) &&
		    (frametab_want(ips + from, (uint32_t)(n - from)) || walked == FRAMETAB_UNBUILT))
			agent_wake_background();
	}
	uint32_t flags = uc ? TRACE_STACK_LEAF_EXACT : 0, nframes;
	if (token) {
		/* An earlier walk gave these frames: its stack's id, if a hook's capture remembered it. */
		uint32_t id = stack_table_recall(agent_self.stacks, token);
		if (id != UINT32_MAX)
			return id;
	}
	if (first < 0) {
		/* The hooks' frames, however the compiler inlined them. */
		first = 0;
		while (first < n && agent_own_text(ips[first]))
			first++;
	}
	uint64_t *frames = ips + first;
	nframes = (uint32_t)(n - first);
	if (nframes > max) {
		nframes = max;
		flags |= TRACE_STACK_TRUNCATED;
	}
	uint32_t id = stack_table_id(&agent_self.stacks, ring, frames, nframes, flags);
	if (token)
		stack_table_remember(agent_self.stacks, token, id);
	return id;
}
