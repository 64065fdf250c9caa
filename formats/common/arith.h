/*
 * arith.h - saturating 64-bit arithmetic for values read from a trace, which
 * the profiled program could have scribbled: a sum or a product that would
 * overflow stops at INT64_MAX (or INT64_MIN) and sets *saturated, so reports
 * can say a total is not exact instead of printing a wrapped number.
 */
#ifndef IPSCOPE_ARITH_H
#define IPSCOPE_ARITH_H

#include <stdint.h>

/* a + b, clamped to the int64 range; sets *saturated (if not NULL) when clamped. */
static inline int64_t sat_add_i64(int64_t a, int64_t b, int *saturated)
{
	int64_t r;
	if (!__builtin_add_overflow(a, b, &r))
		return r;
	if (saturated)
		*saturated = 1;
	return b > 0 ? INT64_MAX : INT64_MIN;
}

/* a * b, clamped to the int64 range; sets *saturated (if not NULL) when clamped. */
static inline int64_t sat_mul_i64(int64_t a, int64_t b, int *saturated)
{
	int64_t r;
	if (!__builtin_mul_overflow(a, b, &r))
		return r;
	if (saturated)
		*saturated = 1;
	return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
}

/* -v, clamped: INT64_MIN becomes INT64_MAX. */
static inline int64_t sat_neg_i64(int64_t v)
{
	return v == INT64_MIN ? INT64_MAX : -v;
}

/* |v| as an unsigned number (INT64_MIN included). */
static inline uint64_t abs_i64(int64_t v)
{
	return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
}

#endif
