/*
 * trace_cursor.h - the bottom of the trace reader, below its framing
 * (trace_reader.c) and its payload parsers (trace_records.c, trace_allocs.c):
 * a bounds-checked cursor over one record's payload, the reader's one-line
 * message for a corrupt trace, and the growth of the arrays it owns. Every
 * take checks what is left before it reads, so a corrupt or hostile record
 * gets a message naming the record and the field, never a read past its end.
 * Private to formats/trace/.
 */
#ifndef IPSCOPE_TRACE_CURSOR_H
#define IPSCOPE_TRACE_CURSOR_H

#include <stddef.h>
#include <stdint.h>

#include "trace_internal.h"

struct trace_reader;

/* A bounds-checked view of one record's payload. */
struct cursor {
	struct trace_reader *r;
	const uint8_t *p;
	size_t size;
	size_t at;
	uint64_t offset; /* of the record, for messages */
	const char *record;
};

/* Sets the one-line "FILE: offset N: what" message of a corrupt trace; returns -1. */
__attribute__((format(printf, 3, 4))) int trace_reader_corrupt(struct trace_reader *r, uint64_t offset,
								   const char *fmt, ...);
/* Grows a reader-owned array to hold n entries of size bytes; -1 (corrupt: out of memory) if it cannot. */
int trace_reader_reserve(struct trace_reader *r, void **array, size_t *cap, size_t n, size_t size);
/* The message for a field that needs n bytes where fewer are left; returns -1. */
int cursor_short(struct cursor *c, uint64_t n, const char *field);

/* 0 when n more bytes are left, else -1 with the field named. */
static inline int cursor_need(struct cursor *c, uint64_t n, const char *field)
{
	return n <= c->size - c->at ? 0 : cursor_short(c, n, field);
}

/* A u32 field; -1 when cut short. */
static inline int cursor_u32(struct cursor *c, uint32_t *v, const char *field)
{
	if (cursor_need(c, 4, field) < 0)
		return -1;
	*v = trace_get_u32(c->p + c->at);
	c->at += 4;
	return 0;
}

/* A u64 field; -1 when cut short. */
static inline int cursor_u64(struct cursor *c, uint64_t *v, const char *field)
{
	if (cursor_need(c, 8, field) < 0)
		return -1;
	*v = trace_get_u64(c->p + c->at);
	c->at += 8;
	return 0;
}

/* A u32 length and that many bytes, pointed at in the record; -1 when cut short. */
int cursor_bytes(struct cursor *c, const uint8_t **bytes, uint32_t *len, const char *field);
/* A string copied NUL-terminated into the reader's strings at *used (room reserved for the
 * whole record); -1 when cut short or holding a NUL itself. */
int cursor_string(struct cursor *c, const char **s, size_t *used, const char *field);
/* An array header (u32 count, u32 entry size >= min_entry) whose count entries fit; -1 if not. */
int cursor_array(struct cursor *c, uint32_t *count, uint32_t *entry_size, uint32_t min_entry, const char *field);

#endif
