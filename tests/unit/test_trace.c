/*
 * test_trace.c - unit tests of the trace writer and reader through the
 * writer (ctest unit_trace): round trips of every record type, a large
 * trace's speed and size, writer errors and a slow non-blocking reader.
 * Damaged input (cuts at every offset, bit flips) must give an error or a
 * prefix of the records, never a crash or a hang; run it under ASan/UBSan too.
 * Streams the writer never produces are test_trace_layout.c's.
 */
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHECK_STOP_AT_FIRST_FAILURE /* later steps use what earlier ones built */
#include "check.h"
#include "trace_test_support.h"

/* CPU time: the rates printed stay meaningful on a busy machine. */
static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void test_round_trip(void)
{
	uint64_t flush_sizes[4];
	int flush_records[4];
	struct bytes z = write_small_trace(flush_sizes, flush_records);
	struct outcome o = read_memory(z.p, z.len, 1);
	CHECKF(o.last == 0 && o.records == 14 && !o.truncated, "last %d records %d: %s", o.last,
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
	CHECK(n == 14 && !trace_reader_truncated(r));
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
	CHECK(n == 14);
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
	struct outcome empty = read_memory(z.p, 0, 1);
	CHECKF(empty.last == -2 && !strcmp(empty.message, "t.zst: empty file, not an ipscope trace"),
	       "empty: %d %s", empty.last, empty.message);
	for (size_t cut = 1; cut <= z.len; cut++) {
		struct outcome o = read_memory(z.p, cut, 1);
		CHECKF(o.last == 0, "cut %zu: %d %s", cut, o.last, o.message);
		CHECK(o.records >= max_records); /* longer prefixes never read less */
		max_records = o.records;
		CHECKF(o.truncated == (o.records < 14), "cut %zu: %d records", cut, o.records);
		if (o.truncated)
			CHECKF(strstr(o.message, "t.zst: truncated at offset ") == o.message &&
			       strstr(o.message, "(no END record)"), "%s", o.message);
		for (int i = 0; i < 4; i++)
			if (cut == flush_sizes[i])
				CHECKF(o.records == flush_records[i], "cut at flush %d: %d records", i, o.records);
	}
	CHECK(max_records == 14);
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
	rng_seed(12345);
	uint64_t t = 1000000000ull;
	double t0 = now();
	for (uint32_t i = 0; i < nsamples; i++) {
		uint64_t x = rng();
		t += 1000000 + x % 20000;
		struct trace_sample s = { t, 7, 7 + (uint32_t)(x >> 20) % 4, (uint32_t)(x >> 32) % nstacks,
					  1 + ((x >> 50) % 16 == 0), (uint32_t)(x >> 60) % 3, -1};
		CHECK(trace_writer_sample(w, &s) == 0);
		if (i == nsamples / 2) /* the autoflush has written most of it by now */
			CHECK(trace_writer_compressed_bytes(w) > trace_writer_raw_bytes(w) / 20);
	}
	double t1 = now();
	uint64_t raw_written = trace_writer_raw_bytes(w);
	struct trace_end e = { t, 0, TRACE_END_EXITED, nsamples, nsamples, 0, 0, 0, 0};
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
	rng_seed(12345);
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
	CHECK(trace_reader_raw_bytes(r) == raw_written + 8 + 64);
	trace_reader_close(r);
	printf("large: %u samples, write %.1f M/s, read+check %.1f M/s (CPU time), %.2f compressed bytes/sample\n",
	       nsamples, nsamples / (t1 - t0) / 1e6, nsamples / (t3 - t2) / 1e6, (double)z.len / nsamples);

	/* Cuts of a big trace land inside blocks of a long frame. */
	for (int i = 0; i < 100; i++) {
		size_t cut = 1 + (size_t)(rng() % (z.len - 1));
		struct outcome o = read_memory(z.p, cut, 0);
		CHECKF(o.last == 0 && o.truncated, "cut %zu: %s", cut, o.message);
		CHECK(o.records > 1000 || cut < z.len / 10);
	}
	free(z.p);
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
	rng_seed(777);
	for (uint32_t i = 0; i < 200000; i++) {
		struct trace_sample s = { rng(), 1, 2, (uint32_t)rng(), 1, 0, -1};
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

/* Events read back from ALLOCS_IDS against those written: every field but the
 * address equal; the address an identity: a free's is that of the allocation
 * it frees (the latest of its address, not freed since, of its process), or 0
 * when there is none; an allocation of an address still live takes that
 * block's identity; other allocations' identities are left to the reader.
 * slot maps (pid, address) into 0..nslots; returns how many events differ. */
static uint32_t check_identities(const struct trace_heap_event *wrote, const struct trace_heap_event *read,
				 const uint32_t *pid_of, uint32_t batch, uint32_t n,
				 uint64_t (*slot)(uint32_t pid, uint64_t address), uint64_t nslots)
{
	int64_t *live = malloc(nslots * sizeof *live); /* slot -> index of its live allocation, or -1 */
	memset(live, 0xff, nslots * sizeof *live);
	uint32_t bad = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct trace_heap_event a = wrote[i], b = read[i];
		a.address = b.address = 0;
		bad += memcmp(&a, &b, sizeof a) != 0;
		if (wrote[i].kind == TRACE_HEAP_NONE || !wrote[i].address) {
			bad += wrote[i].kind == TRACE_HEAP_FREE && read[i].address != 0;
			continue;
		}
		int64_t *l = &live[slot(pid_of[i / batch], wrote[i].address)];
		if (wrote[i].kind == TRACE_HEAP_FREE) {
			bad += read[i].address != (*l < 0 ? 0 : read[*l].address);
			*l = -1;
		} else {
			bad += *l >= 0 && read[i].address != read[*l].address;
			bad += !read[i].address;
			*l = i;
		}
	}
	free(live);
	return bad;
}

static uint64_t pool_slot(uint32_t pid, uint64_t address)
{
	return (pid - 100) * 300 + (address - 0x7f0000000000ull) / 48;
}

/* Allocation events through the writer and back, field for field: frees of
 * live blocks (referenced), of blocks never allocated (written), allocations
 * that reuse a freed block or a block still live, three processes interleaved
 * and every kind, over many records. */
static void test_allocs_round_trip(void)
{
	enum { N = 200000, BATCH = 3000, NPIDS = 3 };
	struct trace_heap_event *ev = calloc(N, sizeof *ev);
	uint64_t seq[NPIDS] = { 1, 1, 1 };
	uint32_t pid_of[N / BATCH + 1];
	rng_seed(777);
	uint64_t t = 5000000000ull;
	for (uint32_t i = 0; i < N; i++) {
		uint32_t b = i / BATCH, pid = (uint32_t)(b % NPIDS);
		pid_of[b] = 100 + pid;
		uint64_t x = rng();
		uint32_t kind = x % 2 ? TRACE_HEAP_FREE : (x % 13 == 0 ? TRACE_HEAP_NONE : 1 + (uint32_t)(x >> 8) % 14);
		t += (x >> 20) % 64 == 0 ? 4000000 : 0;
		/* A small pool of addresses: reuse, double frees and blocks allocated twice happen. */
		uint64_t address = (x >> 40) % 100 == 0 ? 0 : 0x7f0000000000ull + ((x >> 24) % 300) * 48;
		ev[i] = (struct trace_heap_event){ seq[pid]++, t, address, kind == TRACE_HEAP_FREE ? 0 : (x >> 30) % 5000,
						   1000 + (uint32_t)(x >> 50) % 3, kind == TRACE_HEAP_FREE ? 0 : (uint32_t)(x >> 34) % 50,
						   kind, (uint32_t)(x >> 58) % 32 };
		if (kind == TRACE_HEAP_NONE)
			ev[i].address = ev[i].size = ev[i].stack_id = 0;
	}
	int fd = new_memfd();
	struct trace_writer *w = trace_writer_open(fd, 1);
	CHECK(w != NULL);
	for (uint32_t i = 0; w && i < N; i += BATCH)
		CHECK(trace_writer_allocs(w, pid_of[i / BATCH], ev + i, N - i < BATCH ? N - i : BATCH) == 0);
	struct trace_end e = { t, 0, TRACE_END_EXITED, 0, 0, 0, 0, 0, 0 };
	CHECK(w && trace_writer_close(w, &e) == 0);
	struct bytes z = fd_contents(fd);
	char err[256];
	struct trace_reader *r = trace_reader_open_memory(z.p, z.len, "allocs", err, sizeof err);
	CHECKF(r != NULL, "%s", err);
	struct trace_record rec;
	struct trace_heap_event *got_ev = calloc(N, sizeof *got_ev);
	uint32_t at = 0, bad = 0;
	int got;
	while (r && (got = trace_reader_next(r, &rec)) == 1 && rec.type == TRACE_ALLOCS) {
		CHECK(rec.u.allocs.pid == pid_of[at / BATCH]);
		for (uint32_t k = 0; k < rec.u.allocs.count && at < N; k++, at++)
			got_ev[at] = rec.u.allocs.events[k];
	}
	CHECKF(r && got == 1 && rec.type == TRACE_END, "%s", r ? trace_reader_error(r) : err);
	if (at == N)
		bad = check_identities(ev, got_ev, pid_of, BATCH, N, pool_slot, NPIDS * 300);
	CHECKF(at == N && bad == 0, "%u of %u events read, %u differ", at, N, bad);
	trace_reader_close(r);
	free(z.p);
	free(got_ev);
	free(ev);
}

/* Free references over a live set far larger than the reader's first window
 * (trace_heap_refs.c): blocks freed soon, blocks that outlive many windows and
 * are freed in an order of their own (so the window grows and takes them
 * back from the table), and leaks; every address comes back. */
static uint64_t unique_slot(uint32_t pid, uint64_t address)
{
	(void)pid;
	return (address - 0x10000) / 32;
}

static void test_allocs_long_lived(void)
{
	enum { N = 400000, BATCH = 4096 };
	struct trace_heap_event *ev = calloc(N, sizeof *ev);
	uint64_t *pending = calloc(N, sizeof *pending), npending = 0;
	rng_seed(4242);
	uint64_t seq = 1, next_address = 0x10000, t = 1000;
	uint32_t n = 0;
	while (n < N) {
		uint64_t x = rng();
		struct trace_heap_event *e = &ev[n++];
		if (x % 3 == 0 && npending) { /* free a survivor: any of them */
			uint64_t j = (x >> 8) % npending;
			*e = (struct trace_heap_event){ seq++, t, pending[j], 0, 7, 0, TRACE_HEAP_FREE, 0 };
			pending[j] = pending[--npending];
		} else {
			uint64_t address = next_address += 32;
			*e = (struct trace_heap_event){ seq++, t, address, 32, 7, 1, TRACE_HEAP_MALLOC, 0 };
			if (x % 5 == 0 && n < N) /* freed at once */
				ev[n++] = (struct trace_heap_event){ seq++, t, address, 0, 7, 0, TRACE_HEAP_FREE, 0 };
			else if (x % 7 != 0) /* else leaked */
				pending[npending++] = address;
		}
	}
	int fd = new_memfd();
	struct trace_writer *w = trace_writer_open(fd, 1);
	CHECK(w != NULL);
	for (uint32_t i = 0; w && i < N; i += BATCH)
		CHECK(trace_writer_allocs(w, 9, ev + i, N - i < BATCH ? N - i : BATCH) == 0);
	struct trace_end end = { t, 0, TRACE_END_EXITED, 0, 0, 0, 0, 0, 0 };
	CHECK(w && trace_writer_close(w, &end) == 0);
	struct bytes z = fd_contents(fd);
	char err[256];
	struct trace_reader *r = trace_reader_open_memory(z.p, z.len, "long-lived", err, sizeof err);
	CHECKF(r != NULL, "%s", err);
	struct trace_record rec;
	struct trace_heap_event *got_ev = calloc(N, sizeof *got_ev);
	uint32_t at = 0, bad = 0, pid_of[N / BATCH + 1];
	for (uint32_t b = 0; b <= N / BATCH; b++)
		pid_of[b] = 9;
	int got;
	while (r && (got = trace_reader_next(r, &rec)) == 1 && rec.type == TRACE_ALLOCS)
		for (uint32_t k = 0; k < rec.u.allocs.count && at < N; k++, at++)
			got_ev[at] = rec.u.allocs.events[k];
	CHECKF(r && got == 1 && rec.type == TRACE_END, "%s", r ? trace_reader_error(r) : err);
	if (at == N)
		bad = check_identities(ev, got_ev, pid_of, BATCH, N, unique_slot, N + 2);
	free(got_ev);
	CHECKF(at == N && bad == 0, "%u of %u events read, %u differ", at, N, bad);
	CHECKF(npending > 30000, "%llu survivors: the test no longer outgrows the window", (unsigned long long)npending);
	trace_reader_close(r);
	free(z.p);
	free(pending);
	free(ev);
}

int main(void)
{
	alarm(600); /* a hang is a failure too */
	test_round_trip();
	test_allocs_round_trip();
	test_allocs_long_lived();
	test_writer_errors();
	test_writer_nonblocking_pipe();
	test_cuts();
	test_large();
	test_bit_flips();
	printf("unit_trace: all passed\n");
	return 0;
}
