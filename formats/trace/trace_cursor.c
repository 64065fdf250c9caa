/*
 * trace_cursor.c - the bottom of the trace reader (trace_cursor.h): its
 * corrupt-trace message, the growth of its arrays and the cursor's takes
 * that are too long to inline. It calls nothing else of the reader, so the
 * framing (trace_reader.c) and the payload parsers (trace_records.c,
 * trace_allocs.c) sit above it in one direction.
 */
#include "trace_cursor.h"
#include "trace_reader_internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int trace_reader_corrupt(struct trace_reader *r, uint64_t offset, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(r->err, sizeof r->err, "%s: offset %" PRIu64 ": ", r->name, offset);
	if (n < 0 || (size_t)n >= sizeof r->err)
		n = 0;
	va_start(ap, fmt);
	vsnprintf(r->err + n, sizeof r->err - (size_t)n, fmt, ap);
	va_end(ap);
	r->failed = 1;
	return -1;
}

int trace_reader_reserve(struct trace_reader *r, void **array, size_t *cap, size_t n, size_t size)
{
	if (n <= *cap)
		return 0;
	size_t want_cap = *cap ? *cap : 64;
	while (want_cap < n)
		want_cap *= 2;
	void *p = realloc(*array, want_cap * size);
	if (!p)
		return trace_reader_corrupt(r, r->buf_offset + r->pos, "out of memory");
	*array = p;
	*cap = want_cap;
	return 0;
}

int cursor_short(struct cursor *c, uint64_t n, const char *field)
{
	return trace_reader_corrupt(c->r, c->offset, "%s record (%zu bytes): %s needs %" PRIu64 " bytes at %zu",
				    c->record, c->size, field, n, c->at);
}

int cursor_bytes(struct cursor *c, const uint8_t **bytes, uint32_t *len, const char *field)
{
	if (cursor_u32(c, len, field) < 0 || cursor_need(c, *len, field) < 0)
		return -1;
	*bytes = c->p + c->at;
	c->at += *len;
	return 0;
}

int cursor_string(struct cursor *c, const char **s, size_t *used, const char *field)
{
	const uint8_t *bytes;
	uint32_t len;
	if (cursor_bytes(c, &bytes, &len, field) < 0)
		return -1;
	if (memchr(bytes, 0, len))
		return trace_reader_corrupt(c->r, c->offset, "%s record: %s contains a NUL byte", c->record, field);
	char *dst = c->r->strings + *used;
	memcpy(dst, bytes, len);
	dst[len] = '\0';
	*used += (size_t)len + 1;
	*s = dst;
	return 0;
}

/* The count is checked by division, so that count * size cannot overflow. */
int cursor_array(struct cursor *c, uint32_t *count, uint32_t *entry_size, uint32_t min_entry, const char *field)
{
	if (cursor_u32(c, count, field) < 0 || cursor_u32(c, entry_size, field) < 0)
		return -1;
	if (*entry_size < min_entry)
		return trace_reader_corrupt(c->r, c->offset, "%s record: %s entry size %" PRIu32 " is below %" PRIu32,
					    c->record, field, *entry_size, min_entry);
	if (*count > (c->size - c->at) / *entry_size)
		return trace_reader_corrupt(c->r, c->offset,
					    "%s record (%zu bytes): %" PRIu32 " %s of %" PRIu32 " bytes do not fit",
					    c->record, c->size, *count, field, *entry_size);
	return 0;
}
