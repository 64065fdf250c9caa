/*
 * inline_helper.h - a small function in a header of its own, which gcc -O2
 * inlines into its caller: the symbolizer must show it as an inlined frame
 * with this file and its own line, called from the caller's line.
 */
#ifndef INLINE_HELPER_H
#define INLINE_HELPER_H

static inline unsigned long mix_step(unsigned long x, unsigned long i)
{
	x ^= x << 13; /* MARK:helper-body */
	x ^= x >> 7;
	x ^= x << 17;
	return x + i;
}

#endif
