/* report_inline_hot.h - the hot function of report_inline.c, in a header of
 * its own so that its frames carry this file's name and lines. */
#ifndef REPORT_INLINE_HOT_H
#define REPORT_INLINE_HOT_H

static volatile unsigned long inline_sink;

static inline __attribute__((always_inline)) void hot_kernel(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		inline_sink += i ^ (i >> 7); /* @hot-line */
}

#endif
