/*
 * alloc_choice.h - which allocations a sampled scheme (collect --allocs=RATE,
 * --alloc-bytes=N) records: a thread's countdown to its next chosen
 * allocation and the random numbers it is drawn from. Pure code, apart from
 * alloc_record.c so a unit test (test_alloc_choice.c) can run it under signals.
 *
 * A program's signal handler that allocates can run on the thread between
 * any two instructions of the hook it interrupted, and call these functions
 * itself. So nothing here reads a per-thread value and writes it back later:
 *  - choice_take takes a step off the countdown in one instruction (x86-64:
 *    xadd without lock, which a signal cannot split; elsewhere a relaxed
 *    atomic add), and says what it was before. Above the
 *    step: not chosen, and nothing is left to write (the hooks' fast path).
 *  - Else choice_decide. A countdown it found above 0 ran out in this
 *    allocation: chosen, and a fresh countdown is stored. One found at or
 *    below 0 is not drawn yet (a thread's first allocation), or another
 *    allocation of this thread that this one interrupted is between its take
 *    and its store: then this allocation is decided on its own, from a draw
 *    of its own (chosen when the draw runs out within its step, else the rest
 *    is stored). Every stored countdown is above 0, so "at or below 0" never
 *    means anything else. The interrupted allocation's later store wins and
 *    the handler's remaining countdown is dropped: as the geometric and the
 *    exponential are memoryless, every allocation is still chosen on its
 *    own, with its scheme's probability, whatever interrupted it.
 *  - choice_random: a per-thread counter advanced in one instruction,
 *    hashed (splitmix64's finalizer, a bijection) with the thread's key, so
 *    no two calls of a thread ever get the same number, nested or not; the
 *    key (choice_key: thread id, its state's address, the process's start)
 *    differs in a forked child, whose thread id differs.
 */
#ifndef IPSCOPE_ALLOC_CHOICE_H
#define IPSCOPE_ALLOC_CHOICE_H

#include <stddef.h>
#include <stdint.h>

/* What a countdown counts: allocations, geometric with parameter RATE; or bytes, exponential with mean N. */
struct choice_scheme {
	int by_bytes;
	double log_keep;   /* RATE: log(1 - RATE) */
	double mean_bytes; /* BYTES: N */
};

/* A thread's random numbers. */
struct choice_stream {
	uint64_t count; /* numbers drawn */
	uint64_t key;   /* choice_key's; 0: not keyed yet */
};

/* Larger than any allocation that can succeed: a countdown can fall below 0 by a few such steps without wrapping. */
#define CHOICE_STEP_MAX ((int64_t)1 << 60)
/* The longest countdown drawn. */
#define CHOICE_DRAW_MAX ((int64_t)9e18)

/* *p += v in one instruction a same-thread signal handler cannot split; *p before. */
static inline uint64_t choice_xadd(uint64_t *p, uint64_t v)
{
#if defined(__x86_64__)
	__asm__ volatile("xaddq %0, %1" : "+r"(v), "+m"(*p) : : "cc");
	return v;
#else
	return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
}

/* What an allocation of size bytes takes off the countdown. */
static inline int64_t choice_step(int by_bytes, size_t size)
{
	if (__builtin_expect(!by_bytes, 1))
		return 1;
	return size < (size_t)CHOICE_STEP_MAX ? (int64_t)size : CHOICE_STEP_MAX;
}

/* Take step (1..CHOICE_STEP_MAX) off the countdown in one instruction; the countdown before. Above step: not chosen. */
static inline int64_t choice_take(int64_t *countdown, int64_t step)
{
	return (int64_t)choice_xadd((uint64_t *)countdown, -(uint64_t)step);
}

/* splitmix64's finalizer: a bijection of 64-bit numbers. */
static inline uint64_t choice_mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A thread's key (nonzero) from its kernel id, its state's address and the process's start time. */
static inline uint64_t choice_key(uint32_t tid, uint64_t address, uint64_t start_ns)
{
	return choice_mix(start_ns ^ choice_mix(((uint64_t)tid << 32) ^ choice_mix(address))) | 1;
}

/* The stream's next number (key set): distinct from every other call's on this stream, nested calls included. */
static inline uint64_t choice_random(struct choice_stream *s)
{
	uint64_t n = choice_xadd(&s->count, 1) + 1;
	return choice_mix(s->key + n * 0x9e3779b97f4a7c15ull);
}

/*
 * The natural logarithm of x, a positive normal double, to within 2 units in the last place. The agent
 * has its own so that it does not link libm: loading libm (its relocations and ifuncs) was 0.37 ms of
 * every process's start, more than what ipscope may cost a short process in all (bench/process-churn).
 * x = m 2^e with m in [sqrt(1/2), sqrt(2)); log m = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172, whose
 * series' terms fall by at least s^2 < 0.0295 each: eleven reach 2^-53.
 */
static inline double choice_log(double x)
{
	uint64_t bits;
	__builtin_memcpy(&bits, &x, sizeof bits);
	int e = (int)(bits >> 52 & 0x7ff) - 1023;
	bits = (bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull; /* m in [1, 2) */
	double m;
	__builtin_memcpy(&m, &bits, sizeof m);
	if (m > 1.4142135623730951) {
		m *= 0.5;
		e++;
	}
	double s = (m - 1) / (m + 1), s2 = s * s;
	double series = 1.0 / 21;
	for (int k = 9; k >= 0; k--)
		series = 1.0 / (2 * k + 1) + s2 * series;
	/* log 2 in two parts: e * ln2_hi is exact (ln2_hi has 32 significant bits). */
	const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
	return e * ln2_hi + (e * ln2_lo + 2 * s * series);
}

/* log(1 + x) for x in [-1, 0], exact for x near 0 where 1 + x rounds (Goldberg's correction); -inf at -1. */
static inline double choice_log1p(double x)
{
	double u = 1 + x;
	if (u == 0)
		return -__builtin_inf();
	return u == 1 ? x : choice_log(u) * x / (u - 1);
}

/* A countdown from random number r (1..CHOICE_DRAW_MAX): P(> k) = (1 - RATE)^k, or exp(-k/N) (bytes). */
static inline int64_t choice_draw(const struct choice_scheme *scheme, uint64_t r)
{
	double u = ((double)(r >> 11) + 0.5) * (1.0 / 9007199254740992.0); /* in (0, 1]: 2^53 - 0.5 rounds up */
	/* ceil for bytes too: the countdown is at most s iff the exponential is, chosen with 1 - exp(-s/N) */
	double n = scheme->by_bytes ? -choice_log(u) * scheme->mean_bytes : choice_log(u) / scheme->log_keep;
	if (!(n < (double)CHOICE_DRAW_MAX))
		return CHOICE_DRAW_MAX;
	int64_t whole = (int64_t)n; /* n >= 0: truncation, then up to the next integer (ceil, without libm) */
	whole += (double)whole < n;
	return whole < 1 ? 1 : whole;
}

/* Whether the allocation whose choice_take of step saw before (at most step) is chosen; stores the
 * countdown to the next (above 0). The header's comment says why any nesting leaves it exact. */
static inline int choice_decide(int64_t *countdown, int64_t before, int64_t step, const struct choice_scheme *scheme,
				struct choice_stream *stream)
{
	if (before <= 0) { /* not drawn, or an interrupted allocation's store pending: decide on its own */
		int64_t own = choice_draw(scheme, choice_random(stream));
		if (own > step) {
			__atomic_store_n(countdown, own - step, __ATOMIC_RELAXED);
			return 0;
		}
	}
	__atomic_store_n(countdown, choice_draw(scheme, choice_random(stream)), __ATOMIC_RELAXED);
	return 1;
}

#endif
