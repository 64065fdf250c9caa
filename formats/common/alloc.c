/*
 * alloc.c - allocation that aborts on out of memory (see alloc.h).
 */
#include "alloc.h"

#include <stdio.h>
#include <stdlib.h>

void abort_out_of_memory(void)
{
	fputs("ipscope: out of memory\n", stderr);
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
