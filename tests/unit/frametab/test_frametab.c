/*
 * test_frametab.c - unit_frametab: the agent's table walk (collect/agent/frametab.c) against
 * libunwind's unw_backtrace (what the agent used alone before, and still falls back to) on the
 * same contexts, in this process: deep -O2 recursion without frame pointers, -O0 recursion, a C++
 * std::sort comparator, libc's qsort calling back through its PLT, from a signal handler's
 * interrupted context and from inside the handler (through the kernel's __restore_rt), and from
 * thousands of interrupted pcs a CPU-time timer picks (prologues, epilogues, PLT stubs, libc).
 * Where the walk answers, its stack must be libunwind's, frame for frame; where it declines, the
 * agent asks libunwind, so declining is allowed but must stay rare (checked too). The walk follows
 * the thread's recent walks (frametab_chain.c) where its stack is theirs: the same stack twice (the
 * same token), two callers of equal frame sizes into one leaf (equal CFAs all the way, a return
 * address apart deeper down: other frames, another token), and the same stack after a rescan
 * (another token) must each be libunwind's too.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "../check.h"
#include "frametab.h"
#include "frametab_internal.h"
#include "frametab_shared.h"

#define CAP 1024

static uint64_t stack_lo, stack_hi;
static struct frametab_cache *cache; /* one, as a thread of the agent has: the handlers' walks find it busy or not */
static int compared, answered;

static void print_stack(const char *name, const uint64_t *ips, int n)
{
	fprintf(stderr, "  %s (%d):", name, n);
	for (int i = 0; i < n && i < 40; i++)
		fprintf(stderr, " %llx", (unsigned long long)ips[i]);
	fputc('\n', stderr);
}

/* ours[0..n) against theirs[0..m): equal, or explain. */
static void check_equal(const char *what, const uint64_t *ours, int n, const uint64_t *theirs, int m)
{
	compared++;
	int same = n == m && memcmp(ours, theirs, (size_t)n * sizeof *ours) == 0;
	CHECKF(same, "%s: the table walk and libunwind differ", what);
	if (!same) {
		print_stack("tables", ours, n);
		print_stack("libunwind", theirs, m);
	}
}

__attribute__((noinline)) void compare_here(const char *what)
{
	uint64_t pc, sp, bp, ours[CAP];
	void *theirs[CAP];
	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2" : "=r"(pc), "=r"(sp), "=r"(bp));
	int n = frametab_unwind(pc, sp, bp, stack_lo, stack_hi, ours, CAP, cache, NULL);
	int m = unw_backtrace(theirs, CAP);
	CHECKF(n > 1, "%s: the table walk declined (%d)", what, n);
	CHECKF(m > 1, "%s: libunwind found no stack", what);
	if (n > 1 && m > 1) {
		answered++;
		/* ours[0] is a pc in here, theirs[0] the return into here: the callers must be the same */
		check_equal(what, ours + 1, n - 1, (const uint64_t *)theirs + 1, m - 1);
	}
}

/* The walk from the caller's frame with its token, compared with libunwind; its frames into ips. */
__attribute__((noinline)) static int compare_token(const char *what, uint64_t *token, uint64_t *ips)
{
	uint64_t pc, sp, bp;
	void *theirs[CAP];
	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2" : "=r"(pc), "=r"(sp), "=r"(bp));
	int n = frametab_unwind(pc, sp, bp, stack_lo, stack_hi, ips, CAP, cache, token);
	int m = unw_backtrace(theirs, CAP);
	CHECKF(n > 1 && *token, "%s: the table walk declined (%d) or gave no token", what, n);
	if (n > 1 && m > 1) {
		answered++;
		check_equal(what, ips + 1, n - 1, (const uint64_t *)theirs + 1, m - 1);
	}
	return n;
}

/* ---- the chains ---- */

static volatile int sink;
static uint64_t leaf_token[2], leaf_ips[2][CAP];
static int leaf_n[2];

__attribute__((noinline, noipa)) static int chain_leaf(int which)
{
	leaf_n[which] = compare_token(which ? "the leaf by the second caller" : "the leaf by the first caller",
				      &leaf_token[which], leaf_ips[which]);
	return leaf_n[which];
}

__attribute__((noinline, noipa)) static int chain_mid(int which)
{
	int r = chain_leaf(which);
	sink += r;
	return r + 1;
}

/* Two callers alike but for a constant: equal frame sizes, so every CFA of the leaf's walk is the
 * same from either, and only the return address into each differs. */
#define EQUAL_CALLER(name, k)                                                                                  \
	__attribute__((noinline, noipa)) static int name(int which)                                            \
	{                                                                                                      \
		volatile int pad[6] = { k, k, k, k, k, k };                                                    \
		int r = chain_mid(which);                                                                      \
		sink += pad[which];                                                                            \
		return r + k;                                                                                  \
	}
EQUAL_CALLER(caller_one, 1)
EQUAL_CALLER(caller_two, 2)

/* A level further out, alike too: four stacks with one first state, two by two a frame apart. */
static int (*volatile callers[2])(int) = { caller_one, caller_two };
#define EQUAL_OUTER(name, k)                                                                                   \
	__attribute__((noinline, noipa)) static int name(int which, int caller)                                \
	{                                                                                                      \
		volatile int pad[6] = { k, k, k, k, k, k };                                                    \
		int r = callers[caller](which);                                                                \
		sink += pad[which];                                                                            \
		return r + k;                                                                                  \
	}
EQUAL_OUTER(outer_one, 1)
EQUAL_OUTER(outer_two, 2)
static int (*volatile outers[2])(int, int) = { outer_one, outer_two };

/* One call site (a loop the compiler cannot unroll), so one sp at each call: the frames of both walks
 * are the same. */
static volatile int twice = 2;
__attribute__((noinline, noipa)) static void same_twice(uint64_t tokens[2], uint64_t ips[2][CAP], int n[2],
							 int rescan)
{
	for (int i = 0; i < twice; i++) {
		n[i] = compare_token(rescan ? "the same stack after a rescan" : "the same stack again", &tokens[i],
				     ips[i]);
		if (rescan)
			frametab_rescan(dl_iterate_phdr, 1);
	}
}

static void check_chains(void)
{
	static uint64_t ips[2][CAP];
	uint64_t tokens[2];
	int n[2];
	same_twice(tokens, ips, n, 0);
	CHECKF(n[0] == n[1] && memcmp(ips[0], ips[1], (size_t)n[0] * sizeof **ips) == 0, "the same stack twice differs");
	CHECKF(tokens[0] == tokens[1], "the same stack twice: tokens %llu, %llu", (unsigned long long)tokens[0],
	       (unsigned long long)tokens[1]);

	/* The leaf by one caller, by the other, by the first again...: each walk follows the last one's chain
	 * (equal sps, so the chain of its slot) until the return address that differs. */
	for (int round = 0; round < 6; round++) {
		int which = round & 1; /* from one call site, so from equal sps */
		callers[which](which);
		if (!which)
			continue;
		CHECKF(leaf_n[0] == leaf_n[1], "the two callers' stacks have %d and %d frames", leaf_n[0], leaf_n[1]);
		int differ = 0;
		for (int i = 0; i < leaf_n[0] && i < leaf_n[1]; i++)
			differ += leaf_ips[0][i] != leaf_ips[1][i];
		CHECKF(differ == 1, "the two callers' stacks differ in %d frames, not in one", differ);
		CHECKF(leaf_token[0] != leaf_token[1], "the two callers' stacks share a token");
	}

	/* The four stacks by the two levels, in an order where a walk follows the chain of another stack past
	 * the frame where a third one, the slot's other chain, parted from it: each is libunwind's, and two
	 * stacks never share a token. */
	static const int order[] = { 1, 0, 2, 3, 1, 2, 0, 3, 3, 1, 1, 2, 0, 0, 3, 2 }; /* outer * 2 + caller */
	uint64_t seen[4][16];
	int nseen[4] = { 0 };
	for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
		outers[order[i] >> 1](0, order[i] & 1);
		seen[order[i]][nseen[order[i]]++] = leaf_token[0];
	}
	for (int a = 0; a < 4; a++)
		for (int b = a + 1; b < 4; b++)
			for (int i = 0; i < nseen[a]; i++)
				for (int k = 0; k < nseen[b]; k++)
					CHECKF(seen[a][i] != seen[b][k], "stacks %d and %d share token %llu", a, b,
					       (unsigned long long)seen[a][i]);

	/* A rescan empties the chains: the same stack again is walked anew, under another token. */
	same_twice(tokens, ips, n, 1);
	CHECKF(n[0] == n[1] && memcmp(ips[0], ips[1], (size_t)n[0] * sizeof **ips) == 0, "the same stack differs");
	CHECKF(tokens[0] != tokens[1], "the same stack before and after a rescan: token %llu",
	       (unsigned long long)tokens[0]);
}

/* ---- the contexts ---- */

__attribute__((noinline)) static int o2_recurse(int depth, void (*at_bottom)(void))
{
	if (depth == 0) {
		at_bottom();
		return 0;
	}
	int r = o2_recurse(depth - 1, at_bottom);
	sink += r & 1; /* no tail call */
	return (r + depth) & 0xffff;
}

static void bottom_compare(void)
{
	compare_here("-O2 recursion, 300 frames");
}

/* A call that ends its function: the return address is the next function's first byte (or padding),
 * so only a lookup at return address - 1 finds the caller's rule. */
static jmp_buf back;
__attribute__((noreturn, noinline)) static void compare_then_jump(void)
{
	compare_here("a noreturn call ending its function");
	longjmp(back, 1);
}

__attribute__((noinline)) static void ends_in_noreturn_call(int x)
{
	if (x)
		sink++;
	compare_then_jump();
}

static int qsort_calls;
static int by_value(const void *a, const void *b)
{
	if (qsort_calls++ == 10)
		compare_here("qsort (libc through the PLT) calling back");
	return *(const int *)a - *(const int *)b;
}

/* In a signal handler: from the interrupted context, and from here through __restore_rt. */
static void compare_context(const char *what, const ucontext_t *uc, int require)
{
	uint64_t ours[CAP];
	void *theirs[CAP];
	uint64_t pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	int n = frametab_unwind(pc, (uint64_t)uc->uc_mcontext.gregs[REG_RSP], (uint64_t)uc->uc_mcontext.gregs[REG_RBP],
				stack_lo, stack_hi, ours, CAP, cache, NULL);
	int m = unw_backtrace(theirs, CAP);
	int first = -1;
	for (int i = 0; i < m && i < 8; i++)
		if ((uint64_t)theirs[i] == pc) {
			first = i;
			break;
		}
	if (require)
		CHECKF(n > 0, "%s: the table walk declined (%d)", what, n);
	if (n > 0)
		answered++;
	if (n > 0 && first >= 0)
		check_equal(what, ours, n, (const uint64_t *)theirs + first, m - first);
}

static int in_handler_done;
static void on_usr1(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)si;
	compare_context("a signal's interrupted context", ctx, 1);
	compare_here("inside a signal handler, through __restore_rt");
	in_handler_done = 1;
}

static void bottom_raise(void)
{
	raise(SIGUSR1);
}

/* ---- sampling: many interrupted pcs ---- */

static int samples, declined[6];
static uint64_t declined_pc[6][4]; /* the first few, to name in a failure */
static void on_prof(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)si;
	const ucontext_t *uc = ctx;
	uint64_t ours[CAP];
	int n = frametab_unwind((uint64_t)uc->uc_mcontext.gregs[REG_RIP], (uint64_t)uc->uc_mcontext.gregs[REG_RSP],
				(uint64_t)uc->uc_mcontext.gregs[REG_RBP], stack_lo, stack_hi, ours, CAP, cache, NULL);
	samples++;
	if (n < 0 && -n < 6 && declined[-n]++ < 4)
		declined_pc[-n][declined[-n] - 1] = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	if (n > 0)
		compare_context("a sampled pc", uc, 0);
}

__attribute__((noinline)) static long o2_spin(long n)
{
	unsigned long s = 0;
	char buf[32];
	unsigned seed = 1;
	for (long i = 0; i < n; i++) {
		s += (unsigned long)rand_r(&seed) & 7; /* through the PLT */
		snprintf(buf, sizeof buf, "%ld", i & 1023);
		s += (unsigned long)buf[0];
	}
	return (long)(s >> 1);
}

static pthread_t target;
static atomic_int stop;
static void *signal_often(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		pthread_kill(target, SIGPROF);
		struct timespec ts = { 0, 20000 };
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static void bottom_spin(void)
{
	unsigned long s = 0;
	for (int round = 0; round < 400; round++) {
		s += (unsigned long)o2_spin(2000);
		s += (unsigned long)o0_spin(20000);
		s += (unsigned long)cxx_spin(20000);
	}
	sink += (int)(s & 0xffff);
}

/* ---- a block's rows are the whole object's, there ---- */

static uint64_t block_pcs, block_objects;

static int same_row(const struct row *a, const struct row *b)
{
	if (!a || !b) /* none: as a gap (ROW_NONE) */
		return (a ? a->kind : ROW_NONE) == (b ? b->kind : ROW_NONE);
	return a->kind == b->kind && a->cfa_off == b->cfa_off && a->rbp_off == b->rbp_off;
}

/* Every object's text, in blocks of each size, against its whole table: at every pc, the same row. */
static int compare_blocks(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	struct object o;
	if (frametab_find_object(info, 0, &o) < 0 || !o.text_hi)
		return 0;
	const struct rows *whole = frametab_build_rows(&o);
	if (!whole)
		return 0;
	block_objects++;
	static const uint64_t sizes[] = { 16384, 4093 };
	for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
		uint64_t step = s ? 3 : 1; /* every pc once; then odd block edges, every third pc */
		for (uint64_t lo = o.text_lo; lo < o.text_hi; lo += sizes[s]) {
			uint64_t hi = lo + sizes[s] < o.text_hi ? lo + sizes[s] : o.text_hi;
			const struct rows *block = frametab_build_block(&o, lo, hi);
			int differ = 0;
			for (uint64_t pc = lo; pc < hi && !differ; pc += step) {
				const struct row *a = frametab_row_of(whole, pc), *b = block ? frametab_row_of(block, pc) : NULL;
				block_pcs++;
				if (!same_row(a, b)) {
					differ = 1;
					CHECKF(0, "%s: the block [%llx, %llx) says kind %d at %llx, the whole table %d",
					       info->dlpi_name[0] ? info->dlpi_name : "(main)", (unsigned long long)lo,
					       (unsigned long long)hi, b ? b->kind : ROW_NONE, (unsigned long long)pc,
					       a ? a->kind : ROW_NONE);
				}
			}
		}
	}
	return 0;
}

int main(void)
{
	pthread_attr_t attr;
	void *addr;
	size_t size;
	CHECK(pthread_getattr_np(pthread_self(), &attr) == 0);
	CHECK(pthread_attr_getstack(&attr, &addr, &size) == 0);
	pthread_attr_destroy(&attr);
	stack_lo = (uint64_t)(uintptr_t)addr;
	stack_hi = stack_lo + size;

	/* Published unbuilt: the first walk declines and asks for rows, which are built outside it. */
	frametab_rescan(dl_iterate_phdr, 0);
	cache = frametab_cache_new();
	CHECK(cache != NULL);
	uint32_t tables, blocks;
	uint64_t rows;
	frametab_stats(&tables, &rows, &blocks);
	CHECKF(tables == 0 && !frametab_wanted(), "%u tables built before any walk", tables);
	uint64_t ips[4];
	CHECK(frametab_unwind((uint64_t)(uintptr_t)main, stack_hi - 4096, 0, stack_lo, stack_hi, ips, 4, cache, NULL) ==
	      FRAMETAB_UNBUILT);
	CHECK(frametab_wanted());
	CHECK(frametab_unwind((uint64_t)(uintptr_t)main, stack_hi - 4096, 0, stack_lo, stack_hi, ips, 4, cache, NULL) ==
	      FRAMETAB_NO_TABLE); /* asked already */
	frametab_build_wanted(dl_iterate_phdr);
	frametab_stats(&tables, &rows, &blocks);
	CHECKF(tables == 1 && !frametab_wanted(), "%u tables built for the one object walked", tables);
	CHECKF(blocks == 1, "%u blocks built for the one pc walked", blocks);
	/* What the walk asked for from libunwind's stack: the blocks of main's callers too (libc's). */
	uint64_t stack[2] = { (uint64_t)(uintptr_t)main, (uint64_t)(uintptr_t)qsort + 1 };
	CHECK(frametab_want(stack, 2) == 1);
	CHECK(frametab_want(stack, 2) == 0); /* asked already */
	frametab_build_wanted(dl_iterate_phdr);
	frametab_stats(&tables, &rows, &blocks);
	CHECKF(tables == 2 && blocks == 2 && !frametab_wanted(), "%u tables, %u blocks built for two pcs", tables,
	       blocks);
	dl_iterate_phdr(compare_blocks, NULL);
	fprintf(stderr, "unit_frametab: blocks of %llu objects agree with their whole tables at %llu pcs\n",
		(unsigned long long)block_objects, (unsigned long long)block_pcs);
	CHECKF(block_objects >= 3, "%llu objects compared by block", (unsigned long long)block_objects);
	frametab_rescan(dl_iterate_phdr, 1);
	frametab_stats(&tables, &rows, &blocks);
	CHECKF(tables >= 3 && rows > 1000, "%u tables, %llu rows", tables, (unsigned long long)rows);

	unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_GLOBAL);
	compare_here("main");
	check_chains();
	o2_recurse(300, bottom_compare);
	o0_recurse(200);
	cxx_sort_and_compare();
	int values[64];
	for (int i = 0; i < 64; i++)
		values[i] = (i * 29) % 64;
	qsort(values, 64, sizeof *values, by_value);
	if (!setjmp(back))
		ends_in_noreturn_call(1);

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_usr1;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGUSR1, &sa, NULL);
	o2_recurse(50, bottom_raise);
	CHECK(in_handler_done);

	/* A walk must decline, not crash, on a stack it was not given. */
	CHECK(frametab_unwind((uint64_t)(uintptr_t)main, stack_hi + 4096, 0, stack_lo, stack_hi, ips, 4, cache, NULL) ==
	      FRAMETAB_BAD_STACK);

	sa.sa_sigaction = on_prof;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGPROF, &sa, NULL);
	/* A thread signals this one every 20 us (a CPU-time timer ticks at 4 ms here). */
	pthread_t sampler;
	target = pthread_self();
	CHECK(pthread_create(&sampler, NULL, signal_often, NULL) == 0);
	o2_recurse(20, bottom_spin);
	atomic_store(&stop, 1);
	pthread_join(sampler, NULL);
	for (int r = 1; r < 6; r++)
		for (int i = 0; i < declined[r] && i < 4; i++) {
			Dl_info info;
			const char *name = dladdr((void *)(uintptr_t)declined_pc[r][i], &info) && info.dli_sname ? info.dli_sname : "?";
			fprintf(stderr, "  declined (%d) at %llx %s\n", -r, (unsigned long long)declined_pc[r][i], name);
		}

	int fell_back = declined[1] + declined[2] + declined[3] + declined[4] + declined[5];
	fprintf(stderr, "unit_frametab: %d stacks compared; %d samples, declined: no table %d, unmodelled %d, "
			"bad stack %d, changed %d\n",
		compared, samples, declined[1], declined[2], declined[3], declined[4]);
	CHECKF(samples >= 100, "%d samples", samples);
	CHECKF(fell_back * 20 <= samples, "the walk declined %d of %d samples", fell_back, samples);
	CHECKF(compared >= 100, "%d stacks compared", compared);
	return check_failures ? 1 : 0;
}
