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
 * there and its arrays are decoded into reader-owned arrays that are reused
 * from record to record (hence "valid until the next call").
 *
 * Three outcomes: a record (1); the end (0), which is a truncation unless an
 * END record was seen; corruption (-1) with "FILE: offset N: what". zstd
 * asking for more input at end of file is a cut, not corruption: the writer
 * flushes whole blocks, so a cut file is a valid prefix.
 */
#include "trace.h"
#include "trace_internal.h"

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

/* Sets the one-line "FILE: offset N: what" message of a corrupt trace. */
static int corrupt(struct trace_reader *r, uint64_t offset, const char *fmt, ...)
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
			return corrupt(r, r->buf_offset + r->len, "read error: %s", strerror(errno));
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
		return corrupt(r, r->buf_offset + r->len, "out of memory (%zu byte window)", cap);
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
				return corrupt(r, 0, "not an ipscope trace (not zstd-compressed)");
			/* zstd checks the checksum at the end of the frame: the damage can be anywhere. */
			if (ZSTD_getErrorCode(hint) == ZSTD_error_checksum_wrong)
				return corrupt(r, r->buf_offset + r->len,
					       "content checksum mismatch: the compressed data is corrupt");
			return corrupt(r, r->buf_offset + r->len,
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
			return corrupt(r, r->buf_offset + r->len, "zstd decoder made no progress");
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
		return corrupt(r, 0, "not an ipscope trace (bad magic)");
	if (got == 0)
		return truncated(r);
	const uint8_t *h = r->buf + r->pos;
	unsigned major = trace_get_u16(h + 8);
	unsigned minor = trace_get_u16(h + 10);
	uint32_t header_size = trace_get_u32(h + 12);
	if (major > TRACE_VERSION_MAJOR)
		return corrupt(r, 8, "trace format version %u.%u is newer than this reader (%u.%u): use a newer ipscope",
			       major, minor, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR);
	if (major < 1)
		return corrupt(r, 8, "unknown trace format version %u.%u", major, minor);
	if (header_size < TRACE_FILE_HEADER_SIZE || header_size > 4096)
		return corrupt(r, 12, "impossible file header size %" PRIu32, header_size);
	got = want(r, header_size);
	if (got <= 0)
		return got < 0 ? -1 : truncated(r);
	r->major = major;
	r->minor = minor;
	r->pos += header_size;
	return 1;
}

/* A bounds-checked view of one record's payload. */
struct cursor {
	struct trace_reader *r;
	const uint8_t *p;
	size_t size;
	size_t at;
	uint64_t offset; /* of the record, for messages */
	const char *record;
};

/* Check that `n` more bytes exist; names the field when they do not. */
static int need(struct cursor *c, uint64_t n, const char *field)
{
	if (n <= c->size - c->at)
		return 0;
	return corrupt(c->r, c->offset, "%s record (%zu bytes): %s needs %" PRIu64 " bytes at %zu",
		       c->record, c->size, field, n, c->at);
}

static int take_u32(struct cursor *c, uint32_t *v, const char *field)
{
	if (need(c, 4, field) < 0)
		return -1;
	*v = trace_get_u32(c->p + c->at);
	c->at += 4;
	return 0;
}

static int take_u64(struct cursor *c, uint64_t *v, const char *field)
{
	if (need(c, 8, field) < 0)
		return -1;
	*v = trace_get_u64(c->p + c->at);
	c->at += 8;
	return 0;
}

/* A u32 length and that many bytes; returns a pointer into the record. */
static int take_bytes(struct cursor *c, const uint8_t **bytes, uint32_t *len, const char *field)
{
	if (take_u32(c, len, field) < 0 || need(c, *len, field) < 0)
		return -1;
	*bytes = c->p + c->at;
	c->at += *len;
	return 0;
}

/* A string: copied NUL-terminated into r->strings at *used (room was
 * reserved for the whole record), rejected if it holds a NUL itself. */
static int take_string(struct cursor *c, const char **s, size_t *used, const char *field)
{
	const uint8_t *bytes;
	uint32_t len;
	if (take_bytes(c, &bytes, &len, field) < 0)
		return -1;
	if (memchr(bytes, 0, len))
		return corrupt(c->r, c->offset, "%s record: %s contains a NUL byte", c->record, field);
	char *dst = c->r->strings + *used;
	memcpy(dst, bytes, len);
	dst[len] = '\0';
	*used += (size_t)len + 1;
	*s = dst;
	return 0;
}

/* An array header: u32 count, u32 entry size (>= min_entry); checks that
 * count entries fit, by division so that count * size cannot overflow. */
static int take_array(struct cursor *c, uint32_t *count, uint32_t *entry_size, uint32_t min_entry,
		      const char *field)
{
	if (take_u32(c, count, field) < 0 || take_u32(c, entry_size, field) < 0)
		return -1;
	if (*entry_size < min_entry)
		return corrupt(c->r, c->offset, "%s record: %s entry size %" PRIu32 " is below %" PRIu32,
			       c->record, field, *entry_size, min_entry);
	if (*count > (c->size - c->at) / *entry_size)
		return corrupt(c->r, c->offset, "%s record (%zu bytes): %" PRIu32 " %s of %" PRIu32
			       " bytes do not fit", c->record, c->size, *count, field, *entry_size);
	return 0;
}

/* Grow a reader-owned array to hold n entries of `size` bytes. */
static int reserve(struct trace_reader *r, void **array, size_t *cap, size_t n, size_t size)
{
	if (n <= *cap)
		return 0;
	size_t want_cap = *cap ? *cap : 64;
	while (want_cap < n)
		want_cap *= 2;
	void *p = realloc(*array, want_cap * size);
	if (!p)
		return corrupt(r, r->buf_offset + r->pos, "out of memory");
	*array = p;
	*cap = want_cap;
	return 0;
}

static int parse_meta(struct cursor *c, struct trace_meta *m)
{
	size_t used = 0;
	if (take_string(c, &m->key, &used, "key") < 0)
		return -1;
	return take_string(c, &m->value, &used, "value");
}

static int parse_module(struct cursor *c, struct trace_module *m)
{
	struct trace_reader *r = c->r;
	size_t used = 0;
	uint32_t nsegments, entry_size;
	if (take_u32(c, &m->pid, "pid") < 0 || take_u32(c, &m->id, "id") < 0 ||
	    take_u64(c, &m->time_ns, "time_ns") < 0 || take_u64(c, &m->load_bias, "load_bias") < 0 ||
	    take_string(c, &m->path, &used, "path") < 0 ||
	    take_bytes(c, &m->build_id, &m->build_id_len, "build_id") < 0 ||
	    take_array(c, &nsegments, &entry_size, TRACE_SEGMENT_ENTRY_SIZE, "segments") < 0)
		return -1;
	if (m->build_id_len == 0)
		m->build_id = NULL;
	if (reserve(r, (void **)&r->segments, &r->segments_cap, nsegments, sizeof *r->segments) < 0)
		return -1;
	const uint8_t *p = c->p + c->at;
	for (uint32_t i = 0; i < nsegments; i++, p += entry_size) {
		struct trace_segment *s = &r->segments[i];
		s->vaddr = trace_get_u64(p);
		s->memsz = trace_get_u64(p + 8);
		s->file_offset = trace_get_u64(p + 16);
		s->flags = trace_get_u32(p + 24);
	}
	m->nsegments = nsegments;
	m->segments = r->segments;
	return 0;
}

static int parse_unload(struct cursor *c, struct trace_module_unload *u)
{
	if (take_u32(c, &u->pid, "pid") < 0 || take_u32(c, &u->id, "id") < 0)
		return -1;
	return take_u64(c, &u->time_ns, "time_ns");
}

static int parse_thread(struct cursor *c, struct trace_thread *t)
{
	size_t used = 0;
	if (take_u32(c, &t->pid, "pid") < 0 || take_u32(c, &t->tid, "tid") < 0 ||
	    take_u64(c, &t->time_ns, "time_ns") < 0 || take_u32(c, &t->flags, "flags") < 0 ||
	    take_string(c, &t->name, &used, "name") < 0)
		return -1;
	t->cpu_ns = 0;
	/* 1.2 appended the thread's measured CPU time. */
	return c->r->minor >= 2 ? take_u64(c, &t->cpu_ns, "cpu_ns") : 0;
}

static int parse_stack(struct cursor *c, struct trace_stack *s)
{
	struct trace_reader *r = c->r;
	if (take_u32(c, &s->id, "id") < 0 || take_u32(c, &s->flags, "flags") < 0 ||
	    take_u32(c, &s->nframes, "nframes") < 0)
		return -1;
	if (s->nframes > (c->size - c->at) / 8)
		return corrupt(r, c->offset, "STACK record (%zu bytes): %" PRIu32 " frames do not fit",
			       c->size, s->nframes);
	if (reserve(r, (void **)&r->ips, &r->ips_cap, s->nframes, sizeof *r->ips) < 0)
		return -1;
	const uint8_t *p = c->p + c->at;
	for (uint32_t i = 0; i < s->nframes; i++)
		r->ips[i] = trace_get_u64(p + 8 * (size_t)i);
	s->ips = r->ips;
	return 0;
}

/* The hot loop of analyze: decode a batch into the reused sample array. */
static int parse_samples(struct cursor *c, struct trace_samples *s)
{
	struct trace_reader *r = c->r;
	uint32_t count, entry_size;
	/* 1.4 appended the system call: required from then on. */
	int has_syscall = r->minor >= 4;
	if (take_array(c, &count, &entry_size, has_syscall ? TRACE_SAMPLE_ENTRY_SIZE : TRACE_SAMPLE_ENTRY_SIZE_1_0,
		       "samples") < 0)
		return -1;
	if (reserve(r, (void **)&r->samples, &r->samples_cap, count, sizeof *r->samples) < 0)
		return -1;
	const uint8_t *p = c->p + c->at;
	struct trace_sample *out = r->samples;
	uint64_t time_ns = 0; /* entries carry the delta from the previous one */
	for (uint32_t i = 0; i < count; i++, p += entry_size) {
		time_ns += trace_get_u64(p);
		out[i].time_ns = time_ns;
		out[i].pid = trace_get_u32(p + 8);
		out[i].tid = trace_get_u32(p + 12);
		out[i].stack_id = trace_get_u32(p + 16);
		out[i].weight = trace_get_u32(p + 20);
		out[i].state = trace_get_u32(p + 24);
		out[i].syscall = has_syscall ? (int32_t)trace_get_u32(p + 28) : -1;
	}
	s->count = count;
	s->samples = out;
	return 0;
}

static int parse_loss(struct cursor *c, struct trace_loss *l)
{
	if (take_u32(c, &l->pid, "pid") < 0 || take_u32(c, &l->tid, "tid") < 0 ||
	    take_u64(c, &l->time_ns, "time_ns") < 0)
		return -1;
	return take_u64(c, &l->samples, "samples");
}

static int parse_end(struct cursor *c, struct trace_end *e)
{
	uint32_t status;
	if (take_u64(c, &e->time_ns, "time_ns") < 0 || take_u32(c, &status, "wait_status") < 0 ||
	    take_u32(c, &e->flags, "flags") < 0 || take_u64(c, &e->samples, "samples") < 0 ||
	    take_u64(c, &e->weight, "weight") < 0)
		return -1;
	e->wait_status = (int32_t)status;
	e->agent_ns = e->agent_signals = e->exited_unsampled = 0;
	if (take_u64(c, &e->lost_samples, "lost_samples") < 0)
		return -1;
	/* 1.2 appended what the agent's signal handler cost. */
	if (c->r->minor < 2)
		return 0;
	if (take_u64(c, &e->agent_ns, "agent_ns") < 0 || take_u64(c, &e->agent_signals, "agent_signals") < 0)
		return -1;
	/* 1.4 appended the wall sampler's count of threads gone before their sample. */
	return c->r->minor >= 4 ? take_u64(c, &e->exited_unsampled, "exited_unsampled") : 0;
}

static int parse_process(struct cursor *c, struct trace_process *p)
{
	size_t used = 0;
	uint32_t status;
	if (take_u32(c, &p->pid, "pid") < 0 || take_u32(c, &p->parent_pid, "parent_pid") < 0 ||
	    take_u64(c, &p->time_ns, "time_ns") < 0 || take_u32(c, &p->kind, "kind") < 0 ||
	    take_u32(c, &status, "wait_status") < 0 || take_string(c, &p->path, &used, "path") < 0 ||
	    take_string(c, &p->command, &used, "command") < 0 || take_u32(c, &p->flags, "flags") < 0)
		return -1;
	p->wait_status = (int32_t)status;
	return take_string(c, &p->reason, &used, "reason");
}

static int parse_jit_map(struct cursor *c, struct trace_jit_map *j)
{
	size_t used = 0;
	uint32_t flags;
	if (take_u32(c, &j->pid, "pid") < 0 || take_u32(c, &flags, "flags") < 0 ||
	    take_u64(c, &j->time_ns, "time_ns") < 0 || take_string(c, &j->path, &used, "path") < 0)
		return -1;
	return take_bytes(c, &j->text, &j->text_len, "text");
}

static inline int take_varint(struct cursor *c, uint64_t *out)
{
	/* Most fields are deltas of one byte: that case first, without the loop. */
	if (__builtin_expect(c->at < c->size && !(c->p[c->at] & 0x80), 1)) {
		*out = c->p[c->at++];
		return 0;
	}
	uint64_t v = 0;
	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (c->at >= c->size)
			return corrupt(c->r, c->offset, "%s record (%zu bytes): an entry is cut short", c->record,
				       c->size);
		uint8_t b = c->p[c->at++];
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			return 0;
		}
	}
	return corrupt(c->r, c->offset, "%s record: a number longer than 64 bits", c->record);
}

static uint64_t unzigzag(uint64_t v)
{
	return (v >> 1) ^ (uint64_t)-(int64_t)(v & 1);
}

/* 1.3: varint entries, each field a delta from the previous entry's (TRACE_FORMAT.md). */
static int parse_allocs(struct cursor *c, struct trace_allocs *a)
{
	struct trace_reader *r = c->r;
	uint32_t count;
	uint64_t seq, time_ns, address = 0, tid = 0;
	if (take_u32(c, &a->pid, "pid") < 0 || take_u32(c, &count, "count") < 0 ||
	    take_u64(c, &seq, "first_seq") < 0 || take_u64(c, &time_ns, "first_time_ns") < 0)
		return -1;
	if (count > (c->size - c->at) / TRACE_ALLOCS_MIN_ENTRY)
		return corrupt(r, c->offset, "ALLOCS record (%zu bytes): %" PRIu32 " entries do not fit", c->size,
			       count);
	if (reserve(r, (void **)&r->heap, &r->heap_cap, count, sizeof *r->heap) < 0)
		return -1;
	for (uint32_t i = 0; i < count; i++) {
		struct trace_heap_event *e = &r->heap[i];
		uint64_t op = 0, d_seq = 0, d_tid = 0, d_time = 0, d_address = 0;
		if (take_varint(c, &op) < 0 || take_varint(c, &d_seq) < 0 || take_varint(c, &d_tid) < 0 ||
		    take_varint(c, &d_time) < 0 || take_varint(c, &d_address) < 0)
			return -1;
		seq += unzigzag(d_seq);
		tid += unzigzag(d_tid);
		time_ns += unzigzag(d_time);
		address += unzigzag(d_address);
		e->seq = seq;
		e->tid = (uint32_t)tid;
		e->time_ns = time_ns;
		e->address = address;
		e->kind = (uint32_t)(op & 15);
		e->flags = (uint32_t)((op >> 4) & 31);
		e->size = 0;
		e->stack_id = 0;
		if (e->kind != TRACE_HEAP_FREE && e->kind != TRACE_HEAP_NONE) {
			uint64_t stack = 0;
			if (take_varint(c, &e->size) < 0 || take_varint(c, &stack) < 0)
				return -1;
			e->stack_id = stack > UINT32_MAX ? UINT32_MAX : (uint32_t)stack;
		}
	}
	a->count = count;
	a->events = r->heap;
	return 0;
}

static int is_allocation(uint32_t kind)
{
	return kind != TRACE_HEAP_FREE && kind != TRACE_HEAP_NONE;
}

/* ALLOCS_PACKED: the ALLOCS fields column by column, and each free as a
 * reference to its allocation, resolved through the process's live blocks
 * (trace_heap_refs.c). Handed out as an ALLOCS record. */
static int parse_allocs_packed(struct cursor *c, struct trace_allocs *a)
{
	struct trace_reader *r = c->r;
	uint32_t count;
	uint64_t seq, time_ns, v = 0;
	if (take_u32(c, &a->pid, "pid") < 0 || take_u32(c, &count, "count") < 0 ||
	    take_u64(c, &seq, "first_seq") < 0 || take_u64(c, &time_ns, "first_time_ns") < 0)
		return -1;
	if (count > (c->size - c->at) / TRACE_ALLOCS_PACKED_MIN_ENTRY)
		return corrupt(r, c->offset, "ALLOCS_PACKED record (%zu bytes): %" PRIu32 " entries do not fit",
			       c->size, count);
	if (reserve(r, (void **)&r->heap, &r->heap_cap, count, sizeof *r->heap) < 0)
		return -1;
	struct trace_heap_proc *proc = trace_heap_proc_get(&r->heap_procs, a->pid);
	if (!proc)
		return corrupt(r, c->offset, "out of memory");
	struct trace_heap_event *ev = r->heap;
	if (count)
		memset(ev, 0, count * sizeof *ev);
	for (uint32_t i = 0; i < count; i++) {
		if (take_varint(c, &v) < 0)
			return -1;
		ev[i].kind = (uint32_t)(v & 15);
		ev[i].flags = (uint32_t)((v >> 4) & 31);
	}
	for (uint32_t i = 0; i < count; i++) {
		if (take_varint(c, &v) < 0)
			return -1;
		ev[i].seq = seq += unzigzag(v);
	}
	uint64_t tid = 0;
	for (uint32_t i = 0; i < count; i++) {
		if (take_varint(c, &v) < 0)
			return -1;
		tid += unzigzag(v);
		ev[i].tid = (uint32_t)tid;
	}
	for (uint32_t i = 0; i < count; i++) {
		if (take_varint(c, &v) < 0)
			return -1;
		ev[i].time_ns = time_ns += unzigzag(v);
	}
	for (uint32_t i = 0; i < count; i++)
		if (is_allocation(ev[i].kind) && take_varint(c, &ev[i].size) < 0)
			return -1;
	for (uint32_t i = 0; i < count; i++)
		if (is_allocation(ev[i].kind)) {
			if (take_varint(c, &v) < 0)
				return -1;
			ev[i].stack_id = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
		}
	/* The reference columns resolve in entry order (an allocation may name a
	 * free before it, a free an allocation before it): find where each of
	 * the four starts, then read them side by side. */
	struct cursor alloc_ref = *c, alloc_addr, free_ref, free_addr;
	uint64_t n_alloc_addr = 0, n_free_addr = 0;
	for (uint32_t i = 0; i < count; i++)
		if (is_allocation(ev[i].kind)) {
			if (take_varint(c, &v) < 0)
				return -1;
			n_alloc_addr += !v;
		}
	alloc_addr = *c;
	for (uint64_t i = 0; i < n_alloc_addr; i++)
		if (take_varint(c, &v) < 0)
			return -1;
	free_ref = *c;
	for (uint32_t i = 0; i < count; i++)
		if (ev[i].kind == TRACE_HEAP_FREE) {
			if (take_varint(c, &v) < 0)
				return -1;
			n_free_addr += !v;
		}
	free_addr = *c;
	for (uint64_t i = 0; i < n_free_addr; i++)
		if (take_varint(c, &v) < 0)
			return -1;
	uint64_t alloc_address = 0, free_address = 0, previous = proc->next_ordinal;
	for (uint32_t i = 0; i < count; i++) {
		struct trace_heap_event *e = &ev[i];
		if (is_allocation(e->kind)) {
			take_varint(&alloc_ref, &v); /* these were all read once above: they are there */
			if (v) {
				uint64_t *slot = &proc->freed[(proc->nfreed - v) % TRACE_HEAP_FREED];
				if (v > TRACE_HEAP_FREED || v > proc->nfreed || !*slot)
					return corrupt(r, c->offset, "ALLOCS_PACKED record: an allocation names free %" PRIu64
						       " back, which is not there", v);
				e->address = *slot;
				*slot = 0;
			} else {
				take_varint(&alloc_addr, &v);
				e->address = alloc_address += unzigzag(v);
			}
			uint64_t ordinal = proc->next_ordinal++;
			if (e->address && trace_heap_table_put(&proc->live, ordinal + 1, e->address) < 0)
				return corrupt(r, c->offset, "out of memory");
		} else if (e->kind == TRACE_HEAP_FREE) {
			take_varint(&free_ref, &v);
			if (v) {
				uint64_t ordinal = previous + unzigzag(v - 1);
				if (!trace_heap_table_take(&proc->live, ordinal + 1, &e->address))
					return corrupt(r, c->offset, "ALLOCS_PACKED record: a free of allocation %" PRIu64
						       " of process %" PRIu32 ", which is not live", ordinal, a->pid);
				previous = ordinal;
			} else {
				take_varint(&free_addr, &v);
				e->address = free_address += unzigzag(v);
			}
			trace_heap_freed_push(proc, e->address);
		}
	}
	a->count = count;
	a->events = ev;
	return 0;
}

static const char *const record_names[] = {
	[TRACE_META] = "META",         [TRACE_MODULE] = "MODULE", [TRACE_MODULE_UNLOAD] = "MODULE_UNLOAD",
	[TRACE_THREAD] = "THREAD",     [TRACE_STACK] = "STACK",   [TRACE_SAMPLES] = "SAMPLES",
	[TRACE_LOSS] = "LOSS",         [TRACE_END] = "END",       [TRACE_JIT_MAP] = "JIT_MAP",
	[TRACE_PROCESS] = "PROCESS",
	[TRACE_ALLOCS] = "ALLOCS",     [TRACE_ALLOCS_PACKED] = "ALLOCS_PACKED",
};

static int parse_record(struct cursor *c, enum trace_type type, struct trace_record *rec)
{
	switch (type) {
	case TRACE_META:
		return parse_meta(c, &rec->u.meta);
	case TRACE_MODULE:
		return parse_module(c, &rec->u.module);
	case TRACE_MODULE_UNLOAD:
		return parse_unload(c, &rec->u.unload);
	case TRACE_THREAD:
		return parse_thread(c, &rec->u.thread);
	case TRACE_STACK:
		return parse_stack(c, &rec->u.stack);
	case TRACE_SAMPLES:
		return parse_samples(c, &rec->u.samples);
	case TRACE_LOSS:
		return parse_loss(c, &rec->u.loss);
	case TRACE_END:
		return parse_end(c, &rec->u.end);
	case TRACE_JIT_MAP:
		return parse_jit_map(c, &rec->u.jit_map);
	case TRACE_PROCESS:
		return parse_process(c, &rec->u.process);
	case TRACE_ALLOCS:
		return parse_allocs(c, &rec->u.allocs);
	case TRACE_ALLOCS_PACKED:
		if (parse_allocs_packed(c, &rec->u.allocs) < 0)
			return -1;
		rec->type = TRACE_ALLOCS; /* the same events, however encoded */
		return 0;
	}
	return -1;
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
			return corrupt(r, offset, "record type 0 (zeroed or corrupt data)");
		if (size > TRACE_RECORD_MAX_PAYLOAD)
			return corrupt(r, offset, "record type %u claims %" PRIu32 " bytes (limit %u)", type,
				       size, TRACE_RECORD_MAX_PAYLOAD);
		int known = type < sizeof record_names / sizeof record_names[0] && record_names[type];
		if (!known && (flags & TRACE_RECORD_FLAG_REQUIRED))
			return corrupt(r, offset, "record type %u is required but unknown to this reader", type);
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
		if (reserve(r, (void **)&r->strings, &r->strings_cap, (size_t)size + 8, 1) < 0)
			return -1;
		struct cursor c = {
			.r = r, .p = h + TRACE_RECORD_HEADER_SIZE, .size = size,
			.offset = offset, .record = record_names[type],
		};
		memset(rec, 0, sizeof *rec);
		rec->type = (enum trace_type)type;
		rec->offset = offset;
		if (parse_record(&c, rec->type, rec) < 0)
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
