/*
 * alloc.h - allocation for what analyze builds in memory (the profile, its
 * filters and reports) and for collect's own tables: running out of memory
 * ends the process with one line,
 * "ipscope: out of memory", so no caller carries an error path for it.
 * Exporters and the trace reader report ENOMEM instead and do not use these.
 */
#ifndef IPSCOPE_ALLOC_H
#define IPSCOPE_ALLOC_H

#include <stddef.h>

/* Print "ipscope: out of memory" and abort. */
__attribute__((noreturn)) void abort_out_of_memory(void);
/* Zeroed room for n elements of size bytes (never NULL, even for n == 0). */
void *calloc_or_abort(size_t n, size_t size);
/* realloc that never returns NULL (size 0 still gets a valid block). */
void *realloc_or_abort(void *ptr, size_t size);

#endif
