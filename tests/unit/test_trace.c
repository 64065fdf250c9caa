/*
 * test_trace.c - unit tests of the trace writer and reader (ctest unit_trace).
 *
 * Besides round trips through the writer, the tests build streams by hand
 * from TRACE_FORMAT.md (a second, independent encoder of the layout) to check
 * what the writer never produces: unknown record types, newer versions, longer
 * records from later minor versions and a catalogue of corrupt records.
 * Damaged input (cuts at every offset, bit flips) must give an error or a
 * prefix of the records, never a crash or a hang; run it under ASan/UBSan too.
 */
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#define CHECK_STOP_AT_FIRST_FAILURE /* later steps use what earlier ones built */
#include "check.h"

/* CPU time: the rates printed stay meaningful on a busy machine. */
static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ---- a growable byte buffer and the hand encoder of the layout ---- */

struct bytes {
	uint8_t *p;
	size_t len, cap;
};

static void put(struct bytes *b, const void *data, size_t n)
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
static void put_le(struct bytes *b, uint64_t v, int size)
{
	uint8_t le[8];
	for (int i = 0; i < size; i++)
		le[i] = (uint8_t)(v >> (8 * i));
	put(b, le, (size_t)size);
}

static void put_string(struct bytes *b, const char *s)
{
	put_le(b, strlen(s), 4);
	put(b, s, strlen(s));
}

static void put_file_header(struct bytes *b, unsigned major, unsigned minor, uint32_t header_size)
{
	put(b, "IPSCOPE\x1a", 8);
	put_le(b, major, 2);
	put_le(b, minor, 2);
	put_le(b, header_size, 4);
	for (uint32_t i = 16; i < header_size; i++)
		put_le(b, 0xee, 1);
}

/* Records: begin writes the header with a zero length that end patches. */
static size_t begin_record(struct bytes *b, unsigned type, unsigned flags)
{
	put_le(b, type, 2);
	put_le(b, flags, 2);
	put_le(b, 0, 4);
	return b->len;
}

static void end_record(struct bytes *b, size_t payload_start)
{
	uint32_t len = (uint32_t)(b->len - payload_start);
	for (int i = 0; i < 4; i++)
		b->p[payload_start - 4 + i] = (uint8_t)(len >> (8 * i));
}

static void put_end_record(struct bytes *b)
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

static struct bytes zstd_compress(const struct bytes *raw)
{
	struct bytes z = { 0 };
	z.cap = ZSTD_compressBound(raw->len);
	z.p = malloc(z.cap);
	z.len = ZSTD_compress(z.p, z.cap, raw->p, raw->len, 1);
	CHECK(!ZSTD_isError(z.len));
	return z;
}

static struct bytes zstd_decompress(const struct bytes *z)
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
static struct bytes fd_contents(int fd)
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

static int new_memfd(void)
{
	int fd = memfd_create("trace", 0);
	CHECK(fd >= 0);
	return fd;
}

static uint64_t rng_state = 88172645463325252ull;

static uint64_t rng(void)
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
static struct bytes write_small_trace(uint64_t flush_sizes[4], int flush_records[4])
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
	struct trace_thread t = { 42, 42, 7, TRACE_THREAD_START | TRACE_THREAD_NAME, "main" };
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
	struct trace_thread t2 = { 42, 43, 10, TRACE_THREAD_EXIT, "" };
	CHECK(trace_writer_thread(w, &t2) == 0), records++;
	FLUSH_POINT();
#undef FLUSH_POINT
	struct trace_end e = { 11, 3 << 8, TRACE_END_EXITED, 20, 50, 17 };
	CHECK(trace_writer_close(w, &e) == 0);
	return fd_contents(fd);
}

/* The expected records of write_small_trace, checked one by one. */
static void check_small_record(int index, const struct trace_record *r)
{
	static const enum trace_type types[] = {
		TRACE_META, TRACE_META, TRACE_MODULE, TRACE_MODULE, TRACE_THREAD,
		TRACE_STACK, TRACE_STACK, TRACE_SAMPLES, TRACE_LOSS, TRACE_SAMPLES,
		TRACE_MODULE_UNLOAD, TRACE_THREAD, TRACE_END,
	};
	CHECKF(index < 13 && r->type == types[index], "record %d type %d", index, r->type);
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
		CHECK(!strcmp(r->u.thread.name, "main"));
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
		CHECK(!strcmp(r->u.thread.name, ""));
		break;
	case 12:
		CHECK(r->u.end.time_ns == 11 && r->u.end.wait_status == (3 << 8));
		CHECK(r->u.end.flags == TRACE_END_EXITED && r->u.end.samples == 20);
		CHECK(r->u.end.weight == 50 && r->u.end.lost_samples == 17);
		break;
	}
}

/* ---- reading ---- */

struct outcome {
	int last;      /* last trace_reader_next result (-2: open failed) */
	int records;   /* records returned */
	int truncated;
	char message[512];
};

/* Read data to the end; with `small`, every record is checked against
 * write_small_trace (which a damaged file must still agree with). */
static struct outcome read_memory(const void *data, size_t size, int small)
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

static void test_round_trip(void)
{
	uint64_t flush_sizes[4];
	int flush_records[4];
	struct bytes z = write_small_trace(flush_sizes, flush_records);
	struct outcome o = read_memory(z.p, z.len, 1);
	CHECKF(o.last == 0 && o.records == 13 && !o.truncated, "last %d records %d: %s", o.last,
	       o.records, o.message);

	/* The same through a file and through stdin. */
	char path[] = "/tmp/test_trace_XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0 && write(fd, z.p, z.len) == (ssize_t)z.len);
	char err[256];
	struct trace_reader *r = trace_reader_open(path, err, sizeof err);
	CHECKF(r != NULL, "%s", err);
	struct trace_record rec;
	int n = 0;
	while (trace_reader_next(r, &rec) > 0)
		check_small_record(n++, &rec);
	CHECK(n == 13 && !trace_reader_truncated(r));
	CHECK(trace_reader_compressed_bytes(r) == z.len);
	unsigned major, minor;
	trace_reader_version(r, &major, &minor);
	CHECK(major == TRACE_VERSION_MAJOR && minor == TRACE_VERSION_MINOR);
	trace_reader_close(r);

	int saved_stdin = dup(0);
	CHECK(lseek(fd, 0, SEEK_SET) == 0 && dup2(fd, 0) == 0);
	r = trace_reader_open("-", err, sizeof err);
	CHECKF(r != NULL, "%s", err);
	for (n = 0; trace_reader_next(r, &rec) > 0;)
		check_small_record(n++, &rec);
	CHECK(n == 13);
	trace_reader_close(r);
	dup2(saved_stdin, 0);
	close(saved_stdin);
	close(fd);
	unlink(path);

	CHECK(trace_reader_open("/nonexistent/x.zst", err, sizeof err) == NULL);
	CHECKF(strstr(err, "/nonexistent/x.zst") != NULL, "%s", err);
	free(z.p);
}

/* A cut anywhere yields a prefix; a cut right after a flush yields exactly
 * the records written before it. */
static void test_cuts(void)
{
	uint64_t flush_sizes[4];
	int flush_records[4];
	struct bytes z = write_small_trace(flush_sizes, flush_records);
	int max_records = 0;
	for (size_t cut = 0; cut <= z.len; cut++) {
		struct outcome o = read_memory(z.p, cut, 1);
		CHECKF(o.last == 0, "cut %zu: %d %s", cut, o.last, o.message);
		CHECK(o.records >= max_records); /* longer prefixes never read less */
		max_records = o.records;
		CHECKF(o.truncated == (o.records < 13), "cut %zu: %d records", cut, o.records);
		if (o.truncated)
			CHECKF(strstr(o.message, "t.zst: truncated at offset ") == o.message &&
			       strstr(o.message, "(no END record)"), "%s", o.message);
		for (int i = 0; i < 4; i++)
			if (cut == flush_sizes[i])
				CHECKF(o.records == flush_records[i], "cut at flush %d: %d records", i, o.records);
	}
	CHECK(max_records == 13);
	free(z.p);
}

/* Damage must end in an error or a result, never a crash or a hang. Flips
 * in the compressed file mostly exercise zstd; flips in the decompressed
 * stream (recompressed) reach every field of the record parser. */
static void test_bit_flips(void)
{
	uint64_t flush_sizes[4];
	int flush_records[4];
	struct bytes z = write_small_trace(flush_sizes, flush_records);
	int errors = 0;
	for (size_t i = 0; i < z.len * 8; i++) {
		z.p[i / 8] ^= (uint8_t)(1u << (i % 8));
		struct outcome o = read_memory(z.p, z.len, 0);
		errors += o.last < 0;
		if (o.last < 0)
			CHECKF(strncmp(o.message, "t.zst: offset ", 14) == 0 && !strchr(o.message, '\n'),
			       "%s", o.message);
		z.p[i / 8] ^= (uint8_t)(1u << (i % 8));
	}
	CHECK(errors > 0);

	struct bytes raw = zstd_decompress(&z);
	static const uint8_t damage[] = { 0x01, 0x80, 0xff };
	for (size_t i = 0; i < raw.len; i++) {
		for (size_t d = 0; d < sizeof damage; d++) {
			raw.p[i] ^= damage[d];
			struct bytes bad = zstd_compress(&raw);
			read_memory(bad.p, bad.len, 0);
			free(bad.p);
			raw.p[i] ^= damage[d];
		}
	}
	free(raw.p);
	free(z.p);
}

static void test_large(void)
{
	const uint32_t nsamples = 1000000, nstacks = 1000;
	int fd = new_memfd();
	struct trace_writer *w = trace_writer_open(fd, 1);
	CHECK(w != NULL);
	uint64_t ips[32];
	for (uint32_t id = 0; id < nstacks; id++) {
		for (int f = 0; f < 32; f++)
			ips[f] = 0x400000 + id * 64 + (uint64_t)f * 0x1000;
		struct trace_stack s = { id, 0, 1 + id % 32, ips };
		CHECK(trace_writer_stack(w, &s) == 0);
	}
	rng_state = 12345;
	uint64_t t = 1000000000ull;
	double t0 = now();
	for (uint32_t i = 0; i < nsamples; i++) {
		uint64_t x = rng();
		t += 1000000 + x % 20000;
		struct trace_sample s = { t, 7, 7 + (uint32_t)(x >> 20) % 4, (uint32_t)(x >> 32) % nstacks,
					  1 + ((x >> 50) % 16 == 0), (uint32_t)(x >> 60) % 3 };
		CHECK(trace_writer_sample(w, &s) == 0);
		if (i == nsamples / 2) /* the autoflush has written most of it by now */
			CHECK(trace_writer_compressed_bytes(w) > trace_writer_raw_bytes(w) / 20);
	}
	double t1 = now();
	uint64_t raw_written = trace_writer_raw_bytes(w);
	struct trace_end e = { t, 0, TRACE_END_EXITED, nsamples, nsamples, 0 };
	CHECK(trace_writer_close(w, &e) == 0);
	struct bytes z = fd_contents(fd);

	/* Read it from a file, as analyze does (input larger than the read chunk). */
	char path[] = "/tmp/test_trace_large_XXXXXX", err[256];
	int file = mkstemp(path);
	CHECK(file >= 0 && write(file, z.p, z.len) == (ssize_t)z.len && close(file) == 0);
	struct trace_reader *r = trace_reader_open(path, err, sizeof err);
	CHECKF(r != NULL, "%s", err);
	unlink(path);
	struct trace_record rec;
	uint32_t seen = 0, stacks = 0;
	int ret;
	rng_state = 12345;
	t = 1000000000ull;
	double t2 = now();
	while ((ret = trace_reader_next(r, &rec)) > 0) {
		if (rec.type == TRACE_STACK) {
			CHECK(rec.u.stack.id == stacks && rec.u.stack.nframes == 1 + stacks % 32);
			CHECK(rec.u.stack.ips[rec.u.stack.nframes - 1] ==
			      0x400000 + stacks * 64 + (uint64_t)(rec.u.stack.nframes - 1) * 0x1000);
			stacks++;
		}
		if (rec.type != TRACE_SAMPLES)
			continue;
		for (uint32_t i = 0; i < rec.u.samples.count; i++, seen++) {
			const struct trace_sample *s = &rec.u.samples.samples[i];
			uint64_t x = rng();
			t += 1000000 + x % 20000;
			CHECKF(s->time_ns == t && s->pid == 7 && s->tid == 7 + (uint32_t)(x >> 20) % 4 &&
			       s->stack_id == (uint32_t)(x >> 32) % nstacks &&
			       s->weight == 1 + ((x >> 50) % 16 == 0) && s->state == (uint32_t)(x >> 60) % 3,
			       "sample %u", seen);
		}
	}
	double t3 = now();
	CHECKF(ret == 0 && !trace_reader_truncated(r), "%s", trace_reader_error(r));
	CHECK(seen == nsamples && stacks == nstacks);
	CHECK(trace_reader_compressed_bytes(r) == z.len);
	CHECK(trace_reader_raw_bytes(r) == raw_written + 8 + 40);
	trace_reader_close(r);
	printf("large: %u samples, write %.1f M/s, read+check %.1f M/s (CPU time), %.2f compressed bytes/sample\n",
	       nsamples, nsamples / (t1 - t0) / 1e6, nsamples / (t3 - t2) / 1e6, (double)z.len / nsamples);

	/* Cuts of a big trace land inside blocks of a long frame. */
	for (int i = 0; i < 100; i++) {
		size_t cut = (size_t)(rng() % z.len);
		struct outcome o = read_memory(z.p, cut, 0);
		CHECKF(o.last == 0 && o.truncated, "cut %zu: %s", cut, o.message);
		CHECK(o.records > 1000 || cut < z.len / 10);
	}
	free(z.p);
}

/* Read a hand-built stream; returns the outcome and checks its message. */
static struct outcome read_raw(struct bytes *raw)
{
	struct bytes z = zstd_compress(raw);
	struct outcome o = read_memory(z.p, z.len, 0);
	free(z.p);
	free(raw->p);
	memset(raw, 0, sizeof *raw);
	return o;
}

static void expect_corrupt(struct bytes *raw, const char *needle)
{
	struct outcome o = read_raw(raw);
	CHECKF(o.last < 0, "expected an error about '%s', got %d", needle, o.last);
	CHECKF(strstr(o.message, needle) != NULL && strncmp(o.message, "t.zst: offset ", 14) == 0,
	       "'%s' lacks '%s'", o.message, needle);
}

static void test_versions_and_unknown_records(void)
{
	struct bytes raw = { 0 };

	/* Unknown record types are skipped by length, even empty ones. */
	put_file_header(&raw, 1, 0, 16);
	size_t at = begin_record(&raw, 200, 0);
	for (int i = 0; i < 37; i++)
		put_le(&raw, (uint64_t)i, 1);
	end_record(&raw, at);
	at = begin_record(&raw, 0xffff, 0x8000);
	end_record(&raw, at);
	put_end_record(&raw);
	struct outcome o = read_raw(&raw);
	CHECKF(o.last == 0 && o.records == 1 && !o.truncated, "%d %d %s", o.last, o.records, o.message);

	/* ...unless flagged as required. */
	put_file_header(&raw, 1, 0, 16);
	at = begin_record(&raw, 201, 1);
	end_record(&raw, at);
	expect_corrupt(&raw, "required");

	/* A newer major version is refused at open with a clear message. */
	put_file_header(&raw, 2, 0, 16);
	put_end_record(&raw);
	o = read_raw(&raw);
	CHECK(o.last == -2);
	CHECKF(!strcmp(o.message, "t.zst: offset 8: trace format version 2.0 is newer than this reader "
				  "(1.0): use a newer ipscope"), "%s", o.message);

	/* A later minor version: longer header, extra fields at the end of
	 * records and of array entries. All of it is read, the extra ignored. */
	put_file_header(&raw, 1, 7, 24);
	at = begin_record(&raw, TRACE_THREAD, 0);
	put_le(&raw, 5, 4), put_le(&raw, 6, 4), put_le(&raw, 7, 8), put_le(&raw, 1, 4);
	put_string(&raw, "worker");
	put_le(&raw, 0xabcdef, 8); /* a field from the future */
	end_record(&raw, at);
	at = begin_record(&raw, TRACE_SAMPLES, 0);
	put_le(&raw, 2, 4), put_le(&raw, 36, 4);
	for (int i = 0; i < 2; i++) {
		put_le(&raw, i ? 1 : 100, 8), put_le(&raw, 5, 4), put_le(&raw, 6, 4); /* time deltas */
		put_le(&raw, 9, 4), put_le(&raw, 1, 4), put_le(&raw, 2, 4), put_le(&raw, 0x77, 8);
	}
	put_le(&raw, 0, 4); /* after the array too */
	end_record(&raw, at);
	at = begin_record(&raw, TRACE_MODULE, 0);
	put_le(&raw, 5, 4), put_le(&raw, 3, 4), put_le(&raw, 1, 8), put_le(&raw, 0x1000, 8);
	put_string(&raw, "/lib/x.so");
	put_le(&raw, 0, 4); /* no build id */
	put_le(&raw, 1, 4), put_le(&raw, 40, 4);
	put_le(&raw, 0x10, 8), put_le(&raw, 0x20, 8), put_le(&raw, 0x30, 8), put_le(&raw, 1, 4);
	put_le(&raw, 0, 8), put_le(&raw, 0, 4);
	end_record(&raw, at);
	put_end_record(&raw);
	struct bytes z = zstd_compress(&raw);
	char err[256];
	struct trace_reader *r = trace_reader_open_memory(z.p, z.len, "t.zst", err, sizeof err);
	CHECKF(r != NULL, "%s", err);
	unsigned major, minor;
	trace_reader_version(r, &major, &minor);
	CHECK(major == 1 && minor == 7);
	struct trace_record rec;
	CHECK(trace_reader_next(r, &rec) == 1 && rec.type == TRACE_THREAD && rec.offset == 24);
	CHECK(rec.u.thread.tid == 6 && !strcmp(rec.u.thread.name, "worker"));
	CHECK(trace_reader_next(r, &rec) == 1 && rec.type == TRACE_SAMPLES && rec.u.samples.count == 2);
	CHECK(rec.u.samples.samples[1].time_ns == 101 && rec.u.samples.samples[1].state == 2);
	CHECK(rec.u.samples.samples[0].stack_id == 9 && rec.u.samples.samples[0].weight == 1);
	CHECK(trace_reader_next(r, &rec) == 1 && rec.type == TRACE_MODULE && rec.u.module.nsegments == 1);
	CHECK(rec.u.module.segments[0].file_offset == 0x30 && rec.u.module.segments[0].flags == 1);
	CHECK(rec.u.module.build_id == NULL && !strcmp(rec.u.module.path, "/lib/x.so"));
	CHECK(trace_reader_next(r, &rec) == 1 && rec.type == TRACE_END);
	CHECK(trace_reader_next(r, &rec) == 0 && !trace_reader_truncated(r));
	trace_reader_close(r);
	free(z.p);
	free(raw.p);
	memset(&raw, 0, sizeof raw);

	/* Several zstd frames and a skippable frame make one stream; after END,
	 * whatever follows is ignored. */
	put_file_header(&raw, 1, 0, 16);
	struct bytes frames = zstd_compress(&raw);
	free(raw.p);
	memset(&raw, 0, sizeof raw);
	put(&frames, "\x50\x2a\x4d\x18\x03\x00\x00\x00" "abc", 11); /* skippable frame */
	put_end_record(&raw);
	put(&raw, "trailing garbage", 16);
	z = zstd_compress(&raw);
	put(&frames, z.p, z.len);
	o = read_memory(frames.p, frames.len, 0);
	CHECKF(o.last == 0 && o.records == 1 && !o.truncated, "%d %d %s", o.last, o.records, o.message);
	free(frames.p);
	free(z.p);
	free(raw.p);
}

/* Each kind of impossible record gets a one-line error naming the offset. */
static void test_corrupt_records(void)
{
	struct bytes raw = { 0 };
	size_t at;

	put(&raw, "IPSCOPF\x1a", 8), put_le(&raw, 0x10001, 8);
	struct outcome o = read_raw(&raw);
	CHECKF(o.last == -2 && strstr(o.message, "bad magic"), "%s", o.message);

	o = read_memory("hello, world\n", 13, 0);
	CHECKF(o.last == -2 && strstr(o.message, "not an ipscope trace"), "%s", o.message);

	/* The frame's content checksum (its last 4 bytes) catches what zstd would not. */
	uint64_t flush_sizes[4];
	int flush_records[4];
	struct bytes z = write_small_trace(flush_sizes, flush_records);
	z.p[z.len - 1] ^= 1;
	o = read_memory(z.p, z.len, 0);
	CHECKF(o.last < 0 && strstr(o.message, "checksum"), "%s", o.message);
	free(z.p);

	put_file_header(&raw, 1, 0, 16);
	at = begin_record(&raw, TRACE_SAMPLES, 0);
	put_le(&raw, 0xffffffff, 4), put_le(&raw, 0x10000, 4); /* 2^48 bytes of entries */
	put_le(&raw, 0, 8);
	end_record(&raw, at);
	expect_corrupt(&raw, "do not fit");

	put_file_header(&raw, 1, 0, 16);
	at = begin_record(&raw, TRACE_SAMPLES, 0);
	put_le(&raw, 1, 4), put_le(&raw, 12, 4); /* entries shorter than version 1.0's */
	put_le(&raw, 0, 8), put_le(&raw, 0, 4);
	end_record(&raw, at);
	expect_corrupt(&raw, "entry size 12");

	put_file_header(&raw, 1, 0, 16);
	at = begin_record(&raw, TRACE_META, 0);
	put_string(&raw, "key");
	put_le(&raw, 5, 4), put(&raw, "a\0bcd", 5);
	end_record(&raw, at);
	expect_corrupt(&raw, "NUL");

	put_file_header(&raw, 1, 0, 16);
	at = begin_record(&raw, TRACE_THREAD, 0);
	put_le(&raw, 1, 4), put_le(&raw, 1, 4), put_le(&raw, 1, 8), put_le(&raw, 0, 4);
	put_le(&raw, 0xfffffff0u, 4), put(&raw, "abc", 3); /* name length past the record */
	end_record(&raw, at);
	expect_corrupt(&raw, "name needs 4294967280 bytes");

	put_file_header(&raw, 1, 0, 16);
	at = begin_record(&raw, TRACE_STACK, 0);
	put_le(&raw, 1, 4), put_le(&raw, 0, 4), put_le(&raw, 0x20000000, 4), put_le(&raw, 0, 8);
	end_record(&raw, at);
	expect_corrupt(&raw, "frames do not fit");

	put_file_header(&raw, 1, 0, 16);
	at = begin_record(&raw, TRACE_END, 0);
	put_le(&raw, 1, 8); /* too short for version 1.0 */
	end_record(&raw, at);
	expect_corrupt(&raw, "END record (8 bytes)");

	put_file_header(&raw, 1, 0, 16);
	put_le(&raw, TRACE_META, 2), put_le(&raw, 0, 2), put_le(&raw, 0x7fffffff, 4);
	expect_corrupt(&raw, "claims 2147483647 bytes");

	put_file_header(&raw, 1, 0, 16);
	put_le(&raw, 0, 8);
	expect_corrupt(&raw, "type 0");

	/* A record cut by the end of the stream is a truncation, not an error. */
	put_file_header(&raw, 1, 0, 16);
	at = begin_record(&raw, TRACE_LOSS, 0);
	put_le(&raw, 1, 4);
	end_record(&raw, at);
	raw.p[at - 4] = 24; /* the length says 24, the stream ends after 4 */
	o = read_raw(&raw);
	CHECKF(o.last == 0 && o.truncated && strstr(o.message, "truncated at offset 16"), "%s", o.message);
}

/* A writer whose reader went away fails with EPIPE, and close still frees. */
static void test_writer_errors(void)
{
	int fds[2];
	CHECK(pipe(fds) == 0);
	signal(SIGPIPE, SIG_IGN);
	struct trace_writer *w = trace_writer_open(fds[1], 1);
	CHECK(w != NULL);
	close(fds[0]);
	CHECK(trace_writer_meta(w, "k", "v") == 0); /* buffered */
	CHECK(trace_writer_flush(w) == -1 && errno == EPIPE);
	CHECK(trace_writer_meta(w, "k", "v") == -1 && errno == EPIPE);
	struct trace_end e = { 0 };
	CHECK(trace_writer_close(w, &e) == -1 && errno == EPIPE);
	close(fds[1]);
}

/* Through a non-blocking pipe to a slow reader: partial writes and EAGAIN
 * must be waited out, not lose bytes. */
static void test_writer_nonblocking_pipe(void)
{
	int fds[2];
	CHECK(pipe(fds) == 0);
	int out = new_memfd();
	pid_t child = fork();
	CHECK(child >= 0);
	if (child == 0) {
		close(fds[1]);
		usleep(100000); /* let the pipe fill up */
		char chunk[4096];
		ssize_t n;
		while ((n = read(fds[0], chunk, sizeof chunk)) > 0)
			if (write(out, chunk, (size_t)n) != n)
				_exit(1);
		_exit(n < 0);
	}
	close(fds[0]);
	CHECK(fcntl(fds[1], F_SETFL, O_NONBLOCK) == 0);
	struct trace_writer *w = trace_writer_open(fds[1], 1);
	CHECK(w != NULL);
	rng_state = 777;
	for (uint32_t i = 0; i < 200000; i++) {
		struct trace_sample s = { rng(), 1, 2, (uint32_t)rng(), 1, 0 };
		CHECK(trace_writer_sample(w, &s) == 0);
	}
	struct trace_end e = { 0 };
	CHECK(trace_writer_close(w, &e) == 0);
	close(fds[1]);
	int status;
	CHECK(waitpid(child, &status, 0) == child && status == 0);
	struct bytes z = fd_contents(out);
	CHECK(z.len > 65536 * 4); /* random samples: far more than a pipe holds */
	struct outcome o = read_memory(z.p, z.len, 0);
	CHECKF(o.last == 0 && !o.truncated, "%s", o.message);
	free(z.p);
}

int main(void)
{
	alarm(600); /* a hang is a failure too */
	test_round_trip();
	test_versions_and_unknown_records();
	test_corrupt_records();
	test_writer_errors();
	test_writer_nonblocking_pipe();
	test_cuts();
	test_large();
	test_bit_flips();
	printf("unit_trace: all passed\n");
	return 0;
}
