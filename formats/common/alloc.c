/*
 * alloc.c - allocation that aborts on out of memory, and the one growth
 * idiom (see alloc.h).
 */
#include "alloc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void abort_out_of_memory(void)
{
	abort_with_message("out of memory");
}

void abort_with_message(const char *fmt, ...)
{
	/* glibc's name of the running program: "analyze" or "collect". */
	fprintf(stderr, "%s: ", program_invocation_short_name);
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

void *calloc_or_abort(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);
	if (!p)
		abort_out_of_memory();
	return p;
}

void *realloc_or_abort(void *ptr, size_t size)
{
	void *q = realloc(ptr, size ? size : 1);
	if (!q)
		abort_out_of_memory();
	return q;
}

char *strdup_or_abort(const char *s)
{
	char *d = strdup(s);
	if (!d)
		abort_out_of_memory();
	return d;
}

void *alloc_grow(void *array, size_t elem, uint64_t need, uint64_t *cap, uint64_t max)
{
	if (need <= *cap)
		return array;
	if (need > max || need > SIZE_MAX / elem)
		abort_out_of_memory();
	uint64_t c = *cap ? *cap : 16;
	while (c < need)
		c = c > UINT64_MAX / 2 ? need : c * 2;
	if (c > max)
		c = max;
	if (c > SIZE_MAX / elem)
		c = need;
	array = realloc_or_abort(array, (size_t)(c * elem));
	*cap = c;
	return array;
}
