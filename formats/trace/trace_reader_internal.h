/*
 * trace_reader_internal.h - what the trace reader's parts share:
 * trace_reader.c (the zstd stream, the window, record framing, versions),
 * trace_records.c (each record type's payload, bounds-checked) and
 * trace_allocs.c (the allocation records' payloads). Private
 * to formats/trace/.
 */
#ifndef IPSCOPE_TRACE_READER_INTERNAL_H
#define IPSCOPE_TRACE_READER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <zstd.h>

#include "trace.h"
#include "trace_internal.h"

struct trace_reader {
	char *name;
	int fd; /* -1 when reading from memory */
	int close_fd;
	ZSTD_DCtx *dctx;
	ZSTD_inBuffer in;
	uint8_t *in_buf; /* file input only */
	int input_eof;
	size_t zstd_hint; /* last ZSTD_decompressStream result: 0 at a frame end */

	uint8_t *buf; /* decompressed window: [pos, len) not parsed yet */
	size_t pos, len, cap;
	uint64_t buf_offset; /* stream offset of buf[0] */

	int ended; /* END seen: nothing more is returned */
	int truncated;
	int failed;
	unsigned major, minor;

	/* Reused per record; see "valid until the next call". */
	char *strings;
	size_t strings_cap;
	struct trace_sample *samples;
	size_t samples_cap;
	struct trace_heap_event *heap;
	size_t heap_cap;
	struct trace_heap_procs heap_procs; /* ALLOCS_PACKED: each process's live blocks by ordinal */
	uint64_t *ips;
	size_t ips_cap;
	struct trace_segment *segments;
	size_t segments_cap;

	uint64_t compressed_bytes;
	uint64_t raw_bytes;
	char err[512];
};

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
/* The record type's name ("SAMPLES"), NULL for a type this reader does not know. */
const char *trace_record_name(enum trace_type type);
/* A u32 or u64 field of the payload (trace_records.c), named in the message when cut short; -1 when corrupt. */
int trace_take_u32(struct cursor *c, uint32_t *v, const char *field);
int trace_take_u64(struct cursor *c, uint64_t *v, const char *field);
/* The payload of an ALLOCS record, and of ALLOCS_PACKED (ids 0) or ALLOCS_IDS (ids 1), as an ALLOCS one's
 * events (trace_allocs.c); -1 when corrupt. */
int trace_parse_allocs(struct cursor *c, struct trace_allocs *a);
int trace_parse_allocs_packed(struct cursor *c, struct trace_allocs *a, int ids);
/* Parses c's payload as a record of type into rec (pointers valid until the next record); -1 when corrupt. */
int trace_parse_record(struct cursor *c, enum trace_type type, struct trace_record *rec);

#endif
