/*
 * trace_layout_support.h - what unit_trace_layout's two files share: reading
 * a stream built by hand (test_trace_layout.c, test_trace_layout_allocs.c).
 */
#ifndef IPSCOPE_TRACE_LAYOUT_SUPPORT_H
#define IPSCOPE_TRACE_LAYOUT_SUPPORT_H

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "trace.h"
#include "trace_test_support.h"

/* Read a hand-built stream; returns the outcome and checks its message. */
static inline struct outcome read_raw(struct bytes *raw)
{
	struct bytes z = zstd_compress(raw);
	struct outcome o = read_memory(z.p, z.len, 0);
	free(z.p);
	free(raw->p);
	memset(raw, 0, sizeof *raw);
	return o;
}

static inline void expect_corrupt(struct bytes *raw, const char *needle)
{
	struct outcome o = read_raw(raw);
	CHECKF(o.last < 0, "expected an error about '%s', got %d", needle, o.last);
	CHECKF(strstr(o.message, needle) != NULL && strncmp(o.message, "t.zst: offset ", 14) == 0,
	       "'%s' lacks '%s'", o.message, needle);
}

/* Open a hand-built stream as trace name (compressed into *z, for the caller to free after closing); checks it opens. */
static inline struct trace_reader *open_raw(const struct bytes *raw, struct bytes *z, const char *name)
{
	char err[256];
	*z = zstd_compress(raw);
	struct trace_reader *r = trace_reader_open_memory(z->p, z->len, name, err, sizeof err);
	CHECKF(r != NULL, "%s", err);
	return r;
}

/* A 1.4 END: the 1.0 fields, the agent's cost (1.2) and exited_unsampled (1.4). */
static inline void put_end_1_4(struct bytes *raw, uint64_t exited_unsampled)
{
	size_t at = begin_record(raw, TRACE_END, 0);
	put_le(raw, 99, 8), put_le(raw, 0, 4), put_le(raw, TRACE_END_EXITED, 4);
	put_le(raw, 0, 8), put_le(raw, 0, 8), put_le(raw, 0, 8), put_le(raw, 0, 8), put_le(raw, 0, 8);
	put_le(raw, exited_unsampled, 8);
	end_record(raw, at);
}


#endif
