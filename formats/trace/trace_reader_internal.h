/*
 * trace_reader_internal.h - what the trace reader's parts share:
 * trace_reader.c (the zstd stream, the window, record framing, versions)
 * calls trace_records.c (each record type's payload), which calls
 * trace_allocs.c (the allocation records' payloads); all three stand on
 * trace_cursor.h (bounds-checked takes, messages, growth). Private to
 * formats/trace/.
 */
#ifndef IPSCOPE_TRACE_READER_INTERNAL_H
#define IPSCOPE_TRACE_READER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <zstd.h>

#include "trace.h"
#include "trace_cursor.h"
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
	int damage_anywhere; /* failed on the content checksum: the damage can be anywhere */
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

/* The record type's name ("SAMPLES"), NULL for a type this reader does not know. */
const char *trace_record_name(enum trace_type type);
/* The payload of an ALLOCS record, and of ALLOCS_PACKED (ids 0) or ALLOCS_IDS (ids 1), as an ALLOCS one's
 * events (trace_allocs.c); -1 when corrupt. */
int trace_parse_allocs(struct cursor *c, struct trace_allocs *a);
int trace_parse_allocs_packed(struct cursor *c, struct trace_allocs *a, int ids);
/* Parses c's payload as a record of type into rec (pointers valid until the next record); -1 when corrupt. */
int trace_parse_record(struct cursor *c, enum trace_type type, struct trace_record *rec);

#endif
