/*
 * png_check.h - what the plot tests need to know of a PNG file without a
 * library beyond zlib: its size, and whether it shows something (more than
 * one colour, not all background). Non-interlaced 8-bit images only (what
 * gnuplot's pngcairo writes); anything else is said to be unreadable.
 */
#ifndef IPSCOPE_TESTS_PNG_CHECK_H
#define IPSCOPE_TESTS_PNG_CHECK_H

#include <stddef.h>
#include <stdint.h>

struct png_info {
	uint32_t width, height;
	uint32_t colors;       /* distinct pixel values, counted up to 65536 */
	double foreground;     /* share of pixels unlike the top-left one */
};

/* Read path into info: 0, or -1 with a one-line reason in err. */
int png_check(const char *path, struct png_info *info, char *err, size_t errlen);

#endif
