/*
 * trace_reader.c - streaming reader of ipscope traces (formats/trace/TRACE_FORMAT.md),
 * the input stage of every analyze command and the target of the fuzzer.
 *
 * Input of any origin is hostile: every length is checked against the record
 * it sits in before anything is read, records are capped at
 * TRACE_RECORD_MAX_PAYLOAD, and memory grows only as decompressed data
 * actually arrives, so no input can make the reader crash, hang or allocate
 * more than a few times its largest real record.
 *
 * Decompressed bytes land in one window `buf`; a record is parsed in place
 * there (each type by trace_records.c) and its arrays are decoded into
 * reader-owned arrays that are reused
 * from record to record (hence "valid until the next call").
 *
 * Three outcomes: a record (1); the end (0), which is a truncation unless an
 * END record was seen; corruption (-1) with "FILE: offset N: what". zstd
 * asking for more input at end of file is a cut, not corruption: the writer
 * flushes whole blocks, so a cut file is a valid prefix.
 */
#include "trace.h"
#include "trace_internal.h"
#include "trace_reader_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>
#include <zstd_errors.h>

#define INPUT_CHUNK (256u << 10)
/* 64 KiB decodes fastest here (it stays in cache). The fuzzer builds with a
 * tiny window so that records keep crossing its edge, compacting and growing it. */
#ifndef TRACE_READER_WINDOW
#define TRACE_READER_WINDOW (64u << 10)
#endif

static int truncated(struct trace_reader *r)
{
	uint64_t offset = r->buf_offset + r->pos;
	snprintf(r->err, sizeof r->err,
		 "%s: truncated at offset %" PRIu64 " (no END record): read up to the last complete record",
		 r->name, offset);
	r->truncated = 1;
	return 0;
}

static int refill_input(struct trace_reader *r)
{
	if (r->fd < 0) {
		r->input_eof = 1;
		return 0;
	}
	for (;;) {
		ssize_t n = read(r->fd, r->in_buf, INPUT_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return trace_reader_corrupt(r, r->buf_offset + r->len, "read error: %s", strerror(errno));
		r->in.src = r->in_buf;
		r->in.size = (size_t)n;
		r->in.pos = 0;
		if (n == 0)
			r->input_eof = 1;
		return 0;
	}
}

/* Make room at the end of the window: drop parsed bytes, then grow. */
static int make_room(struct trace_reader *r)
{
	if (r->len < r->cap)
		return 0;
	if (r->pos > 0) {
		memmove(r->buf, r->buf + r->pos, r->len - r->pos);
		r->buf_offset += r->pos;
		r->len -= r->pos;
		r->pos = 0;
		return 0;
	}
	size_t cap = r->cap * 2;
	uint8_t *p = realloc(r->buf, cap);
	if (!p)
		return trace_reader_corrupt(r, r->buf_offset + r->len, "out of memory (%zu byte window)", cap);
	r->buf = p;
	r->cap = cap;
	return 0;
}

/* Decompress more into the window. 1: got bytes; 0: end of input; -1: error. */
static int fill(struct trace_reader *r)
{
	if (make_room(r) < 0)
		return -1;
	for (;;) {
		if (r->in.pos == r->in.size && !r->input_eof && refill_input(r) < 0)
			return -1;
		ZSTD_outBuffer out = { r->buf, r->cap, r->len };
		size_t in_before = r->in.pos;
		size_t hint = ZSTD_decompressStream(r->dctx, &out, &r->in);
		r->compressed_bytes += r->in.pos - in_before;
		if (ZSTD_isError(hint)) {
			if (ZSTD_getErrorCode(hint) == ZSTD_error_prefix_unknown && r->raw_bytes == 0)
				return trace_reader_corrupt(r, 0, "not an ipscope trace (not zstd-compressed)");
			/* zstd checks the checksum at the end of the frame: the damage can be anywhere. */
			if (ZSTD_getErrorCode(hint) == ZSTD_error_checksum_wrong) {
				r->damage_anywhere = 1;
				return trace_reader_corrupt(r, r->buf_offset + r->len,
					       "content checksum mismatch: the compressed data is corrupt");
			}
			return trace_reader_corrupt(r, r->buf_offset + r->len,
				       "compressed data is corrupt after compressed byte %" PRIu64 " (zstd: %s)",
				       r->compressed_bytes, ZSTD_getErrorName(hint));
		}
		r->zstd_hint = hint;
		size_t produced = out.pos - r->len;
		r->len = out.pos;
		r->raw_bytes += produced;
		if (produced > 0)
			return 1;
		if (r->in.pos == in_before && r->in.pos < r->in.size) /* never seen; no spinning */
			return trace_reader_corrupt(r, r->buf_offset + r->len, "zstd decoder made no progress");
		/* zstd always progresses when it has room: no output with input
		 * left means it consumed headers; without input we are done. */
		if (r->in.pos == r->in.size && r->input_eof)
			return 0;
	}
}

/* Have at least n unparsed bytes in the window. 1: yes; 0: input ended first; -1. */
static int want(struct trace_reader *r, size_t n)
{
	while (r->len - r->pos < n) {
		int got = fill(r);
		if (got <= 0)
			return got;
	}
	return 1;
}

static int read_header(struct trace_reader *r)
{
	int got = want(r, TRACE_FILE_HEADER_SIZE);
	if (got < 0)
		return -1;
	/* Zero bytes is not a trace cut at offset 0: nothing was ever written
	 * (collect failed before its first flush, or the file is not one). */
	if (got == 0 && r->compressed_bytes == 0 && r->raw_bytes == 0) {
		snprintf(r->err, sizeof r->err, "%s: empty file, not an ipscope trace", r->name);
		r->failed = 1;
		return -1;
	}
	size_t have = r->len - r->pos;
	size_t cmp = have < TRACE_MAGIC_LEN ? have : TRACE_MAGIC_LEN;
	if (memcmp(r->buf + r->pos, TRACE_MAGIC, cmp) != 0)
		return trace_reader_corrupt(r, 0, "not an ipscope trace (bad magic)");
	if (got == 0)
		return truncated(r);
	const uint8_t *h = r->buf + r->pos;
	unsigned major = trace_get_u16(h + 8);
	unsigned minor = trace_get_u16(h + 10);
	uint32_t header_size = trace_get_u32(h + 12);
	if (major > TRACE_VERSION_MAJOR)
		return trace_reader_corrupt(r, 8, "trace format version %u.%u is newer than this reader (%u.%u): use a newer ipscope",
			       major, minor, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR);
	if (major < 1)
		return trace_reader_corrupt(r, 8, "unknown trace format version %u.%u", major, minor);
	if (header_size < TRACE_FILE_HEADER_SIZE || header_size > 4096)
		return trace_reader_corrupt(r, 12, "impossible file header size %" PRIu32, header_size);
	got = want(r, header_size);
	if (got <= 0)
		return got < 0 ? -1 : truncated(r);
	r->major = major;
	r->minor = minor;
	r->pos += header_size;
	return 1;
}

/* After END, decode to the end of the zstd frame so its checksum is verified. */
static int drain_frame(struct trace_reader *r)
{
	while (r->zstd_hint != 0) {
		r->pos = r->len; /* bytes after END are not records */
		int got = fill(r);
		if (got <= 0)
			return got;
	}
	return 0;
}

int trace_reader_next(struct trace_reader *r, struct trace_record *rec)
{
	if (r->failed)
		return -1;
	if (r->truncated)
		return 0;
	if (r->ended)
		return drain_frame(r);
	/* The header was read at open: a cut inside it set truncated. */
	for (;;) {
		int got = want(r, TRACE_RECORD_HEADER_SIZE);
		if (got <= 0)
			return got < 0 ? -1 : truncated(r);
		uint64_t offset = r->buf_offset + r->pos;
		const uint8_t *h = r->buf + r->pos;
		unsigned type = trace_get_u16(h);
		unsigned flags = trace_get_u16(h + 2);
		uint32_t size = trace_get_u32(h + 4);
		if (type == 0)
			return trace_reader_corrupt(r, offset, "record type 0 (zeroed or corrupt data)");
		if (size > TRACE_RECORD_MAX_PAYLOAD)
			return trace_reader_corrupt(r, offset, "record type %u claims %" PRIu32 " bytes (limit %u)", type,
				       size, TRACE_RECORD_MAX_PAYLOAD);
		int known = trace_record_name(type) != NULL;
		if (!known && (flags & TRACE_RECORD_FLAG_REQUIRED))
			return trace_reader_corrupt(r, offset, "record type %u is required but unknown to this reader", type);
		got = want(r, TRACE_RECORD_HEADER_SIZE + (size_t)size);
		if (got <= 0)
			return got < 0 ? -1 : truncated(r);
		h = r->buf + r->pos; /* want() may have moved the window */
		if (!known) { /* a newer writer's record: skip it by its length */
			r->pos += TRACE_RECORD_HEADER_SIZE + (size_t)size;
			continue;
		}
		/* Strings of this record are copied here; reserving the payload size
		 * plus a NUL per string once means no realloc between two strings. */
		if (trace_reader_reserve(r, (void **)&r->strings, &r->strings_cap, (size_t)size + 8, 1) < 0)
			return -1;
		struct cursor c = {
			.r = r, .p = h + TRACE_RECORD_HEADER_SIZE, .size = size,
			.offset = offset, .record = trace_record_name(type),
		};
		memset(rec, 0, sizeof *rec);
		rec->type = (enum trace_type)type;
		rec->offset = offset;
		if (trace_parse_record(&c, rec->type, rec) < 0)
			return -1;
		r->pos += TRACE_RECORD_HEADER_SIZE + (size_t)size;
		if (rec->type == TRACE_END)
			r->ended = 1;
		return 1;
	}
}

static struct trace_reader *reader_new(const char *name, char *err, size_t errlen)
{
	struct trace_reader *r = calloc(1, sizeof *r);
	if (r) {
		r->fd = -1;
		r->name = strdup(name);
		r->cap = TRACE_READER_WINDOW;
		r->buf = malloc(r->cap);
		r->dctx = ZSTD_createDCtx();
	}
	if (!r || !r->name || !r->buf || !r->dctx) {
		snprintf(err, errlen, "%s: out of memory", name);
		trace_reader_close(r);
		return NULL;
	}
	return r;
}

/* Read the file header now so that a file that is not a trace, or is too
 * new, fails at open; a cut-off header is left for next() to report. */
static struct trace_reader *reader_start(struct trace_reader *r, char *err, size_t errlen)
{
	if (read_header(r) < 0) {
		snprintf(err, errlen, "%s", r->err);
		trace_reader_close(r);
		return NULL;
	}
	return r;
}

struct trace_reader *trace_reader_open(const char *path, char *err, size_t errlen)
{
	int stdin_input = strcmp(path, "-") == 0;
	struct trace_reader *r = reader_new(stdin_input ? "<stdin>" : path, err, errlen);
	if (!r)
		return NULL;
	r->in_buf = malloc(INPUT_CHUNK);
	if (!r->in_buf) {
		snprintf(err, errlen, "%s: out of memory", path);
		trace_reader_close(r);
		return NULL;
	}
	r->fd = stdin_input ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		trace_reader_close(r);
		return NULL;
	}
	r->close_fd = !stdin_input;
	r->in.src = r->in_buf;
	return reader_start(r, err, errlen);
}

struct trace_reader *trace_reader_open_memory(const void *data, size_t size, const char *name,
					      char *err, size_t errlen)
{
	struct trace_reader *r = reader_new(name ? name : "<memory>", err, errlen);
	if (!r)
		return NULL;
	r->in.src = data;
	r->in.size = size;
	r->input_eof = 1;
	return reader_start(r, err, errlen);
}

int trace_reader_truncated(const struct trace_reader *r)
{
	return r->truncated;
}

const char *trace_reader_error(const struct trace_reader *r)
{
	return r->err;
}

int trace_reader_damage_located(const struct trace_reader *r)
{
	return r->failed && !r->damage_anywhere;
}

uint64_t trace_reader_compressed_bytes(const struct trace_reader *r)
{
	return r->compressed_bytes;
}

uint64_t trace_reader_raw_bytes(const struct trace_reader *r)
{
	return r->raw_bytes;
}

void trace_reader_version(const struct trace_reader *r, unsigned *major, unsigned *minor)
{
	*major = r->major;
	*minor = r->minor;
}

void trace_reader_close(struct trace_reader *r)
{
	if (!r)
		return;
	if (r->close_fd && r->fd >= 0)
		close(r->fd);
	ZSTD_freeDCtx(r->dctx);
	free(r->in_buf);
	free(r->buf);
	free(r->strings);
	free(r->samples);
	free(r->heap);
	trace_heap_procs_free(&r->heap_procs);
	free(r->ips);
	free(r->segments);
	free(r->name);
	free(r);
}
