/*
 * test_trace_layout.c - unit tests of the trace reader on streams built by
 * hand from TRACE_FORMAT.md (ctest unit_trace_layout), to check what the
 * writer never produces: unknown record types, newer versions, longer
 * records from later minor versions and a catalogue of corrupt records.
 */
#include "trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK_STOP_AT_FIRST_FAILURE /* later steps use what earlier ones built */
#include "check.h"
#include "trace_test_support.h"

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

/* Open a hand-built stream as trace name (compressed into *z, for the caller to free after closing); checks it opens. */
static struct trace_reader *open_raw(const struct bytes *raw, struct bytes *z, const char *name)
{
	char err[256];
	*z = zstd_compress(raw);
	struct trace_reader *r = trace_reader_open_memory(z->p, z->len, name, err, sizeof err);
	CHECKF(r != NULL, "%s", err);
	return r;
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
				  "(1.5): use a newer ipscope"), "%s", o.message);

	/* A later minor version: longer header, extra fields at the end of
	 * records and of array entries. All of it is read, the extra ignored. */
	put_file_header(&raw, 1, 7, 24);
	at = begin_record(&raw, TRACE_THREAD, 0);
	put_le(&raw, 5, 4), put_le(&raw, 6, 4), put_le(&raw, 7, 8), put_le(&raw, 1, 4);
	put_string(&raw, "worker");
	put_le(&raw, 0x1234, 8); /* cpu_ns (1.2) */
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
	at = begin_record(&raw, TRACE_END, 0);
	put_le(&raw, 99, 8), put_le(&raw, 0, 4), put_le(&raw, TRACE_END_EXITED, 4);
	put_le(&raw, 1, 8), put_le(&raw, 1, 8), put_le(&raw, 0, 8);
	put_le(&raw, 5000, 8), put_le(&raw, 7, 8); /* agent_ns, agent_signals (1.2) */
	put_le(&raw, 3, 8); /* exited_unsampled (1.4) */
	put_le(&raw, 0xfeed, 8); /* a field from the future */
	end_record(&raw, at);
	struct bytes z;
	struct trace_reader *r = open_raw(&raw, &z, "t.zst");
	unsigned major, minor;
	trace_reader_version(r, &major, &minor);
	CHECK(major == 1 && minor == 7);
	struct trace_record rec;
	CHECK(trace_reader_next(r, &rec) == 1 && rec.type == TRACE_THREAD && rec.offset == 24);
	CHECK(rec.u.thread.tid == 6 && !strcmp(rec.u.thread.name, "worker") && rec.u.thread.cpu_ns == 0x1234);
	CHECK(trace_reader_next(r, &rec) == 1 && rec.type == TRACE_SAMPLES && rec.u.samples.count == 2);
	CHECK(rec.u.samples.samples[1].time_ns == 101 && rec.u.samples.samples[1].state == 2);
	CHECK(rec.u.samples.samples[1].syscall == 0x77); /* 1.4 */
	CHECK(rec.u.samples.samples[0].stack_id == 9 && rec.u.samples.samples[0].weight == 1);
	CHECK(trace_reader_next(r, &rec) == 1 && rec.type == TRACE_MODULE && rec.u.module.nsegments == 1);
	CHECK(rec.u.module.segments[0].file_offset == 0x30 && rec.u.module.segments[0].flags == 1);
	CHECK(rec.u.module.build_id == NULL && !strcmp(rec.u.module.path, "/lib/x.so"));
	CHECK(trace_reader_next(r, &rec) == 1 && rec.type == TRACE_END);
	CHECK(rec.u.end.agent_ns == 5000 && rec.u.end.agent_signals == 7 && rec.u.end.exited_unsampled == 3);
	CHECK(trace_reader_next(r, &rec) == 0 && !trace_reader_truncated(r));
	trace_reader_close(r);
	free(z.p);
	free(raw.p);
	memset(&raw, 0, sizeof raw);

	/* Traces before 1.2 (1.0, and 1.1 with JIT_MAP) have no cpu_ns or agent
	 * cost: read as 0. In a 1.2 trace they must be there: a THREAD or END
	 * without them is corrupt. */
	for (unsigned minor = 0; minor <= 1; minor++) {
		put_file_header(&raw, 1, minor, 16);
		at = begin_record(&raw, TRACE_THREAD, 0);
		put_le(&raw, 5, 4), put_le(&raw, 6, 4), put_le(&raw, 7, 8), put_le(&raw, TRACE_THREAD_EXIT, 4);
		put_string(&raw, "old");
		end_record(&raw, at);
		put_end_record(&raw);
		r = open_raw(&raw, &z, "t.zst");
		CHECK(trace_reader_next(r, &rec) == 1 && rec.type == TRACE_THREAD && rec.u.thread.cpu_ns == 0);
		CHECK(trace_reader_next(r, &rec) == 1 && rec.type == TRACE_END && rec.u.end.agent_ns == 0 &&
		      rec.u.end.agent_signals == 0);
		trace_reader_close(r);
		free(z.p);
		free(raw.p);
		memset(&raw, 0, sizeof raw);
	}
	put_file_header(&raw, 1, 2, 16);
	at = begin_record(&raw, TRACE_THREAD, 0);
	put_le(&raw, 5, 4), put_le(&raw, 6, 4), put_le(&raw, 7, 8), put_le(&raw, TRACE_THREAD_EXIT, 4);
	put_string(&raw, "new");
	end_record(&raw, at);
	expect_corrupt(&raw, "THREAD record");
	put_file_header(&raw, 1, 2, 16);
	put_end_record(&raw);
	expect_corrupt(&raw, "END record (40 bytes)");

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

	put_file_header(&raw, 1, 1, 16);
	at = begin_record(&raw, TRACE_JIT_MAP, 0);
	put_le(&raw, 7, 4), put_le(&raw, 0, 4), put_le(&raw, 1, 8), put_string(&raw, "/tmp/perf-7.map");
	put_le(&raw, 100, 4), put(&raw, "0 1 x\n", 6); /* text length past the record */
	end_record(&raw, at);
	expect_corrupt(&raw, "text needs 100 bytes");

	/* A record cut by the end of the stream is a truncation, not an error. */
	put_file_header(&raw, 1, 0, 16);
	at = begin_record(&raw, TRACE_LOSS, 0);
	put_le(&raw, 1, 4);
	end_record(&raw, at);
	raw.p[at - 4] = 24; /* the length says 24, the stream ends after 4 */
	o = read_raw(&raw);
	CHECKF(o.last == 0 && o.truncated && strstr(o.message, "truncated at offset 16"), "%s", o.message);
}

/* JIT_MAP (1.1), byte by byte from TRACE_FORMAT.md. */
static void test_jit_map(void)
{
	struct bytes raw = {0};
	put_file_header(&raw, 1, 1, 16);
	size_t at = begin_record(&raw, TRACE_JIT_MAP, 0);
	put_le(&raw, 4242, 4), put_le(&raw, 0, 4), put_le(&raw, 123456789, 8);
	put_string(&raw, "/tmp/perf-4242.map");
	put_le(&raw, 21, 4), put(&raw, "1000 20 JS:*alpha x\nZ", 21);
	put_le(&raw, 0xabcd, 4); /* a later minor version's field: ignored */
	end_record(&raw, at);
	put_end_record(&raw);
	struct bytes z;
	struct trace_reader *r = open_raw(&raw, &z, "t");
	struct trace_record rec;
	CHECK(r && trace_reader_next(r, &rec) == 1 && rec.type == TRACE_JIT_MAP);
	if (r && rec.type == TRACE_JIT_MAP) {
		CHECK(rec.u.jit_map.pid == 4242 && rec.u.jit_map.time_ns == 123456789);
		CHECK(!strcmp(rec.u.jit_map.path, "/tmp/perf-4242.map"));
		CHECK(rec.u.jit_map.text_len == 21 && !memcmp(rec.u.jit_map.text, "1000 20 JS:*alpha x\nZ", 21));
		CHECK(trace_reader_next(r, &rec) == 1 && rec.type == TRACE_END);
	}
	trace_reader_close(r);
	free(z.p);
	free(raw.p);
}

/* A 1.4 END: the 1.0 fields, the agent's cost (1.2) and exited_unsampled (1.4). */
static void put_end_1_4(struct bytes *raw, uint64_t exited_unsampled)
{
	size_t at = begin_record(raw, TRACE_END, 0);
	put_le(raw, 99, 8), put_le(raw, 0, 4), put_le(raw, TRACE_END_EXITED, 4);
	put_le(raw, 0, 8), put_le(raw, 0, 8), put_le(raw, 0, 8), put_le(raw, 0, 8), put_le(raw, 0, 8);
	put_le(raw, exited_unsampled, 8);
	end_record(raw, at);
}

/* A SAMPLES record of one sample, entry_size bytes each (28 before 1.4, 32 from 1.4). */
static void put_one_sample(struct bytes *raw, uint32_t entry_size, uint32_t state, int32_t syscall)
{
	size_t at = begin_record(raw, TRACE_SAMPLES, 0);
	put_le(raw, 1, 4), put_le(raw, entry_size, 4);
	put_le(raw, 1000, 8), put_le(raw, 5, 4), put_le(raw, 6, 4), put_le(raw, 1, 4), put_le(raw, 1, 4);
	put_le(raw, state, 4);
	if (entry_size >= 32)
		put_le(raw, (uint32_t)syscall, 4);
	end_record(raw, at);
}

/* PROCESS records and a sample's state and system call (1.4), byte by byte from TRACE_FORMAT.md. */
static void test_processes_and_wall_samples(void)
{
	struct bytes raw = { 0 };
	put_file_header(&raw, 1, 4, 16);
	size_t at = begin_record(&raw, TRACE_PROCESS, 0);
	put_le(&raw, 4243, 4), put_le(&raw, 4242, 4), put_le(&raw, 777, 8), put_le(&raw, TRACE_PROCESS_EXECED, 4);
	put_le(&raw, 0, 4); /* wait status */
	put_string(&raw, "/bin/static"), put_string(&raw, "static -x");
	put_le(&raw, TRACE_PROCESS_NOT_PROFILED, 4), put_string(&raw, "statically linked");
	end_record(&raw, at);
	at = begin_record(&raw, TRACE_PROCESS, 0);
	put_le(&raw, 4243, 4), put_le(&raw, 4242, 4), put_le(&raw, 888, 8), put_le(&raw, TRACE_PROCESS_EXITED, 4);
	put_le(&raw, 0x8b, 4); /* killed by SIGSEGV, core dumped */
	put_string(&raw, ""), put_string(&raw, ""), put_le(&raw, 0, 4), put_string(&raw, "");
	end_record(&raw, at);
	put_one_sample(&raw, 32, TRACE_STATE_SLEEPING, 230);
	put_end_1_4(&raw, 5);
	struct bytes z;
	struct trace_reader *r = open_raw(&raw, &z, "t.zst");
	struct trace_record rec;
	CHECK(trace_reader_next(r, &rec) == 1 && rec.type == TRACE_PROCESS);
	const struct trace_process *pr = &rec.u.process;
	CHECK(pr->pid == 4243 && pr->parent_pid == 4242 && pr->time_ns == 777 && pr->kind == TRACE_PROCESS_EXECED);
	CHECK(!strcmp(pr->path, "/bin/static") && !strcmp(pr->command, "static -x"));
	CHECK(pr->flags == TRACE_PROCESS_NOT_PROFILED && !strcmp(pr->reason, "statically linked"));
	CHECK(trace_reader_next(r, &rec) == 1 && rec.type == TRACE_PROCESS);
	CHECK(rec.u.process.kind == TRACE_PROCESS_EXITED && rec.u.process.wait_status == 0x8b);
	CHECK(trace_reader_next(r, &rec) == 1 && rec.type == TRACE_SAMPLES && rec.u.samples.count == 1);
	CHECK(rec.u.samples.samples[0].state == TRACE_STATE_SLEEPING && rec.u.samples.samples[0].syscall == 230);
	CHECK(trace_reader_next(r, &rec) == 1 && rec.type == TRACE_END && rec.u.end.exited_unsampled == 5);
	trace_reader_close(r);
	free(z.p);
	free(raw.p);
	memset(&raw, 0, sizeof raw);

	/* Before 1.4 a sample has no system call (read as -1) and END no exited_unsampled. */
	put_file_header(&raw, 1, 3, 16);
	put_one_sample(&raw, 28, 0, 0);
	at = begin_record(&raw, TRACE_END, 0);
	put_le(&raw, 99, 8), put_le(&raw, 0, 4), put_le(&raw, TRACE_END_EXITED, 4);
	put_le(&raw, 0, 8), put_le(&raw, 0, 8), put_le(&raw, 0, 8), put_le(&raw, 0, 8), put_le(&raw, 0, 8);
	end_record(&raw, at);
	r = open_raw(&raw, &z, "t.zst");
	CHECK(trace_reader_next(r, &rec) == 1 && rec.type == TRACE_SAMPLES && rec.u.samples.samples[0].syscall == -1);
	CHECK(trace_reader_next(r, &rec) == 1 && rec.type == TRACE_END && rec.u.end.exited_unsampled == 0);
	trace_reader_close(r);
	free(z.p);
	free(raw.p);
	memset(&raw, 0, sizeof raw);

	/* From 1.4 they are required: a 28-byte sample, a PROCESS without its reason are corrupt. */
	put_file_header(&raw, 1, 4, 16);
	put_one_sample(&raw, 28, 0, 0);
	expect_corrupt(&raw, "entry size 28");
	put_file_header(&raw, 1, 4, 16);
	at = begin_record(&raw, TRACE_PROCESS, 0);
	put_le(&raw, 1, 4), put_le(&raw, 0, 4), put_le(&raw, 1, 8), put_le(&raw, TRACE_PROCESS_FORKED, 4);
	put_le(&raw, 0, 4), put_string(&raw, ""), put_string(&raw, ""), put_le(&raw, 0, 4);
	end_record(&raw, at);
	expect_corrupt(&raw, "PROCESS record");
}

/* ALLOCS (1.3), byte by byte from TRACE_FORMAT.md: varint deltas. */
/* END as 1.2 and later write it: 40 bytes of 1.0 and agent_ns, agent_signals. */
static void put_end_v12(struct bytes *raw)
{
	size_t at = begin_record(raw, TRACE_END, 0);
	put_le(raw, 1000, 8), put_le(raw, 0, 4), put_le(raw, 1, 4);
	put_le(raw, 0, 8), put_le(raw, 0, 8), put_le(raw, 0, 8), put_le(raw, 0, 8), put_le(raw, 0, 8);
	end_record(raw, at);
}

static void test_allocs(void)
{
	struct bytes raw = {0};
	put_file_header(&raw, 1, 3, 16);
	size_t at = begin_record(&raw, TRACE_ALLOCS, 0);
	put_le(&raw, 77, 4), put_le(&raw, 3, 4), put_le(&raw, 1000, 8), put_le(&raw, 5000000, 8);
	/* malloc (1) seq 1000 tid 77 time +0 address 0x1000, size 32, stack 5 */
	put_le(&raw, 1, 1), put_le(&raw, 0, 1), put_le(&raw, 0x9a, 1), put_le(&raw, 0x01, 1), put_le(&raw, 0, 1);
	put_le(&raw, 0x80, 1), put_le(&raw, 0x40, 1), put_le(&raw, 32, 1), put_le(&raw, 5, 1);
	/* realloc (3) moved (flag 1): seq +1, same tid, time +2, address +0x10 (zigzag 0x20), 300 B, stack 6 */
	put_le(&raw, 3 | 1 << 4, 1), put_le(&raw, 2, 1), put_le(&raw, 0, 1), put_le(&raw, 4, 1);
	put_le(&raw, 0x20, 1), put_le(&raw, 0xac, 1), put_le(&raw, 0x02, 1), put_le(&raw, 6, 1);
	/* free (15) temporary (flag 4): seq +1, tid -1 (zigzag 1), time -1 (zigzag 1), address -0x10 (zigzag 0x1f) */
	put_le(&raw, 15 | 4 << 4, 1), put_le(&raw, 2, 1), put_le(&raw, 1, 1), put_le(&raw, 1, 1);
	put_le(&raw, 0x1f, 1);
	end_record(&raw, at);
	put_end_v12(&raw);
	struct bytes z;
	struct trace_reader *r = open_raw(&raw, &z, "t");
	struct trace_record rec;
	CHECK(r && trace_reader_next(r, &rec) == 1 && rec.type == TRACE_ALLOCS);
	if (r && rec.type == TRACE_ALLOCS) {
		const struct trace_heap_event *e = rec.u.allocs.events;
		CHECK(rec.u.allocs.pid == 77 && rec.u.allocs.count == 3);
		CHECK(e[0].kind == TRACE_HEAP_MALLOC && e[0].seq == 1000 && e[0].tid == 77 && e[0].time_ns == 5000000 &&
		      e[0].address == 0x1000 && e[0].size == 32 && e[0].stack_id == 5 && e[0].flags == 0);
		CHECK(e[1].kind == TRACE_HEAP_REALLOC && e[1].flags == TRACE_HEAP_MOVED && e[1].seq == 1001 &&
		      e[1].time_ns == 5000002 && e[1].address == 0x1010 && e[1].size == 300 && e[1].stack_id == 6);
		CHECK(e[2].kind == TRACE_HEAP_FREE && e[2].flags == TRACE_HEAP_TEMPORARY && e[2].seq == 1002 &&
		      e[2].tid == 76 && e[2].time_ns == 5000001 && e[2].address == 0x1000);
		{ int got = trace_reader_next(r, &rec); CHECKF(got == 1 && rec.type == TRACE_END, "%d %s", got, trace_reader_error(r)); }
	}
	trace_reader_close(r);
	free(z.p);
	free(raw.p);
	memset(&raw, 0, sizeof raw);
	/* An entry cut short is corrupt. */
	put_file_header(&raw, 1, 3, 16);
	at = begin_record(&raw, TRACE_ALLOCS, 0);
	put_le(&raw, 77, 4), put_le(&raw, 1, 4), put_le(&raw, 1, 8), put_le(&raw, 1, 8);
	put_le(&raw, 1, 1), put_le(&raw, 0, 1), put_le(&raw, 0, 1), put_le(&raw, 0, 1), put_le(&raw, 0x80, 1);
	end_record(&raw, at);
	put_end_v12(&raw);
	expect_corrupt(&raw, "ALLOCS record");
	/* A 1.2 reader skips ALLOCS by its length: the writer never sets REQUIRED on it. */
}

/* Bytes, one per argument: the columns of ALLOCS_PACKED below are easier to check so. */
static void put_bytes(struct bytes *raw, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		put_le(raw, b[i], 1);
}
#define PUT(raw, ...) put_bytes(raw, (const uint8_t[]){ __VA_ARGS__ }, sizeof((const uint8_t[]){ __VA_ARGS__ }))

/* ALLOCS_PACKED (13), byte by byte from TRACE_FORMAT.md: columns, and references
 * resolved across records of the process. */
static void test_allocs_packed(void)
{
	struct bytes raw = { 0 };
	put_file_header(&raw, 1, 3, 16);
	size_t at = begin_record(&raw, 13, 1);
	put_le(&raw, 77, 4), put_le(&raw, 5, 4), put_le(&raw, 100, 8), put_le(&raw, 5000000, 8);
	/* malloc 0x1000 (ordinal 0), malloc 0x2000 (1), free 0x1000 by reference, malloc 0x1000
	 * by the latest free (2), free 0x5000 (not live: its address written) */
	PUT(&raw, 1, 1, 15, 1, 15);            /* op */
	PUT(&raw, 0, 2, 2, 2, 2);              /* seq 100..104 */
	PUT(&raw, 0x9a, 0x01, 0, 2, 0, 0);     /* tid 77 77 78 78 78 */
	PUT(&raw, 0, 0, 6, 0, 0);              /* time +0 +0 +3 +0 +0 */
	PUT(&raw, 32, 48, 32);                 /* size of the allocations */
	PUT(&raw, 5, 6, 5);                    /* stack_id */
	PUT(&raw, 0, 0, 1);                    /* alloc_ref: the third reuses the latest free */
	PUT(&raw, 0x80, 0x40, 0x80, 0x40);     /* alloc_address: 0x1000, +0x1000 */
	PUT(&raw, 1, 0);                       /* free_ref: ordinal 0 (delta 0 from 0), none */
	PUT(&raw, 0x80, 0xc0, 0x02);           /* free_address 0x5000 */
	end_record(&raw, at);
	at = begin_record(&raw, 13, 1);
	put_le(&raw, 77, 4), put_le(&raw, 2, 4), put_le(&raw, 105, 8), put_le(&raw, 5000010, 8);
	/* free of ordinal 1 (0x2000: delta -2 from the 3 before), then of ordinal 2 (0x1000: +1) */
	PUT(&raw, 15, 15), PUT(&raw, 0, 2), PUT(&raw, 0x9a, 0x01, 0), PUT(&raw, 0, 0), PUT(&raw, 4, 3);
	end_record(&raw, at);
	put_end_v12(&raw);
	struct bytes z;
	struct trace_reader *r = open_raw(&raw, &z, "t");
	struct trace_record rec;
	CHECK(r && trace_reader_next(r, &rec) == 1 && rec.type == TRACE_ALLOCS);
	if (r && rec.type == TRACE_ALLOCS) {
		const struct trace_heap_event *e = rec.u.allocs.events;
		CHECK(rec.u.allocs.pid == 77 && rec.u.allocs.count == 5);
		CHECK(e[0].kind == TRACE_HEAP_MALLOC && e[0].seq == 100 && e[0].tid == 77 && e[0].time_ns == 5000000 &&
		      e[0].address == 0x1000 && e[0].size == 32 && e[0].stack_id == 5);
		CHECK(e[1].kind == TRACE_HEAP_MALLOC && e[1].seq == 101 && e[1].address == 0x2000 && e[1].size == 48 &&
		      e[1].stack_id == 6);
		CHECK(e[2].kind == TRACE_HEAP_FREE && e[2].seq == 102 && e[2].tid == 78 && e[2].time_ns == 5000003 &&
		      e[2].address == 0x1000);
		CHECK(e[3].kind == TRACE_HEAP_MALLOC && e[3].seq == 103 && e[3].address == 0x1000 && e[3].size == 32);
		CHECK(e[4].kind == TRACE_HEAP_FREE && e[4].seq == 104 && e[4].address == 0x5000);
	}
	CHECK(r && trace_reader_next(r, &rec) == 1 && rec.type == TRACE_ALLOCS);
	if (r && rec.type == TRACE_ALLOCS) {
		const struct trace_heap_event *e = rec.u.allocs.events;
		CHECK(rec.u.allocs.count == 2 && e[0].seq == 105 && e[0].address == 0x2000 && e[1].seq == 106 &&
		      e[1].address == 0x1000 && e[1].tid == 77 && e[1].time_ns == 5000010);
	}
	{ int got = r ? trace_reader_next(r, &rec) : -1; CHECKF(got == 1 && rec.type == TRACE_END, "%d", got); }
	trace_reader_close(r);
	free(z.p);
	free(raw.p);
	/* A free of an allocation that is not live, and an allocation naming a free that is not
	 * there, are corrupt. */
	memset(&raw, 0, sizeof raw);
	put_file_header(&raw, 1, 3, 16);
	at = begin_record(&raw, 13, 1);
	put_le(&raw, 77, 4), put_le(&raw, 1, 4), put_le(&raw, 1, 8), put_le(&raw, 1, 8);
	PUT(&raw, 15, 0, 0, 0, 5);
	end_record(&raw, at);
	put_end_v12(&raw);
	expect_corrupt(&raw, "which is not live");
	free(raw.p);
	memset(&raw, 0, sizeof raw);
	put_file_header(&raw, 1, 3, 16);
	at = begin_record(&raw, 13, 1);
	put_le(&raw, 77, 4), put_le(&raw, 1, 4), put_le(&raw, 1, 8), put_le(&raw, 1, 8);
	PUT(&raw, 1, 0, 0, 0, 16, 1, 1);
	end_record(&raw, at);
	put_end_v12(&raw);
	expect_corrupt(&raw, "which is not there");
	free(raw.p);
	/* A column cut short is corrupt too. */
	memset(&raw, 0, sizeof raw);
	put_file_header(&raw, 1, 3, 16);
	at = begin_record(&raw, 13, 1);
	put_le(&raw, 77, 4), put_le(&raw, 1, 4), put_le(&raw, 1, 8), put_le(&raw, 1, 8);
	PUT(&raw, 1, 0, 0, 0, 16, 1);
	end_record(&raw, at);
	put_end_v12(&raw);
	expect_corrupt(&raw, "ALLOCS_PACKED record");
	free(raw.p);
}

/* ALLOCS_IDS (14, 1.5), byte by byte from TRACE_FORMAT.md: no addresses; a
 * block's identity is 2^63 | its allocation's ordinal, inherited by an
 * allocation that replaces it or restores it. */
static void test_allocs_ids(void)
{
	const uint64_t NEW = 1ull << 63;
	struct bytes raw = { 0 };
	put_file_header(&raw, 1, 5, 16);
	size_t at = begin_record(&raw, 14, 1);
	put_le(&raw, 77, 4), put_le(&raw, 6, 4), put_le(&raw, 100, 8), put_le(&raw, 5000000, 8);
	/* malloc (ordinal 0), malloc (1), free of ordinal 0, free of no recorded block, malloc
	 * replacing ordinal 1 (2: one back), realloc RESTORED naming the latest free (3) */
	PUT(&raw, 1, 1, 15, 15, 1, 0x83, 0x02);  /* op: realloc with flag 16 is 3 | 16 << 4 */
	PUT(&raw, 0, 2, 2, 2, 2, 2);              /* seq 100..105 */
	PUT(&raw, 0x9a, 0x01, 0, 0, 0, 0, 0);     /* tid 77 */
	PUT(&raw, 0, 0, 6, 0, 0, 0);              /* time +0 +0 +3 +0 +0 +0 */
	PUT(&raw, 32, 48, 64, 16);                /* size of the allocations */
	PUT(&raw, 5, 6, 7, 8);                    /* stack_id */
	PUT(&raw, 0, 0, 65, 1);                   /* alloc_ref: new, new, replaces 1 back, restores latest free */
	PUT(&raw, 1, 0);                          /* free_ref: ordinal 0 (delta 0 from 0), none */
	end_record(&raw, at);
	at = begin_record(&raw, 14, 1);
	put_le(&raw, 77, 4), put_le(&raw, 2, 4), put_le(&raw, 106, 8), put_le(&raw, 5000010, 8);
	/* free of ordinal 2 (delta +2 from the 4 before: 2 - 4 = -2), then of ordinal 3 (+1) */
	PUT(&raw, 15, 15), PUT(&raw, 0, 2), PUT(&raw, 0x9a, 0x01, 0), PUT(&raw, 0, 0), PUT(&raw, 4, 3);
	end_record(&raw, at);
	at = begin_record(&raw, 14, 1); /* another process: its own ordinals, other identities */
	put_le(&raw, 78, 4), put_le(&raw, 1, 4), put_le(&raw, 1, 8), put_le(&raw, 5000020, 8);
	PUT(&raw, 1, 0, 0x9c, 0x01, 0, 32, 5, 0);
	end_record(&raw, at);
	put_end_1_4(&raw, 0);
	struct bytes z;
	struct trace_reader *r = open_raw(&raw, &z, "t");
	struct trace_record rec;
	CHECK(r && trace_reader_next(r, &rec) == 1 && rec.type == TRACE_ALLOCS);
	if (r && rec.type == TRACE_ALLOCS) {
		const struct trace_heap_event *e = rec.u.allocs.events;
		CHECK(rec.u.allocs.pid == 77 && rec.u.allocs.count == 6);
		CHECK(e[0].kind == TRACE_HEAP_MALLOC && e[0].seq == 100 && e[0].tid == 77 && e[0].time_ns == 5000000 &&
		      e[0].address == (NEW | 0) && e[0].size == 32 && e[0].stack_id == 5);
		CHECK(e[1].kind == TRACE_HEAP_MALLOC && e[1].address == (NEW | 1) && e[1].size == 48 && e[1].stack_id == 6);
		CHECK(e[2].kind == TRACE_HEAP_FREE && e[2].seq == 102 && e[2].time_ns == 5000003 && e[2].address == (NEW | 0));
		CHECK(e[3].kind == TRACE_HEAP_FREE && e[3].address == 0);
		CHECK(e[4].kind == TRACE_HEAP_MALLOC && e[4].address == (NEW | 1) && e[4].size == 64);
		CHECK(e[5].kind == TRACE_HEAP_REALLOC && e[5].flags == TRACE_HEAP_RESTORED && e[5].address == (NEW | 0) &&
		      e[5].size == 16 && e[5].stack_id == 8);
	}
	CHECK(r && trace_reader_next(r, &rec) == 1 && rec.type == TRACE_ALLOCS);
	if (r && rec.type == TRACE_ALLOCS) {
		const struct trace_heap_event *e = rec.u.allocs.events;
		CHECK(rec.u.allocs.count == 2 && e[0].seq == 106 && e[0].address == (NEW | 1) && e[1].seq == 107 &&
		      e[1].address == (NEW | 0) && e[1].time_ns == 5000010);
	}
	CHECK(r && trace_reader_next(r, &rec) == 1 && rec.type == TRACE_ALLOCS);
	if (r && rec.type == TRACE_ALLOCS)
		CHECK(rec.u.allocs.pid == 78 && rec.u.allocs.count == 1 && rec.u.allocs.events[0].tid == 78 &&
		      rec.u.allocs.events[0].address == (NEW | 1ull << 40));
	{ int got = r ? trace_reader_next(r, &rec) : -1; CHECKF(got == 1 && rec.type == TRACE_END, "%d %s", got, r ? trace_reader_error(r) : ""); }
	trace_reader_close(r);
	free(z.p);
	free(raw.p);
	/* Replacing a block that is not live, naming a free that is not there (an
	 * unmatched free is none), freeing what is not live: corrupt. */
	static const uint8_t bad[][14] = {
		{ 1, 0, 0, 0, 16, 1, 65 },                       /* malloc replacing 1 back: there is none */
		{ 1, 1, 0, 0, 0, 0, 0, 0, 16, 16, 0, 0, 0, 65 }, /* the second replaces the first, live: fine */
		{ 15, 1, 0, 1, 0, 0, 0, 0, 16, 0, 1, 0 },       /* unmatched free, malloc naming it: not there */
		{ 15, 0, 0, 0, 5 },                              /* a free of ordinal 2, never allocated */
	};
	static const size_t bad_len[] = { 7, 14, 12, 5 };
	static const uint32_t bad_count[] = { 1, 2, 2, 1 };
	static const char *const bad_msg[] = { "which is not live", NULL, "which is not there", "which is not live" };
	for (unsigned k = 0; k < sizeof bad_len / sizeof *bad_len; k++) {
		memset(&raw, 0, sizeof raw);
		put_file_header(&raw, 1, 5, 16);
		at = begin_record(&raw, 14, 1);
		put_le(&raw, 77, 4), put_le(&raw, bad_count[k], 4), put_le(&raw, 1, 8), put_le(&raw, 1, 8);
		put_bytes(&raw, bad[k], bad_len[k]);
		end_record(&raw, at);
		put_end_1_4(&raw, 0);
		if (bad_msg[k]) {
			expect_corrupt(&raw, bad_msg[k]);
		} else {
			r = open_raw(&raw, &z, "t");
			CHECK(r && trace_reader_next(r, &rec) == 1 && rec.type == TRACE_ALLOCS && rec.u.allocs.count == 2 &&
			      rec.u.allocs.events[1].address == (NEW | 0));
			trace_reader_close(r);
			free(z.p);
		}
		free(raw.p);
	}
}

/* ALLOCS_IDS columns long enough to be stepped over eight bytes at a time,
 * with varints of every length in them: one of ten bytes (the longest) across
 * words, two-byte ones at word ends; then the same with an eleven-byte varint
 * (corrupt: longer than 64 bits) and cut short within a column. */
static void put_varint(struct bytes *raw, uint64_t v, unsigned pad)
{
	/* pad: at least this many bytes (continuation bytes of value 0 before the last) */
	for (unsigned n = 1; v >= 0x80 || n < pad; n++, v >>= 7)
		PUT(raw, (uint8_t)(v & 0x7f) | 0x80);
	PUT(raw, (uint8_t)v);
}

static void put_long_columns(struct bytes *raw, unsigned long_pad, int cut)
{
	enum { M = 40 };
	put_file_header(raw, 1, 5, 16);
	size_t at = begin_record(raw, 14, 1);
	put_le(raw, 77, 4), put_le(raw, M, 4), put_le(raw, 100, 8), put_le(raw, 5000000, 8);
	for (unsigned i = 0; i < M; i++)
		PUT(raw, 1); /* op: malloc */
	for (unsigned i = 0; i < M; i++)
		put_varint(raw, i ? 2 : 0, i == 20 ? long_pad : 0); /* seq +1, one of them padded long */
	put_varint(raw, 154, 0); /* tid 77 */
	for (unsigned i = 1; i < M; i++)
		PUT(raw, 0);
	for (unsigned i = 0; i < M; i++)
		put_varint(raw, i == 13 ? 2 * 1000000000000ull : 0, 0); /* time: once +10^12 */
	for (unsigned i = 0; i < M; i++)
		put_varint(raw, i % 7 == 6 ? 300 + i : i == 30 ? UINT64_MAX : i, 0); /* sizes of 1, 2 and 10 bytes */
	for (unsigned i = 0; i < M; i++)
		put_varint(raw, 1000 + i, 0); /* stack_id: two bytes each */
	for (unsigned i = 0; i < M - (cut ? 1 : 0); i++)
		PUT(raw, 0); /* alloc_ref: new blocks */
	end_record(raw, at);
	put_end_1_4(raw, 0);
}

static void test_allocs_ids_long_columns(void)
{
	const uint64_t NEW = 1ull << 63;
	struct bytes raw = { 0 }, z;
	put_long_columns(&raw, 10, 0);
	struct trace_reader *r = open_raw(&raw, &z, "t");
	struct trace_record rec;
	CHECK(r && trace_reader_next(r, &rec) == 1 && rec.type == TRACE_ALLOCS && rec.u.allocs.count == 40);
	if (r && rec.type == TRACE_ALLOCS && rec.u.allocs.count == 40) {
		const struct trace_heap_event *e = rec.u.allocs.events;
		for (unsigned i = 0; i < 40; i++) {
			uint64_t size = i % 7 == 6 ? 300 + i : i == 30 ? UINT64_MAX : i;
			CHECKF(e[i].kind == TRACE_HEAP_MALLOC && e[i].seq == 100 + i && e[i].tid == 77 &&
				       e[i].time_ns == (i < 13 ? 5000000 : 5000000 + 1000000000000ull) && e[i].size == size &&
				       e[i].stack_id == 1000 + i && e[i].address == (NEW | i),
			       "entry %u: seq %llu time %llu size %llu stack %u", i, (unsigned long long)e[i].seq,
			       (unsigned long long)e[i].time_ns, (unsigned long long)e[i].size, e[i].stack_id);
		}
	}
	{ int got = r ? trace_reader_next(r, &rec) : -1; CHECKF(got == 1 && rec.type == TRACE_END, "%d", got); }
	trace_reader_close(r);
	free(z.p);
	free(raw.p);
	memset(&raw, 0, sizeof raw);
	put_long_columns(&raw, 11, 0);
	expect_corrupt(&raw, "longer than 64 bits");
	free(raw.p);
	memset(&raw, 0, sizeof raw);
	put_long_columns(&raw, 0, 1);
	expect_corrupt(&raw, "cut short");
	free(raw.p);
}

/* An op column long enough to be counted eight bytes at a time (trace_allocs.c:
 * ops_count), with two-byte ops across word ends, NONE entries and a reserved
 * kind (an allocation: it has size, stack and alloc_ref): a miscounted kind
 * would shift every column after the ops. Then the same with an op longer
 * than 64 bits among them. */
static void put_mixed_ops(struct bytes *raw, int too_long)
{
	enum { M = 45 };
	put_file_header(raw, 1, 5, 16);
	size_t at = begin_record(raw, 14, 1);
	put_le(raw, 77, 4), put_le(raw, M, 4), put_le(raw, 100, 8), put_le(raw, 5000000, 8);
	for (unsigned i = 0; i < M; i++)
		if (too_long && i == 20)
			PUT(raw, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0); /* 11 bytes */
		else switch (i % 5) {
		case 0: PUT(raw, 0); break;          /* NONE */
		case 1: PUT(raw, 0x81, 0x01); break; /* malloc, NESTED: 1 | 8 << 4 */
		case 2: PUT(raw, 0x8f, 0x01); break; /* free, NESTED: 15 | 8 << 4 */
		case 3: PUT(raw, 10); break;         /* reserved kind 10: an allocation entry */
		default: PUT(raw, 79); break;        /* free, TEMPORARY: 15 | 4 << 4 */
		}
	for (unsigned i = 0; i < M; i++)
		PUT(raw, i ? 2 : 0); /* seq +1 */
	PUT(raw, 0x9a, 0x01); /* tid 77 */
	for (unsigned i = 1; i < M; i++)
		PUT(raw, 0);
	for (unsigned i = 0; i < M; i++)
		PUT(raw, 0); /* time */
	for (unsigned i = 0; i < M; i++)
		if (i % 5 == 1 || i % 5 == 3)
			PUT(raw, (uint8_t)i); /* size */
	for (unsigned i = 0; i < M; i++)
		if (i % 5 == 1 || i % 5 == 3)
			PUT(raw, (uint8_t)(i + 1)); /* stack_id */
	for (unsigned i = 0; i < M; i++)
		if (i % 5 == 1 || i % 5 == 3)
			PUT(raw, 0); /* alloc_ref: new blocks */
	for (unsigned i = 0; i < M; i++)
		if (i % 5 == 2 || i % 5 == 4)
			PUT(raw, 0); /* free_ref: frees of no recorded block */
	end_record(raw, at);
	put_end_1_4(raw, 0);
}

static void test_allocs_ids_mixed_ops(void)
{
	const uint64_t NEW = 1ull << 63;
	struct bytes raw = { 0 }, z;
	put_mixed_ops(&raw, 0);
	struct trace_reader *r = open_raw(&raw, &z, "t");
	struct trace_record rec;
	CHECK(r && trace_reader_next(r, &rec) == 1 && rec.type == TRACE_ALLOCS && rec.u.allocs.count == 45);
	if (r && rec.type == TRACE_ALLOCS && rec.u.allocs.count == 45) {
		const struct trace_heap_event *e = rec.u.allocs.events;
		uint64_t ordinal = 0;
		for (unsigned i = 0; i < 45; i++) {
			static const uint32_t kind[5] = { TRACE_HEAP_NONE, TRACE_HEAP_MALLOC, TRACE_HEAP_FREE, 10, TRACE_HEAP_FREE };
			static const uint32_t flags[5] = { 0, TRACE_HEAP_NESTED, TRACE_HEAP_NESTED, 0, TRACE_HEAP_TEMPORARY };
			int alloc = i % 5 == 1 || i % 5 == 3;
			CHECKF(e[i].kind == kind[i % 5] && e[i].flags == flags[i % 5] && e[i].seq == 100 + i && e[i].tid == 77 &&
				       e[i].size == (alloc ? i : 0) && e[i].stack_id == (alloc ? i + 1 : 0) &&
				       e[i].address == (alloc ? (NEW | ordinal) : 0),
			       "entry %u: kind %u flags %u size %llu stack %u address %llx", i, e[i].kind, e[i].flags,
			       (unsigned long long)e[i].size, e[i].stack_id, (unsigned long long)e[i].address);
			ordinal += alloc;
		}
	}
	{ int got = r ? trace_reader_next(r, &rec) : -1; CHECKF(got == 1 && rec.type == TRACE_END, "%d", got); }
	trace_reader_close(r);
	free(z.p);
	free(raw.p);
	memset(&raw, 0, sizeof raw);
	put_mixed_ops(&raw, 1);
	expect_corrupt(&raw, "longer than 64 bits");
	free(raw.p);
}

int main(void)
{
	alarm(600); /* a hang is a failure too */
	test_allocs();
	test_allocs_ids();
	test_allocs_ids_long_columns();
	test_allocs_ids_mixed_ops();
	test_allocs_packed();
	test_jit_map();
	test_versions_and_unknown_records();
	test_corrupt_records();
	test_processes_and_wall_samples();
	printf("unit_trace_layout: all passed\n");
	return 0;
}
