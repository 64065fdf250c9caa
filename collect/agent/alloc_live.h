/*
 * alloc_live.h - the set of live chosen blocks when only some allocations
 * are recorded (alloc_live.c says how it is kept): the hooks' free path
 * asks its filter inline (allocations.h), and the outer writer of nested
 * events decides by it (nesting.c). Depends on nothing.
 */
#ifndef IPSCOPE_ALLOC_LIVE_H
#define IPSCOPE_ALLOC_LIVE_H

#include <stdatomic.h>
#include <stdint.h>

/* Note a chosen live block; 0, or -1 when out of memory (then its free goes unrecorded). */
int live_insert(uint64_t address);
/* Whether address was a chosen live block, forgetting it. */
int live_remove(uint64_t address);
/* A forked child: the set is the parent's (its locks may be held); forget it. */
void live_forget(void);
/* The live set's filter: one bit per 16-byte slot of address, modulo LIVE_FILTER_BITS slots; clear: no chosen
 * live block there. */
#define LIVE_FILTER_BITS (1u << 19)
extern _Atomic uint64_t live_filter[LIVE_FILTER_BITS / 64];
/* 0 when address is surely not a chosen live block: one load, no lock. */
static inline int live_may_hold(uint64_t address)
{
	uint64_t slot = (address >> 4) & (LIVE_FILTER_BITS - 1);
	return (int)((atomic_load_explicit(&live_filter[slot >> 6], memory_order_relaxed) >> (slot & 63)) & 1);
}

#endif
