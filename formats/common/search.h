/*
 * search.h - binary search over a sorted array of 64-bit keys: the two
 * questions the readers ask of one (how many keys are at or below x, where
 * the first key not below x is), in one place instead of a loop per caller.
 */
#ifndef IPSCOPE_SEARCH_H
#define IPSCOPE_SEARCH_H

#include <stddef.h>
#include <stdint.h>

/* In keys[lo..hi) sorted ascending: the index of the first key above x (hi when none is). */
static inline size_t u64_first_above(const uint64_t *keys, size_t lo, size_t hi, uint64_t x)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (keys[mid] <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* In keys[lo..hi) sorted ascending: the index of the first key at or above x (hi when none is). */
static inline size_t u64_first_not_below(const uint64_t *keys, size_t lo, size_t hi, uint64_t x)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (keys[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#endif
