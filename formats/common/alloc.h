/*
 * alloc.h - allocation for what analyze builds in memory (the profile, its
 * filters and reports) and for collect's own tables: running out of memory
 * ends the process with one line, "PROGRAM: out of memory" (analyze: or
 * collect:, the program's own name), so no caller carries an error path
 * for it. The trace reader and the exporters' output buffers report ENOMEM
 * instead.
 *
 * ALLOC_GROW is the one growth idiom (git's): a table is an array, a count
 * and a capacity, and before writing element n the caller asks for room:
 *
 *	ALLOC_GROW(t->rows, t->nrows + 1, t->rows_cap);
 *	t->rows[t->nrows++] = row;
 */
#ifndef IPSCOPE_ALLOC_H
#define IPSCOPE_ALLOC_H

#include <stddef.h>
#include <stdint.h>

/* Print "PROGRAM: out of memory" and abort. */
__attribute__((noreturn)) void abort_out_of_memory(void);
/* Print "PROGRAM: message" and abort: for limits no input should reach
 * (a table of 2^32 rows), never for bad input, which gets an error. */
__attribute__((noreturn, format(printf, 1, 2))) void abort_with_message(const char *fmt, ...);
/* Zeroed room for n elements of size bytes (never NULL, even for n == 0). */
void *calloc_or_abort(size_t n, size_t size);
/* realloc that never returns NULL (size 0 still gets a valid block). */
void *realloc_or_abort(void *ptr, size_t size);
/* strdup that never returns NULL. */
char *strdup_or_abort(const char *s);

/*
 * Room for at least need elements of elem bytes in array, whose capacity
 * *cap grows by doubling (16 at least) but never past max (the largest
 * value the caller's capacity variable holds); aborts when need cannot fit.
 */
void *alloc_grow(void *array, size_t elem, uint64_t need, uint64_t *cap, uint64_t max);

/* Make array (capacity cap, any unsigned lvalue) hold at least n elements. */
#define ALLOC_GROW(array, n, cap)                                                          \
	do {                                                                               \
		if ((uint64_t)(n) > (uint64_t)(cap)) {                                     \
			uint64_t alloc_grow_cap_ = (cap);                                  \
			(array) = alloc_grow((array), sizeof(*(array)), (n), &alloc_grow_cap_, \
					     (uint64_t)(__typeof__(cap))~(__typeof__(cap))0);  \
			(cap) = (__typeof__(cap))alloc_grow_cap_;                          \
		}                                                                          \
	} while (0)

#endif
