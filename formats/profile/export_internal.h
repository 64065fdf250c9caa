/*
 * export_internal.h - what the exporters (export_*.c) share: summing sample
 * weights per stack and a growable output buffer. Walking a stack into frames
 * is the model's (profile_stack_frames in profile.h), shared with the reports.
 * Not for other callers: reports have their own aggregation in analyze/.
 */
#ifndef IPSCOPE_EXPORT_INTERNAL_H
#define IPSCOPE_EXPORT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

/* Summed samples of one stack, or of one (stack, thread) pair. */
struct export_stack_weight {
	uint32_t stack;
	uint32_t thread;  /* 0 when not split by thread */
	uint64_t samples; /* sample records */
	uint64_t weight;  /* timer periods */
};

/*
 * Sum p's samples per stack (per stack and thread when by_thread) into a
 * malloc'd array sorted by (stack, thread); *n gets its length (0 when no
 * samples). NULL with errno set on out of memory.
 */
struct export_stack_weight *export_stack_weights(const struct profile *p, int by_thread,
						 uint64_t *n);

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

#endif
