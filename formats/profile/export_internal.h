/*
 * export_internal.h - what the exporters (export_*.c) share: summing sample
 * values per stack (and thread) and a growable output buffer. Walking a stack
 * into frames is the model's (profile_stack_frames in profile.h), shared
 * with the reports. Not for other callers: reports aggregate in analyze/.
 */
#ifndef IPSCOPE_EXPORT_INTERNAL_H
#define IPSCOPE_EXPORT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

/* One distinct stack, or (stack, thread) pair, of the samples. */
struct export_stack {
	uint32_t stack;
	uint32_t thread;  /* 0 when not split by thread */
	uint64_t samples; /* trace samples (profile_sample_count) */
};

/* The distinct stacks (or pairs) in (stack, thread) order, each with its
 * summed stored values: columns[i * ncolumns + c]. */
struct export_stacks {
	struct export_stack *stacks;
	int64_t *columns;
	uint64_t n;
	uint32_t ncolumns;
};

/* Sum p's samples per stack (per stack and thread when by_thread) into out;
 * 0, or -1 with errno set on out of memory (out is then empty). */
int export_sum_stacks(const struct profile *p, int by_thread, struct export_stacks *out);
void export_stacks_free(struct export_stacks *s);

/* Entry i's summed value of type v (saturating). */
static inline int64_t export_stack_value(const struct profile *p, const struct export_stacks *s,
					 uint64_t i, uint32_t v)
{
	return profile_scale_value(p, v, s->columns[i * s->ncolumns + p->value_types[v].column], NULL);
}

/* A growable byte buffer: rendered stacks, cached JSON, output batches. */
struct export_buffer {
	char *buf;
	size_t len, cap;
};

/* Room for more bytes after len; 0, or -1 on out of memory. */
int export_buffer_reserve(struct export_buffer *b, size_t more);
/* Append n bytes; 0, or -1 on out of memory. */
int export_buffer_put(struct export_buffer *b, const void *s, size_t n);
/* Append v in decimal; the caller has reserved 20 bytes. */
void export_buffer_put_u64(struct export_buffer *b, uint64_t v);
/* Append v in decimal, with a '-' when negative; the caller has reserved 21 bytes. */
void export_buffer_put_i64(struct export_buffer *b, int64_t v);

#endif
