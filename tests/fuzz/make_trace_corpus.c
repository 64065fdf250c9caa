/*
 * make_trace_corpus.c - writes the fuzzer's seed corpus (tests/fuzz/corpus/)
 * with the real trace writer: small traces of every record type, each as the
 * zstd file collect would write and as its decompressed record stream (which
 * fuzz_trace_reader compresses before reading; see there why).
 *
 * Regenerate after a format change (commit the result, a few KiB in all):
 *   build-fuzz/bin/make_trace_corpus tests/fuzz/corpus
 * The allocs9_* seeds are 1.3 ALLOCS (record 9) traces an earlier writer made
 * this way, the allocs13_* ones 1.3-1.4 ALLOCS_PACKED (record 13): the writer
 * now writes ALLOCS_IDS (record 14), and readers still read both.
 */
#include "trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

static void die(const char *what)
{
	fprintf(stderr, "make_trace_corpus: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void save(const char *dir, const char *name, const void *data, size_t size)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
		die(path);
}

/* Saves the trace written to fd as NAME.zst (cut to `cut` bytes when not 0)
 * and its decompressed stream as NAME.raw. */
static void save_trace(const char *dir, const char *name, int fd, size_t cut)
{
	off_t size = lseek(fd, 0, SEEK_END);
	uint8_t *z = malloc((size_t)size);
	if (!z || pread(fd, z, (size_t)size, 0) != size)
		die("read back");
	close(fd);
	char file[256];
	snprintf(file, sizeof file, "%s.zst", name);
	save(dir, file, z, cut ? cut : (size_t)size);
	if (cut)
		size = (off_t)cut;

	size_t raw_cap = 1 << 20, raw_len = 0;
	uint8_t *raw = malloc(raw_cap);
	ZSTD_DCtx *d = ZSTD_createDCtx();
	ZSTD_inBuffer in = { z, (size_t)size, 0 };
	while (in.pos < in.size && raw_len < raw_cap) {
		ZSTD_outBuffer out = { raw, raw_cap, raw_len };
		if (ZSTD_isError(ZSTD_decompressStream(d, &out, &in)))
			die("decompress");
		raw_len = out.pos;
	}
	snprintf(file, sizeof file, "%s.raw", name);
	save(dir, file, raw, raw_len);
	ZSTD_freeDCtx(d);
	free(raw);
	free(z);
}

static struct trace_writer *start(int *fd)
{
	*fd = memfd_create("seed", 0);
	struct trace_writer *w = *fd < 0 ? NULL : trace_writer_open(*fd, 1);
	if (!w)
		die("trace_writer_open");
	return w;
}

static void samples(struct trace_writer *w, uint32_t n, uint32_t nstacks)
{
	for (uint32_t i = 0; i < n; i++) {
		struct trace_sample s = { 1000000000ull + i * 997003ull, 100, 100 + i % 3, i % nstacks,
					  1 + (i % 7 == 0), i % 4 == 0 ? 1 : 0, -1};
		trace_writer_sample(w, &s);
	}
}

static void every_record_type(struct trace_writer *w)
{
	static const uint8_t build_id[20] = { 0x8f, 0x1e, 0x2d, 0x3c, 0x4b, 0x5a, 0x69, 0x78, 0x87, 0x96,
					      0xa5, 0xb4, 0xc3, 0xd2, 0xe1, 0xf0, 1, 2, 3, 4 };
	static const struct trace_segment segs[2] = {
		{ 0, 0x2000, 0, TRACE_SEGMENT_READ },
		{ 0x2000, 0x8000, 0x2000, TRACE_SEGMENT_READ | TRACE_SEGMENT_EXEC },
	};
	static const uint64_t ips[6] = { 0x555555555129, 0x55555555514a, 0x7ffff7dd2d8a,
					 0x7ffff7dd2e45, 0x555555555065, 0 };
	trace_writer_meta(w, TRACE_META_COMMAND, "./busy 1");
	trace_writer_meta(w, TRACE_META_MODE, "cpu");
	trace_writer_meta(w, TRACE_META_INTERVAL_NS, "1000000");
	struct trace_module m = { 100, 1, 5, 0x555555554000, "/work/busy", build_id, 20, 2, segs };
	trace_writer_module(w, &m);
	struct trace_module libc = { 100, 2, 6, 0x7ffff7dab000, "/lib/x86_64-linux-gnu/libc.so.6",
				     NULL, 0, 1, segs + 1 };
	trace_writer_module(w, &libc);
	struct trace_thread t = { 100, 100, 7, TRACE_THREAD_START | TRACE_THREAD_NAME, "busy", 5000000 };
	trace_writer_thread(w, &t);
	struct trace_stack s0 = { 0, TRACE_STACK_LEAF_EXACT, 6, ips };
	struct trace_stack s1 = { 1, TRACE_STACK_LEAF_EXACT | TRACE_STACK_TRUNCATED, 3, ips + 2 };
	trace_writer_stack(w, &s0);
	trace_writer_stack(w, &s1);
	samples(w, 20, 2);
	struct trace_loss l = { 100, 101, 8, 3 };
	trace_writer_loss(w, &l);
	trace_writer_flush(w);
	samples(w, 5, 2);
	struct trace_module_unload u = { 100, 2, 9 };
	trace_writer_module_unload(w, &u);
	t.flags = TRACE_THREAD_EXIT;
	trace_writer_thread(w, &t);
	static const char map[] = "7fff00001000 80 JS:*hot /app.js:3:5\n7fff00001080 zz garbage\n";
	struct trace_jit_map j = { 100, 10, "/tmp/perf-100.map", (const uint8_t *)map, sizeof map - 1 };
	trace_writer_jit_map(w, &j);
}

/* Wall mode and a process tree (1.4): samples on and off CPU with their system call, PROCESS records. */
static void wall_tree(struct trace_writer *w)
{
	static const uint64_t ips[3] = { 0x7ffff7e9a7fa, 0x555555555129, 0x555555555065 };
	trace_writer_meta(w, TRACE_META_COMMAND, "sh -c './a | ./b'");
	trace_writer_meta(w, TRACE_META_MODE, "wall");
	trace_writer_meta(w, TRACE_META_INTERVAL_NS, "1000000");
	trace_writer_meta(w, TRACE_META_FOLLOW, "1");
	struct trace_process exec0 = { 100, 99, 5, TRACE_PROCESS_EXECED, 0, "/bin/sh", "sh -c './a | ./b'", 0, "" };
	struct trace_process fork1 = { 101, 100, 6, TRACE_PROCESS_FORKED, 0, "", "", 0, "" };
	struct trace_process exec1 = { 101, 100, 7, TRACE_PROCESS_EXECED, 0, "/bin/static", "./static x", TRACE_PROCESS_NOT_PROFILED,
				       "statically linked: LD_PRELOAD is ignored" };
	struct trace_process exit1 = { 101, 100, 8, TRACE_PROCESS_EXITED, 0x8b, "", "", 0, "" };
	struct trace_process exit2 = { 102, 100, 9, TRACE_PROCESS_EXITED, 0, "", "", TRACE_PROCESS_STATUS_UNKNOWN, "" };
	trace_writer_process(w, &exec0);
	trace_writer_process(w, &fork1);
	trace_writer_process(w, &exec1);
	struct trace_stack st = { 7, TRACE_STACK_LEAF_EXACT | TRACE_STACK_TRUNCATED, 3, ips };
	trace_writer_stack(w, &st);
	for (uint32_t i = 0; i < 12; i++) {
		uint32_t state = i % 5;
		struct trace_sample sm = { 1000000000ull + i * 1000000ull, 100 + i % 3, 100 + i % 3, 7, 1 + i % 4, state,
					   state >= TRACE_STATE_SLEEPING ? 230 : -1 };
		trace_writer_sample(w, &sm);
	}
	trace_writer_process(w, &exit1);
	trace_writer_process(w, &exit2);
}

/* An allocation trace (1.3): META of its scheme, then ALLOCS_IDS (1.5) of every
 * kind and flag, with frees of live blocks and of unknown ones, an allocation
 * that reuses a freed block, one of a block still live (it replaces it) and a
 * failed realloc's RESTORED block. */
static void allocations(struct trace_writer *w, const char *scheme)
{
	static const uint64_t ips[3] = { 0x555555555129, 0x55555555514a, 0x7ffff7dd2d8a };
	trace_writer_meta(w, TRACE_META_COMMAND, "./alloc_sites");
	trace_writer_meta(w, TRACE_META_MODE, "cpu,allocs");
	trace_writer_meta(w, TRACE_META_ALLOC_SCHEME, scheme);
	if (!strcmp(scheme, "rate"))
		trace_writer_meta(w, TRACE_META_ALLOC_RATE, "0.1");
	if (!strcmp(scheme, "bytes"))
		trace_writer_meta(w, TRACE_META_ALLOC_MEAN_BYTES, "524288");
	struct trace_thread t = { 100, 100, 7, TRACE_THREAD_START | TRACE_THREAD_NAME, "alloc", 5000000 };
	trace_writer_thread(w, &t);
	struct trace_stack s0 = { 1, 0, 3, ips };
	trace_writer_stack(w, &s0);
	enum { N = 40 };
	struct trace_heap_event e[N];
	uint64_t seq = 1, time = 1000000000ull;
	for (uint32_t i = 0; i < N; i++) {
		uint32_t kind = i % 4 == 3 ? TRACE_HEAP_FREE : 1 + i % TRACE_HEAP_PVALLOC;
		uint32_t flags = kind == TRACE_HEAP_FREE ? (i % 8 == 3 ? TRACE_HEAP_TEMPORARY : TRACE_HEAP_BY_REALLOC)
						 : kind == TRACE_HEAP_REALLOC ? TRACE_HEAP_MOVED : 0;
		if (i == 17)
			flags |= TRACE_HEAP_RESTORED | TRACE_HEAP_NESTED;
		e[i] = (struct trace_heap_event){ seq, time, 0x5555555a0000ull + (i / 4) * 64 + (i % 4 == 3 ? 0 : 64 * (i % 4)),
						  kind == TRACE_HEAP_FREE ? 0 : 16 + i * 100, 100 + i % 2,
						  kind == TRACE_HEAP_FREE ? 0 : 1, kind, flags };
		seq += 1 + (i == 20 ? 100000 : 0);
		time += i % 5 == 0 ? 4000000 : 0;
	}
	e[9].kind = TRACE_HEAP_NONE;
	e[12].address = e[11].address;
	e[14].address = e[13].address; /* allocated again, never freed: replaced */
	e[18] = e[17]; /* a realloc's free, then its RESTORED block */
	e[18].seq = e[17].seq + 1, e[18].flags = TRACE_HEAP_RESTORED, e[18].kind = TRACE_HEAP_REALLOC;
	e[17].kind = TRACE_HEAP_FREE, e[17].flags = TRACE_HEAP_BY_REALLOC, e[17].size = 0, e[17].stack_id = 0;
	e[17].address = e[16].address;
	e[18].address = e[16].address;
	trace_writer_allocs(w, 100, e, N / 2);
	trace_writer_flush(w);
	trace_writer_allocs(w, 100, e + N / 2, N / 2);
	samples(w, 5, 2);
}

/* Allocations of a process tree: a parent, its fork child (freeing an inherited block), an exec in
 * the child whose events number from 1 again, each process's own ALLOCS_PACKED state. */
static void allocations_tree(struct trace_writer *w)
{
	static const uint64_t ips[2] = { 0x555555555129, 0x7ffff7dd2d8a };
	trace_writer_meta(w, TRACE_META_MODE, "allocs");
	trace_writer_meta(w, TRACE_META_ALLOC_SCHEME, "all");
	struct trace_process exec0 = { 100, 99, 5, TRACE_PROCESS_EXECED, 0, "/bin/t", "t", 0, "" };
	struct trace_process fork1 = { 101, 100, 6, TRACE_PROCESS_FORKED, 0, "", "", 0, "" };
	struct trace_process exec1 = { 101, 100, 9, TRACE_PROCESS_EXECED, 0, "/bin/leaf", "leaf 3", 0, "" };
	struct trace_stack s0 = { 1, 0, 2, ips }, s1 = { 2, 0, 1, ips + 1 };
	trace_writer_stack(w, &s0);
	trace_writer_stack(w, &s1);
	const uint64_t a = 0x5555555a0000ull, b = a + 64;
	struct trace_heap_event parent[2] = { { 1, 5, a, 24, 100, 1, TRACE_HEAP_MALLOC, 0 },
					       { 2, 5, b, 48, 100, 1, TRACE_HEAP_CALLOC, 0 } };
	struct trace_heap_event child[3] = { { 1, 7, a, 0, 101, 0, TRACE_HEAP_FREE, 0 },
					      { 2, 7, a, 16, 101, 2, TRACE_HEAP_MALLOC, 0 },
					      { 3, 8, b, 0, 101, 0, TRACE_HEAP_FREE, TRACE_HEAP_TEMPORARY } };
	struct trace_heap_event leaf[2] = { { 1, 10, a, 0, 101, 0, TRACE_HEAP_FREE, 0 },
					     { 2, 10, a, 8, 101, 2, TRACE_HEAP_REALLOC, TRACE_HEAP_MOVED } };
	trace_writer_process(w, &exec0);
	trace_writer_allocs(w, 100, parent, 2);
	trace_writer_process(w, &fork1);
	trace_writer_allocs(w, 101, child, 3);
	trace_writer_allocs(w, 100, parent, 1); /* the same seq again: a writer's bug, read as given */
	trace_writer_process(w, &exec1);
	trace_writer_allocs(w, 101, leaf, 2);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: make_trace_corpus DIR\n");
		return 2;
	}
	const char *dir = argv[1];
	int fd;
	struct trace_end end = { 1000, 0, TRACE_END_EXITED, 25, 29, 3, 120000, 30, 0};

	struct trace_writer *w = start(&fd);
	trace_writer_close(w, &end);
	save_trace(dir, "empty", fd, 0);

	w = start(&fd);
	every_record_type(w);
	trace_writer_close(w, &end);
	save_trace(dir, "every_type", fd, 0);

	w = start(&fd);
	every_record_type(w);
	trace_writer_flush(w);
	off_t at_flush = lseek(fd, 0, SEEK_END);
	trace_writer_close(w, &end);
	save_trace(dir, "cut", fd, (size_t)at_flush - 20);

	w = start(&fd);
	wall_tree(w);
	end.exited_unsampled = 4;
	trace_writer_close(w, &end);
	save_trace(dir, "wall_tree", fd, 0);
	end.exited_unsampled = 0;

	/* Several batches, one of them cut by a flush. */
	w = start(&fd);
	samples(w, 30, 1);
	trace_writer_flush(w);
	samples(w, 90, 5);
	end.samples = 120;
	trace_writer_close(w, &end);
	save_trace(dir, "batches", fd, 0);

	/* Allocations (1.3): every kind, each scheme, one cut inside an ALLOCS_IDS record. */
	end.samples = 5;
	const char *const schemes[] = { "all", "rate", "bytes" };
	for (int i = 0; i < 3; i++) {
		char name[32];
		w = start(&fd);
		allocations(w, schemes[i]);
		trace_writer_close(w, &end);
		snprintf(name, sizeof name, "allocs_%s", schemes[i]);
		save_trace(dir, name, fd, 0);
	}
	w = start(&fd);
	allocations(w, "all");
	trace_writer_flush(w);
	at_flush = lseek(fd, 0, SEEK_END);
	trace_writer_close(w, &end);
	save_trace(dir, "allocs_cut", fd, (size_t)at_flush - 12);
	w = start(&fd);
	allocations_tree(w);
	trace_writer_close(w, &end);
	save_trace(dir, "allocs_tree", fd, 0);
	return 0;
}
