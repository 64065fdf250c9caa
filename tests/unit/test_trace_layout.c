/*
 * test_trace_layout.c - unit tests of the trace reader on streams built by
 * hand from TRACE_FORMAT.md (ctest unit_trace_layout), to check what the
 * writer never produces: unknown record types, newer versions, longer
 * records from later minor versions and a catalogue of corrupt records
 * (the allocation records' in test_trace_layout_allocs.c).
 */
#include "trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK_STOP_AT_FIRST_FAILURE /* later steps use what earlier ones built */
#include "check.h"
#include "trace_test_support.h"
#include "trace_layout_support.h"

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
				  "(1.6): use a newer ipscope"), "%s", o.message);

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
	for (unsigned old_minor = 0; old_minor <= 1; old_minor++) {
		put_file_header(&raw, 1, old_minor, 16);
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
/* test_trace_layout_allocs.c */
void test_allocs(void);
void test_allocs_packed(void);
void test_allocs_ids(void);
void test_allocs_ids_long_columns(void);
void test_allocs_ids_mixed_ops(void);

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
