/*
 * test_alloc_choice - which allocations a sampled scheme chooses
 * (collect/agent/alloc_choice.h): its arithmetic, then the same thread's
 * countdown and random stream used by a main loop and by a signal handler
 * that a timer fires every 25 us, as a program's handler that allocates
 * interrupts a hook. Checked: no random number is handed out twice; every
 * stored countdown is above 0; the main loop's decisions come out at their
 * scheme's probability (within 5 standard deviations), for RATE 1/8 and for
 * bytes (mean 64, blocks of 8 and 24 bytes: 1 - exp(-s/64)). The handler's
 * fractions under the timer are printed, not checked: where its signal
 * lands is not independent of the countdown (measured, the countdowns found
 * in the few instructions after an unchosen take were not geometric, 1 and
 * 2 over-represented at -O2 and -O3; in Release builds a handler's decision
 * there came out at 0.37-0.41 for bytes where 0.31 is right, for this logic
 * and the old alike, and its overall fraction at 0.131 for 1/8). They are
 * checked exactly instead, with a handler's decision injected without a
 * timer just after every take of the main loop (the old logic: between its
 * read and its write), a million times for each scheme: overall, inside a
 * chosen decision and inside an unchosen one.
 *
 * `unit_alloc_choice old` runs the same checks on the agent's logic before
 * alloc_choice.h, transcribed below (ctest expects it to fail): a handler
 * between its read and write of the xorshift state got the number the
 * interrupted call got, one between its read and write of the countdown
 * took the same decision as the allocation it interrupted, and bytes
 * truncated to whole numbers chose an s-byte block with 1 - exp(-(s+1)/N).
 */
#include "check.h"
#include "alloc_choice.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

/* The logic under test, on the one thread's state. */
struct logic {
	uint64_t (*random)(void);
	int (*decide)(int64_t step); /* the hook's fast path and, when it falls through, its slow path */
	int64_t (*countdown)(void);
};

static struct choice_scheme scheme;
/* Called, when set, where a handler can interrupt a decision: after the take (or, in the old logic,
 * between its read and its write of the countdown): a handler's decision injected there. */
static void (*interrupt)(void);

static int64_t new_countdown;
static struct choice_stream new_stream;
static uint64_t new_random(void)
{
	return choice_random(&new_stream);
}
static int new_decide(int64_t step)
{
	int64_t before = choice_take(&new_countdown, step);
	if (interrupt)
		interrupt();
	if (before > step)
		return 0;
	return choice_decide(&new_countdown, before, step, &scheme, &new_stream);
}
static int64_t new_read(void)
{
	return __atomic_load_n(&new_countdown, __ATOMIC_RELAXED);
}
static const struct logic new_logic = { new_random, new_decide, new_read };

/* alloc_record.c's next_random, draw_countdown, chosen and agent.h's alloc_seen before alloc_choice.h
 * (volatile: each read and write once, as the agent's code through agent_self did). */
static volatile uint64_t old_prng = 0x9e3779b97f4a7c15ull;
static volatile int64_t old_countdown;
static uint64_t old_random(void)
{
	uint64_t x = old_prng;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	old_prng = x;
	return x;
}
static int64_t old_draw(void)
{
	double u = ((double)(old_random() >> 11) + 0.5) * (1.0 / 9007199254740992.0);
	double n = scheme.by_bytes ? -log(u) * scheme.mean_bytes : ceil(log(u) / scheme.log_keep);
	return n < 1 ? 1 : n > 9e18 ? (int64_t)9e18 : (int64_t)n;
}
static int old_decide(int64_t step)
{
	int64_t c = old_countdown;
	if (interrupt)
		interrupt();
	if (c > step) {
		old_countdown = c - step;
		return 0;
	}
	int64_t left = old_countdown;
	if (left == 0)
		left = old_draw();
	left -= step;
	old_countdown = left > 0 ? left : old_draw();
	return left <= 0;
}
static int64_t old_read(void)
{
	return old_countdown;
}
static const struct logic old_logic = { old_random, old_decide, old_read };

/* ---- the harness: a main loop and a handler on one thread ---- */

#define MAIN_NUMBERS (1u << 23)
#define HANDLER_NUMBERS (1u << 20)
#define HANDLER_CALLS 4
#define SIGNALS_WANTED 20000
#define TIMER_US 25

static const struct logic *logic;
static volatile sig_atomic_t phase; /* 0: idle, 1: random numbers, 2: decisions */
static volatile uint64_t signals;
static uint64_t *main_numbers, *handler_numbers;
static volatile size_t handler_n;
static int64_t handler_step;
static volatile uint64_t handler_decisions, handler_chosen;
static volatile sig_atomic_t in_main, overlapped, overlap_choice;

static void on_alarm(int sig)
{
	(void)sig;
	int saved = errno;
	signals++;
	if (phase == 1) {
		for (int i = 0; i < HANDLER_CALLS && handler_n < HANDLER_NUMBERS; i++)
			handler_numbers[handler_n++] = logic->random();
	} else if (phase == 2) {
		for (int i = 0; i < HANDLER_CALLS; i++) {
			int c = logic->decide(handler_step);
			if (i == 0 && in_main && !overlapped) {
				overlap_choice = c;
				overlapped = 1;
			}
			handler_decisions++;
			handler_chosen += (uint64_t)c;
		}
	}
	errno = saved;
}

static void arm(long us)
{
	struct itimerval it = { { 0, us }, { 0, us } };
	setitimer(ITIMER_REAL, &it, NULL);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Every number of the main loop and of the handler, sorted: how many equal their predecessor. */
static void check_numbers_unique(void)
{
	handler_n = 0;
	uint64_t before = signals;
	phase = 1;
	arm(TIMER_US);
	size_t n = 0;
	while (n < MAIN_NUMBERS)
		main_numbers[n++] = logic->random();
	arm(0);
	phase = 0;
	size_t h = handler_n, total = n + h;
	memcpy(main_numbers + n, handler_numbers, h * sizeof *handler_numbers); /* room: see main */
	qsort(main_numbers, total, sizeof *main_numbers, cmp_u64);
	size_t dup = 0;
	for (size_t i = 1; i < total; i++)
		dup += main_numbers[i] == main_numbers[i - 1];
	printf("random: %zu numbers in the loop, %zu in %llu handlers: %zu repeated\n", n, h,
	       (unsigned long long)(signals - before), dup);
	CHECKF(h > 0, "no signal arrived");
	CHECKF(dup == 0, "%zu numbers handed out twice", dup);
}

/* Print got/n beside p and 5 standard deviations of a binomial's; checked: within them. */
static void show_fraction(const char *what, uint64_t got, uint64_t n, double p, int checked)
{
	double sd = sqrt(p * (1 - p) / (double)(n ? n : 1)), f = n ? (double)got / (double)n : 0;
	printf("  %-34s %10.6f of %10llu, expected %.6f +- %.6f%s\n", what, f, (unsigned long long)n, p, 5 * sd,
	       checked ? "" : " (not checked)");
	if (checked)
		CHECKF(n > 0 && fabs(f - p) <= 5 * sd, "%s: %.6f, expected %.6f +- %.6f", what, f, p, 5 * sd);
}

/* The main loop decides with main_step, the handler with handler_step (probabilities p_main, p_handler). */
static void check_decisions(const char *name, int64_t main_step, double p_main, double p_handler)
{
	handler_decisions = handler_chosen = 0;
	uint64_t main_n = 0, main_chosen = 0, pairs[2][2] = { { 0, 0 }, { 0, 0 } }, not_positive = 0;
	uint64_t before = signals;
	double deadline = now_s() + 20;
	phase = 2;
	arm(TIMER_US);
	while (signals - before < SIGNALS_WANTED) {
		for (int i = 0; i < 4096; i++) {
			overlapped = 0;
			in_main = 1;
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			int c = logic->decide(main_step);
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			in_main = 0;
			main_n++;
			main_chosen += (uint64_t)c;
			if (overlapped)
				pairs[c][overlap_choice]++;
			not_positive += logic->countdown() <= 0;
		}
		if (now_s() > deadline)
			break;
	}
	arm(0);
	phase = 0;
	printf("%s: %llu signals\n", name, (unsigned long long)(signals - before));
	CHECKF(signals - before >= SIGNALS_WANTED / 10, "%s: only %llu signals in 20 s", name,
	       (unsigned long long)(signals - before));
	CHECKF(not_positive == 0, "%s: the countdown was at or below 0 after %llu decisions", name,
	       (unsigned long long)not_positive);
	show_fraction("loop's chosen", main_chosen, main_n, p_main, 1);
	/* Where the timer's handler lands is not independent of the countdown (the header): its fractions
	 * are shown; check_injected checks them exactly. */
	show_fraction("handler's chosen", handler_chosen, handler_decisions, p_handler, 0);
	show_fraction("handler's, in a chosen one", pairs[1][1], pairs[1][0] + pairs[1][1], p_handler, 0);
	show_fraction("handler's, in an unchosen one", pairs[0][1], pairs[0][0] + pairs[0][1], p_handler, 0);
}

/* The handler's decisions, injected where a signal can land in every decision of the main loop (no
 * timer: where a timer's signal lands is not independent of the countdown, see the header). */
#define INJECTED_TRIALS 1000000
static int injected_choice;
static void inject_handler(void)
{
	interrupt = NULL; /* the handler's own decision is not interrupted */
	injected_choice = logic->decide(handler_step);
	interrupt = inject_handler;
}

static void check_injected(const char *name, int64_t main_step, double p_main, double p_handler)
{
	uint64_t pairs[2][2] = { { 0, 0 }, { 0, 0 } }, main_chosen = 0;
	interrupt = inject_handler;
	for (int i = 0; i < INJECTED_TRIALS; i++) {
		int c = logic->decide(main_step);
		main_chosen += (uint64_t)c;
		pairs[c][injected_choice]++;
	}
	interrupt = NULL;
	printf("%s, a handler's decision injected in each:\n", name);
	show_fraction("loop's chosen", main_chosen, INJECTED_TRIALS, p_main, 1);
	show_fraction("handler's chosen", pairs[0][1] + pairs[1][1], INJECTED_TRIALS, p_handler, 1);
	show_fraction("handler's, in a chosen one", pairs[1][1], pairs[1][0] + pairs[1][1], p_handler, 1);
	show_fraction("handler's, in an unchosen one", pairs[0][1], pairs[0][0] + pairs[0][1], p_handler, 1);
}

/* The arithmetic, without signals. */
static void check_arithmetic(void)
{
	CHECK(choice_step(0, 1000) == 1 && choice_step(1, 1000) == 1000);
	CHECK(choice_step(1, SIZE_MAX) == CHOICE_STEP_MAX);
	int64_t c = 5;
	CHECK(choice_take(&c, 3) == 5 && c == 2);
	CHECK(choice_take(&c, 3) == 2 && c == -1);

	scheme = (struct choice_scheme){ 0, log(1 - 0.125), 0 };
	struct choice_stream s = { 0, choice_key(100, 0x7f0000001000ull, 1) };
	/* Above 0 at the take: it ran out here, chosen, a fresh countdown. */
	c = 0;
	CHECK(choice_decide(&c, 1, 1, &scheme, &s) == 1 && c >= 1);
	/* The first allocation (0), or one inside another's choice (below 0): its own draw; never a stored 0. */
	for (int i = 0; i < 100000; i++) {
		c = -(i % 3);
		choice_decide(&c, c, 1, &scheme, &s);
		if (c < 1)
			break;
	}
	CHECK(c >= 1);
	/* A step beyond any draw: chosen, even below 0; the countdown stays far from wrapping. */
	struct choice_scheme bytes = { 1, 0, 64 };
	c = -CHOICE_STEP_MAX;
	CHECK(choice_take(&c, CHOICE_STEP_MAX) == -CHOICE_STEP_MAX && c == -2 * CHOICE_STEP_MAX);
	CHECK(choice_decide(&c, -CHOICE_STEP_MAX, CHOICE_STEP_MAX, &bytes, &s) == 1 && c >= 1);
	/* Draws: at least 1, at most CHOICE_DRAW_MAX; RATE 1 always 1. */
	struct choice_scheme all = { 0, choice_log1p(-1.0), 0 }, none = { 0, choice_log1p(-0.0), 0 }; /* as alloc_init */
	CHECK(choice_draw(&all, 0) == 1 && choice_draw(&all, UINT64_MAX) == 1);
	CHECK(choice_draw(&none, 12345) == CHOICE_DRAW_MAX);
	CHECK(choice_draw(&bytes, UINT64_MAX) == 1 && choice_draw(&bytes, 0) >= 64 * 36);
	/* The agent's own logarithms (no libm) against libm's: within 4 units in the last place, and the
	 * draws they make equal to ceil(log(u) / log(1 - RATE)) but where that lands within rounding of an
	 * integer. */
	double worst = 0;
	for (double x = 1e-300; x < 1e300; x *= 1.0009765625) {
		double err = fabs(choice_log(x) - log(x)) / fmax(fabs(log(x)), 1e-300);
		worst = fmax(worst, x == 1 ? 0 : err);
	}
	for (uint64_t r = 1; r < 2000000; r++) {
		double x = (double)choice_mix(r) * (1.0 / 18446744073709551616.0) + 1e-19;
		worst = fmax(worst, fabs(choice_log(x) - log(x)) / fabs(log(x)));
	}
	CHECK(worst < 4 * 2.220446049250313e-16);
	worst = 0;
	for (double x = -1e-18; x > -0.9999; x *= 1.001)
		worst = fmax(worst, fabs(choice_log1p(x) - log1p(x)) / fabs(log1p(x)));
	CHECK(worst < 8 * 2.220446049250313e-16);
	CHECK(choice_log1p(-0.0) == 0 && choice_log1p(-1e-300) == -1e-300 && choice_log1p(-1.0) == log1p(-1.0));
	struct choice_scheme rate = { 0, choice_log1p(-0.001), 0 };
	uint32_t differ = 0;
	for (uint64_t r = 1; r < 1000000; r++) {
		uint64_t bits = choice_mix(r);
		double u = ((double)(bits >> 11) + 0.5) * (1.0 / 9007199254740992.0);
		double exact = log(u) / log1p(-0.001);
		int64_t libm = (int64_t)ceil(exact), ours = choice_draw(&rate, bits);
		if (ours != libm) {
			differ++;
			CHECK((ours == libm + 1 || ours == libm - 1) && fabs(exact - (double)(ours < libm ? ours : libm)) < 1e-9);
		}
	}
	CHECK(differ < 10);
	/* Keys: never 0; a forked child's thread (another id) and another thread differ. */
	CHECK(choice_key(0, 0, 0) != 0);
	CHECK(choice_key(100, 0x1000, 7) != choice_key(101, 0x1000, 7));
	CHECK(choice_key(100, 0x1000, 7) != choice_key(100, 0x2000, 7));
	CHECK(choice_key(100, 0x1000, 7) != choice_key(100, 0x1000, 8));
	struct choice_stream a = { 0, choice_key(100, 0x1000, 7) }, b = { 0, choice_key(101, 0x1000, 7) };
	int same = 0;
	for (int i = 0; i < 1000; i++)
		same += choice_random(&a) == choice_random(&b);
	CHECK(same == 0 && a.count == 1000);
}

int main(int argc, char **argv)
{
	int old = argc > 1 && !strcmp(argv[1], "old");
	logic = old ? &old_logic : &new_logic;
	if (!old)
		check_arithmetic();
	new_stream.key = choice_key(1, (uint64_t)(uintptr_t)&new_stream, (uint64_t)(now_s() * 1e9));

	main_numbers = malloc((MAIN_NUMBERS + HANDLER_NUMBERS) * sizeof *main_numbers);
	handler_numbers = malloc(HANDLER_NUMBERS * sizeof *handler_numbers);
	if (!main_numbers || !handler_numbers)
		return 1;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);

	check_numbers_unique();
	scheme = (struct choice_scheme){ 0, log(1 - 0.125), 0 };
	handler_step = 1;
	check_decisions("rate 1/8", 1, 0.125, 0.125);
	check_injected("rate 1/8", 1, 0.125, 0.125);
	scheme = (struct choice_scheme){ 1, 0, 64 };
	handler_step = 24;
	check_decisions("bytes, mean 64", 8, -expm1(-8.0 / 64), -expm1(-24.0 / 64));
	check_injected("bytes, mean 64", 8, -expm1(-8.0 / 64), -expm1(-24.0 / 64));

	free(main_numbers);
	free(handler_numbers);
	return check_exit_status();
}
