/*
 * trace_test_support.c - the hand encoder, zstd helpers, small trace and
 * reader loop the trace unit tests share (see trace_test_support.h).
 */
#include "trace_test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#define CHECK_STOP_AT_FIRST_FAILURE /* later steps use what earlier ones built */
#include "check.h"

/* ---- a growable byte buffer and the hand encoder of the layout ---- */

void put(struct bytes *b, const void *data, size_t n)
{
	if (b->cap - b->len < n) {
		b->cap = (b->cap + n) * 2;
		b->p = realloc(b->p, b->cap);
		CHECK(b->p != NULL);
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
}

/* Little-endian by construction, whatever the host. */
void put_le(struct bytes *b, uint64_t v, int size)
{
	uint8_t le[8];
	for (int i = 0; i < size; i++)
		le[i] = (uint8_t)(v >> (8 * i));
	put(b, le, (size_t)size);
}

void put_string(struct bytes *b, const char *s)
{
	put_le(b, strlen(s), 4);
	put(b, s, strlen(s));
}

void put_file_header(struct bytes *b, unsigned major, unsigned minor, uint32_t header_size)
{
	put(b, "IPSCOPE\x1a", 8);
	put_le(b, major, 2);
	put_le(b, minor, 2);
	put_le(b, header_size, 4);
	for (uint32_t i = 16; i < header_size; i++)
		put_le(b, 0xee, 1);
}

/* Records: begin writes the header with a zero length that end patches. */
size_t begin_record(struct bytes *b, unsigned type, unsigned flags)
{
	put_le(b, type, 2);
	put_le(b, flags, 2);
	put_le(b, 0, 4);
	return b->len;
}

void end_record(struct bytes *b, size_t payload_start)
{
	uint32_t len = (uint32_t)(b->len - payload_start);
	for (int i = 0; i < 4; i++)
		b->p[payload_start - 4 + i] = (uint8_t)(len >> (8 * i));
}

void put_end_record(struct bytes *b)
{
	size_t at = begin_record(b, TRACE_END, 0);
	put_le(b, 99, 8);
	put_le(b, 0, 4);
	put_le(b, TRACE_END_EXITED, 4);
	put_le(b, 1, 8);
	put_le(b, 1, 8);
	put_le(b, 0, 8);
	end_record(b, at);
}


struct bytes zstd_compress(const struct bytes *raw)
{
	struct bytes z = { 0 };
	z.cap = ZSTD_compressBound(raw->len);
	z.p = malloc(z.cap);
	z.len = ZSTD_compress(z.p, z.cap, raw->p, raw->len, 1);
	CHECK(!ZSTD_isError(z.len));
	return z;
}

struct bytes zstd_decompress(const struct bytes *z)
{
	struct bytes raw = { 0 };
	ZSTD_DCtx *d = ZSTD_createDCtx();
	ZSTD_inBuffer in = { z->p, z->len, 0 };
	uint8_t chunk[65536];
	while (in.pos < in.size) {
		ZSTD_outBuffer out = { chunk, sizeof chunk, 0 };
		size_t r = ZSTD_decompressStream(d, &out, &in);
		CHECK(!ZSTD_isError(r));
		put(&raw, chunk, out.pos);
	}
	ZSTD_freeDCtx(d);
	return raw;
}

/* ---- writing a trace through the writer, into memory ---- */

/* The writer wants an fd: a memfd gives one without touching the disk. */
struct bytes fd_contents(int fd)
{
	struct bytes b = { 0 };
	off_t size = lseek(fd, 0, SEEK_END);
	CHECK(size >= 0);
	b.len = b.cap = (size_t)size;
	b.p = malloc(b.cap + 1);
	CHECK(pread(fd, b.p, b.len, 0) == (ssize_t)b.len);
	close(fd);
	return b;
}

int new_memfd(void)
{
	int fd = memfd_create("trace", 0);
	CHECK(fd >= 0);
	return fd;
}

static uint64_t rng_state = 88172645463325252ull;

void rng_seed(uint64_t seed)
{
	rng_state = seed;
}

uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static const uint8_t build_id[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6,
				      7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
static const struct trace_segment segments[3] = {
	{ 0, 0x1000, 0, TRACE_SEGMENT_READ },
	{ 0x1000, 0x5432, 0x1000, TRACE_SEGMENT_READ | TRACE_SEGMENT_EXEC },
	{ 0x8000, 0x123, 0x7000, TRACE_SEGMENT_READ | TRACE_SEGMENT_WRITE },
};
static const uint64_t stack_ips[5] = { 0x401234, 0x401000, 0x7f0000001234, 0, UINT64_MAX };

static struct trace_sample make_sample(uint32_t i)
{
	struct trace_sample s = { 1000000000ull + i * 1000003ull, 42, 42 + i % 3, i % 2,
				  1 + i % 4, i % 5 == 0 ? 0 : i % 3 };
	return s;
}

/* Every record type, with flushes in between; `flush_sizes` gets the
 * compressed size after each flush (cut there, exactly what came before
 * must be read). */
/* Any bytes, NUL included: the map is copied as the runtime wrote it. */
static const char jit_text[] = "7f0000001000 40 JS:*hot /app.js:1:1\n\0garbage\n";

struct bytes write_small_trace(uint64_t flush_sizes[4], int flush_records[4])
{
	int fd = new_memfd();
	struct trace_writer *w = trace_writer_open(fd, 3);
	CHECK(w != NULL);
	int records = 0, flushes = 0;
#define FLUSH_POINT()                                                       \
	do {                                                                \
		CHECK(trace_writer_flush(w) == 0);                          \
		flush_sizes[flushes] = trace_writer_compressed_bytes(w);    \
		flush_records[flushes++] = records;                         \
	} while (0)
	CHECK(trace_writer_meta(w, TRACE_META_COMMAND, "./app 'a b' c") == 0), records++;
	CHECK(trace_writer_meta(w, "empty", "") == 0), records++;
	struct trace_module m = { 42, 1, 5, 0x555555554000, "/usr/bin/app", build_id, sizeof build_id,
				  3, segments };
	CHECK(trace_writer_module(w, &m) == 0), records++;
	struct trace_module m2 = { 42, 2, 6, 0x7f0000000000, "libnothing.so", NULL, 0, 0, NULL };
	CHECK(trace_writer_module(w, &m2) == 0), records++;
	struct trace_thread t = { 42, 42, 7, TRACE_THREAD_START | TRACE_THREAD_NAME, "main", 1000 };
	CHECK(trace_writer_thread(w, &t) == 0), records++;
	FLUSH_POINT();
	struct trace_stack s0 = { 0, TRACE_STACK_LEAF_EXACT, 5, stack_ips };
	struct trace_stack s1 = { 1, TRACE_STACK_TRUNCATED, 0, NULL };
	CHECK(trace_writer_stack(w, &s0) == 0), records++;
	CHECK(trace_writer_stack(w, &s1) == 0), records++;
	for (uint32_t i = 0; i < 10; i++) {
		struct trace_sample smp = make_sample(i);
		CHECK(trace_writer_sample(w, &smp) == 0);
	}
	records++; /* one batch, closed by the next record */
	struct trace_loss l = { 42, 43, 8, 17 };
	CHECK(trace_writer_loss(w, &l) == 0), records++;
	FLUSH_POINT();
	for (uint32_t i = 10; i < 20; i++) {
		struct trace_sample smp = make_sample(i);
		CHECK(trace_writer_sample(w, &smp) == 0);
	}
	records++; /* closed by the flush */
	FLUSH_POINT();
	struct trace_module_unload u = { 42, 2, 9 };
	CHECK(trace_writer_module_unload(w, &u) == 0), records++;
	struct trace_thread t2 = { 42, 43, 10, TRACE_THREAD_EXIT, "", 123456789012ull };
	CHECK(trace_writer_thread(w, &t2) == 0), records++;
	struct trace_jit_map j = { 42, 10, "/tmp/perf-42.map", (const uint8_t *)jit_text,
				   sizeof jit_text - 1 };
	CHECK(trace_writer_jit_map(w, &j) == 0), records++;
	FLUSH_POINT();
#undef FLUSH_POINT
	struct trace_end e = { 11, 3 << 8, TRACE_END_EXITED, 20, 50, 17, 4242, 21 };
	CHECK(trace_writer_close(w, &e) == 0);
	return fd_contents(fd);
}

/* The expected records of write_small_trace, checked one by one. */
void check_small_record(int index, const struct trace_record *r)
{
	static const enum trace_type types[] = {
		TRACE_META, TRACE_META, TRACE_MODULE, TRACE_MODULE, TRACE_THREAD,
		TRACE_STACK, TRACE_STACK, TRACE_SAMPLES, TRACE_LOSS, TRACE_SAMPLES,
		TRACE_MODULE_UNLOAD, TRACE_THREAD, TRACE_JIT_MAP, TRACE_END,
	};
	CHECKF(index < 14 && r->type == types[index], "record %d type %d", index, r->type);
	switch (index) {
	case 0:
		CHECK(!strcmp(r->u.meta.key, "command") && !strcmp(r->u.meta.value, "./app 'a b' c"));
		break;
	case 1:
		CHECK(!strcmp(r->u.meta.key, "empty") && !strcmp(r->u.meta.value, ""));
		break;
	case 2: {
		const struct trace_module *m = &r->u.module;
		CHECK(m->pid == 42 && m->id == 1 && m->time_ns == 5 && m->load_bias == 0x555555554000);
		CHECK(!strcmp(m->path, "/usr/bin/app"));
		CHECK(m->build_id_len == 20 && !memcmp(m->build_id, build_id, 20));
		CHECK(m->nsegments == 3);
		for (int i = 0; i < 3; i++) /* fields, not memcmp: the struct has padding */
			CHECK(m->segments[i].vaddr == segments[i].vaddr &&
			      m->segments[i].memsz == segments[i].memsz &&
			      m->segments[i].file_offset == segments[i].file_offset &&
			      m->segments[i].flags == segments[i].flags);
		break;
	}
	case 3:
		CHECK(r->u.module.id == 2 && !strcmp(r->u.module.path, "libnothing.so"));
		CHECK(r->u.module.build_id == NULL && r->u.module.build_id_len == 0);
		CHECK(r->u.module.nsegments == 0);
		break;
	case 4:
		CHECK(r->u.thread.pid == 42 && r->u.thread.tid == 42 && r->u.thread.time_ns == 7);
		CHECK(r->u.thread.flags == (TRACE_THREAD_START | TRACE_THREAD_NAME));
		CHECK(!strcmp(r->u.thread.name, "main") && r->u.thread.cpu_ns == 1000);
		break;
	case 5:
		CHECK(r->u.stack.id == 0 && r->u.stack.flags == TRACE_STACK_LEAF_EXACT);
		CHECK(r->u.stack.nframes == 5 && !memcmp(r->u.stack.ips, stack_ips, sizeof stack_ips));
		break;
	case 6:
		CHECK(r->u.stack.id == 1 && r->u.stack.flags == TRACE_STACK_TRUNCATED);
		CHECK(r->u.stack.nframes == 0);
		break;
	case 7:
	case 9:
		CHECK(r->u.samples.count == 10);
		for (uint32_t i = 0; i < 10; i++) {
			struct trace_sample want = make_sample(i + (index == 9 ? 10 : 0));
			const struct trace_sample *got = &r->u.samples.samples[i];
			CHECK(got->time_ns == want.time_ns && got->pid == want.pid && got->tid == want.tid &&
			      got->stack_id == want.stack_id && got->weight == want.weight &&
			      got->state == want.state);
		}
		break;
	case 8:
		CHECK(r->u.loss.pid == 42 && r->u.loss.tid == 43 && r->u.loss.time_ns == 8 &&
		      r->u.loss.samples == 17);
		break;
	case 10:
		CHECK(r->u.unload.pid == 42 && r->u.unload.id == 2 && r->u.unload.time_ns == 9);
		break;
	case 11:
		CHECK(r->u.thread.tid == 43 && r->u.thread.flags == TRACE_THREAD_EXIT);
		CHECK(!strcmp(r->u.thread.name, "") && r->u.thread.cpu_ns == 123456789012ull);
		break;
	case 12:
		CHECK(r->u.jit_map.pid == 42 && r->u.jit_map.time_ns == 10);
		CHECK(!strcmp(r->u.jit_map.path, "/tmp/perf-42.map"));
		CHECK(r->u.jit_map.text_len == sizeof jit_text - 1 &&
		      !memcmp(r->u.jit_map.text, jit_text, sizeof jit_text - 1));
		break;
	case 13:
		CHECK(r->u.end.time_ns == 11 && r->u.end.wait_status == (3 << 8));
		CHECK(r->u.end.flags == TRACE_END_EXITED && r->u.end.samples == 20);
		CHECK(r->u.end.weight == 50 && r->u.end.lost_samples == 17);
		CHECK(r->u.end.agent_ns == 4242 && r->u.end.agent_signals == 21);
		break;
	}
}

/* ---- reading ---- */

/* Read data to the end; with `small`, every record is checked against
 * write_small_trace (which a damaged file must still agree with). */
struct outcome read_memory(const void *data, size_t size, int small)
{
	struct outcome o = { 0 };
	struct trace_reader *r = trace_reader_open_memory(data, size, "t.zst", o.message, sizeof o.message);
	if (!r) {
		o.last = -2;
		return o;
	}
	struct trace_record rec;
	while ((o.last = trace_reader_next(r, &rec)) > 0) {
		if (small)
			check_small_record(o.records, &rec);
		o.records++;
		CHECK(o.records < 10000000); /* nothing here has that many records */
	}
	o.truncated = trace_reader_truncated(r);
	snprintf(o.message, sizeof o.message, "%s", trace_reader_error(r));
	/* After the end, the reader stays at the end. */
	CHECK(trace_reader_next(r, &rec) == o.last);
	trace_reader_close(r);
	return o;
}
