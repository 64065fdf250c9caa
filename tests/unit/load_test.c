/*
 * load_test.c - unit tests of the loader (analyze/load*.c) on traces made
 * with the trace writer (or by hand, for what the writer cannot write):
 * value types, epochs (a module unloaded and another mapped at the same
 * addresses), undefined and empty stacks, unknown record types, truncation,
 * an empty file; and what a trace cannot truthfully say (issue 13): lost
 * counters, weights and totals past any bound, times outside the run, a
 * module path that is a FIFO. Also allocation blocks of 4 GiB and more, and
 * samples kept in time: a row each, or summed per time bin past a bound.
 * Every message must come through the diagnostics sink, one per thread at
 * most, never on stderr.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "load.h"
#include "trace.h"
#include "trace_test_support.h"

#include "check.h"

#define START_NS 1000000000ull
#define INTERVAL 1000000ull
#define BIAS 0x7f0000000000ull

static char dir[] = "/tmp/ipscope-load-test-XXXXXX";

static const struct trace_segment segment = {0, 0x10000, 0, TRACE_SEGMENT_EXEC | TRACE_SEGMENT_READ};

static struct trace_writer *start(const char *name, int *fd, int with_start)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	*fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(*fd >= 0);
	struct trace_writer *w = trace_writer_open(*fd, 1);
	CHECK(w != NULL);
	trace_writer_meta(w, TRACE_META_MODE, "cpu");
	trace_writer_meta(w, TRACE_META_INTERVAL_NS, "1000000");
	if (with_start)
		trace_writer_meta(w, TRACE_META_START_MONOTONIC_NS, "1000000000");
	return w;
}

static void finish(struct trace_writer *w, int fd, uint64_t end_ns, uint64_t lost)
{
	struct trace_end e = {end_ns, 0, TRACE_END_EXITED, 0, 0, lost, 0, 0, 0};
	CHECK(trace_writer_close(w, &e) == 0);
	close(fd);
}

static void module(struct trace_writer *w, uint32_t id, const char *path, uint64_t time_ns)
{
	struct trace_module m = {1, id, time_ns, BIAS, path, NULL, 0, 1, &segment};
	CHECK(trace_writer_module(w, &m) == 0);
}

static void stack(struct trace_writer *w, uint32_t id, uint64_t ip)
{
	uint64_t ips[2] = {ip, BIAS + 0x100};
	struct trace_stack s = {id, TRACE_STACK_LEAF_EXACT, 2, ips};
	CHECK(trace_writer_stack(w, &s) == 0);
}

static void sample(struct trace_writer *w, uint64_t time_ns, uint32_t tid, uint32_t stack_id, uint32_t weight)
{
	struct trace_sample s = {time_ns, 1, tid, stack_id, weight, 0, -1};
	CHECK(trace_writer_sample(w, &s) == 0);
}

/* Load dir/name with symbolization, rows in time as sample_times and time_rows say, messages into *list. */
static struct profile *load_timed(const char *name, int sample_times, uint64_t time_rows, struct diag_list *list,
				  struct load_stats *st)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	memset(list, 0, sizeof(*list));
	struct diag_sink sink = diag_list_sink(list);
	struct load_options o;
	load_options_init(&o);
	o.diag = &sink;
	o.sample_times = sample_times;
	o.time_rows = time_rows;
	return load_trace(path, &o, st);
}

/* Load dir/name with symbolization, messages into *list. */
static struct profile *load(const char *name, struct diag_list *list, struct load_stats *st)
{
	return load_timed(name, LOAD_TIMES_NONE, 0, list, st);
}

/* Messages holding needle. */
static int count_messages(const struct diag_list *list, const char *needle)
{
	int n = 0;
	for (size_t i = 0; i < list->n; i++)
		n += strstr(list->texts[i], needle) != NULL;
	return n;
}

static void dump(const struct diag_list *list)
{
	for (size_t i = 0; i < list->n; i++)
		fprintf(stderr, "  diag: %s\n", list->texts[i]);
}

/* Name of the leaf function of sample i's stack. */
static const char *leaf_name(const struct profile *p, uint64_t i)
{
	const struct profile_stack *s = &p->stacks[p->samples[i].stack];
	const struct profile_location *l = &p->locations[p->stack_locations[s->first]];
	return profile_string(p, p->functions[p->lines[l->first_line].function].name);
}

static void test_values_and_epochs(void)
{
	int fd;
	struct trace_writer *w = start("epochs.zst", &fd, 1);
	module(w, 1, "/nonexistent/liba.so", START_NS);
	stack(w, 1, BIAS + 0x1000);
	sample(w, START_NS + 10, 1, 1, 2);
	sample(w, START_NS + 20, 1, 1, 1);
	struct trace_module_unload u = {1, 1, START_NS + 30};
	CHECK(trace_writer_module_unload(w, &u) == 0);
	module(w, 2, "/nonexistent/libb.so", START_NS + 40);
	sample(w, START_NS + 50, 2, 1, 3);
	sample(w, START_NS + 60, 1, 0, 1); /* stack 0 is never defined */
	struct trace_stack empty = {3, 0, 0, NULL};
	CHECK(trace_writer_stack(w, &empty) == 0);
	sample(w, START_NS + 70, 2, 3, 1);
	finish(w, fd, START_NS + 100000000, 0);

	struct diag_list list;
	struct load_stats st;
	struct profile *p = load("epochs.zst", &list, &st);
	CHECK(p != NULL);
	/* samples/count (the weight), cpu/nanoseconds (x interval), default samples. */
	CHECK(p->nvalue_types == 2 && p->ncolumns == 1 && p->default_value == 0 && p->period_type == 1);
	CHECK(!strcmp(profile_string(p, p->value_types[1].type), "cpu"));
	CHECK(profile_value_total(p, 0, NULL) == 8 && profile_value_total(p, 1, NULL) == 8 * (int64_t)INTERVAL);
	CHECK(p->nsamples == 5 && p->nthreads == 2 && p->duration_ns == 100000000);
	/* The same raw stack before and after the unload: two modules. */
	CHECKF(!strcmp(leaf_name(p, 0), "liba.so+0x1000"), "%s", leaf_name(p, 0));
	CHECKF(!strcmp(leaf_name(p, 2), "libb.so+0x1000"), "%s", leaf_name(p, 2));
	CHECK(p->samples[0].stack == p->samples[1].stack && p->samples[0].stack != p->samples[2].stack);
	/* Undefined and empty stacks: one [unknown] frame, said once. */
	CHECKF(!strcmp(leaf_name(p, 3), "[unknown]") && !strcmp(leaf_name(p, 4), "[unknown]"), "%s %s",
	       leaf_name(p, 3), leaf_name(p, 4));
	CHECK(st.undefined_stack_samples == 1);
	CHECK(count_messages(&list, "1 samples refer to 1 stacks the trace never defines") == 1);
	CHECK(count_messages(&list, "liba.so: file not found") == 1);
	CHECK(st.stack_records == 2 && !st.truncated);
	/* Per-thread totals are computed, not stored. */
	int64_t per_thread[2];
	uint64_t rows[2];
	profile_thread_totals(p, 0, per_thread, rows);
	CHECK(per_thread[0] == 4 && rows[0] == 3 && per_thread[1] == 4 && rows[1] == 2);
	diag_list_free(&list);
	load_stats_free(&st);
	profile_free(p);
}

/* An unload whose record comes after a sample timed later (collect drains one ring after
 * another): the summed row spans both epochs, and the loader says so rather than staying silent. */
static void test_late_unload(void)
{
	int fd;
	struct trace_writer *w = start("late-unload.zst", &fd, 1);
	module(w, 1, "/nonexistent/liba.so", START_NS);
	stack(w, 1, BIAS + 0x1000);
	sample(w, START_NS + 10, 1, 1, 1);
	sample(w, START_NS + 50, 1, 1, 1); /* after the unload below, read before it */
	struct trace_module_unload u = {1, 1, START_NS + 30};
	CHECK(trace_writer_module_unload(w, &u) == 0);
	module(w, 2, "/nonexistent/libb.so", START_NS + 40);
	finish(w, fd, START_NS + 100000000, 0);

	struct diag_list list;
	struct load_stats st;
	struct profile *p = load("late-unload.zst", &list, &st);
	CHECK(p != NULL);
	CHECK(profile_samples_total(p) == 2);
	CHECKF(count_messages(&list, "2 samples were summed across a library unload whose record came late") == 1,
	       "%zu messages", list.n);
	diag_list_free(&list);
	load_stats_free(&st);
	profile_free(p);
}

/* A record type no reader knows is skipped by its length; REQUIRED is not. */
static void test_unknown_records(void)
{
	for (int required = 0; required < 2; required++) {
		struct bytes raw = {0};
		put_file_header(&raw, 1, 0, 16);
		size_t at = begin_record(&raw, 42, required ? 1 : 0);
		put_le(&raw, 0xdeadbeef, 4);
		end_record(&raw, at);
		at = begin_record(&raw, TRACE_SAMPLES, 0);
		put_le(&raw, 1, 4);
		put_le(&raw, 28, 4);
		put_le(&raw, START_NS, 8), put_le(&raw, 1, 4), put_le(&raw, 1, 4);
		put_le(&raw, 5, 4), put_le(&raw, 7, 4), put_le(&raw, 0, 4);
		end_record(&raw, at);
		put_end_record(&raw);
		struct bytes z = zstd_compress(&raw);
		char path[256];
		snprintf(path, sizeof(path), "%s/unknown.zst", dir);
		FILE *f = fopen(path, "w");
		CHECK(f && fwrite(z.p, 1, z.len, f) == z.len && fclose(f) == 0);
		struct diag_list list;
		struct profile *p = load("unknown.zst", &list, NULL);
		if (required) {
			CHECK(p == NULL && list.n == 1 && list.levels[0] == DIAG_ERROR);
			CHECKF(strstr(list.texts[0], "record type 42 is required but unknown") != NULL, "%s",
			       list.n ? list.texts[0] : "");
		} else {
			CHECK(p && p->nsamples == 1 && profile_value_total(p, 0, NULL) == 7);
		}
		diag_list_free(&list);
		profile_free(p);
		free(raw.p);
		free(z.p);
	}
}

static void test_truncated_and_empty(void)
{
	int fd;
	struct trace_writer *w = start("cut.zst", &fd, 1);
	stack(w, 1, BIAS + 0x10);
	sample(w, START_NS + 1, 1, 1, 1);
	CHECK(trace_writer_flush(w) == 0);
	off_t cut = (off_t)trace_writer_compressed_bytes(w);
	sample(w, START_NS + 2, 1, 1, 1);
	struct trace_end e = {START_NS + 3, 0, TRACE_END_EXITED, 2, 2, 0, 0, 0, 0};
	CHECK(trace_writer_close(w, &e) == 0);
	CHECK(ftruncate(fd, cut) == 0); /* cut after the flush: no END */
	close(fd);
	struct diag_list list;
	struct load_stats st;
	struct profile *p = load("cut.zst", &list, &st);
	CHECK(p && p->nsamples == 1 && st.truncated && !p->ended);
	CHECK(count_messages(&list, "truncated at offset") == 1 && list.levels[0] == DIAG_WARNING);
	diag_list_free(&list);
	load_stats_free(&st);
	profile_free(p);

	char path[256];
	snprintf(path, sizeof(path), "%s/empty.zst", dir);
	close(open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600));
	p = load("empty.zst", &list, NULL);
	CHECK(p == NULL && list.n == 1 && list.levels[0] == DIAG_ERROR);
	CHECKF(list.n && strstr(list.texts[0], "empty.zst: empty file, not an ipscope trace"), "%s",
	       list.n ? list.texts[0] : "");
	diag_list_free(&list);
}

/* Lost counters from shared memory: clamped, one line per thread. */
static void test_implausible_losses(void)
{
	int fd;
	struct trace_writer *w = start("lost.zst", &fd, 1);
	stack(w, 1, BIAS + 0x10);
	for (uint32_t tid = 1; tid <= 3; tid++)
		sample(w, START_NS + tid, tid, 1, 1);
	/* 2 s at 1 ms: at most 2001 samples per thread could have been lost. */
	for (int rep = 0; rep < 100; rep++)
		for (uint32_t tid = 1; tid <= 3; tid++) {
			struct trace_loss l = {1, tid, 0, tid == 3 ? 1 : 12534910648671186440ull};
			CHECK(trace_writer_loss(w, &l) == 0);
		}
	finish(w, fd, START_NS + 2000000000ull, 12534910648671186440ull);
	struct diag_list list;
	struct load_stats st;
	struct profile *p = load("lost.zst", &list, &st);
	CHECK(p != NULL);
	CHECKF(count_messages(&list, "lost samples cannot be true") == 3, "%d", count_messages(&list, "lost"));
	CHECK(count_messages(&list, "thread 1:") == 1 && count_messages(&list, "thread 2:") == 1);
	CHECK(count_messages(&list, "thread 3:") == 0);
	CHECK(count_messages(&list, "END record") == 1);
	CHECKF(p->lost_samples == 2 * 2001 + 100, "lost %llu", (unsigned long long)p->lost_samples);
	CHECK(st.implausible_loss_threads == 3);
	if (check_failures)
		dump(&list);
	diag_list_free(&list);
	load_stats_free(&st);
	profile_free(p);
}

/* Weights near 2^32, CPU time past the run, times outside it. */
static void test_implausible_samples(void)
{
	int fd;
	struct trace_writer *w = start("weights.zst", &fd, 1);
	stack(w, 1, BIAS + 0x10);
	for (int i = 0; i < 1000; i++)
		sample(w, START_NS + 1000 + (uint64_t)i, 1, 1, 4294967295u);
	for (int i = 0; i < 900; i++) /* each possible, together 1.8 s in a 1 s run */
		sample(w, START_NS + 2000 + (uint64_t)i, 2, 1, 2);
	sample(w, START_NS + 50000000000ull, 3, 1, 1); /* 50 s after a 1 s run */
	sample(w, START_NS + 10, 4, 1, 1);
	sample(w, START_NS + 900000000, 5, 1, 1);
	sample(w, START_NS + 100, 5, 1, 1); /* 0.9 s back: within the slack */
	sample(w, START_NS + 5000000000ull, 6, 1, 1);
	sample(w, START_NS + 100, 6, 1, 1); /* 5 s back */
	finish(w, fd, START_NS + 1000000000ull, 0);
	struct diag_list list;
	struct load_stats st;
	struct profile *p = load("weights.zst", &list, &st);
	CHECK(p != NULL);
	/* 1001 periods fit in 1 s at 1 ms: each clamped weight counts 1001. */
	int64_t weights[8];
	profile_thread_totals(p, 0, weights, NULL);
	CHECKF(weights[0] == 1000 * 1001, "%lld", (long long)weights[0]);
	CHECK(st.clamped_weights == 1000 && st.implausible_weight_threads == 1);
	CHECK(count_messages(&list, "weigh more timer periods than fit") == 1);
	CHECK(count_messages(&list, "thread 2: samples add up to 1.800 s of CPU") == 1);
	CHECK(count_messages(&list, "thread 3: 1 samples have times outside the run") == 1);
	CHECK(count_messages(&list, "thread 4") == 0 && count_messages(&list, "thread 5") == 0);
	CHECK(count_messages(&list, "thread 6: 1 samples go back in time") == 1 && st.samples_backwards == 1);
	CHECK(st.overbusy_threads == 2);
	if (check_failures)
		dump(&list);
	diag_list_free(&list);
	load_stats_free(&st);
	profile_free(p);

	/* Without a start time nothing bounds the weights: the CPU total
	 * saturates instead of wrapping, and says so. */
	w = start("saturate.zst", &fd, 0);
	stack(w, 1, BIAS + 0x10);
	for (int i = 0; i < 4000; i++)
		sample(w, 1000 + (uint64_t)i, 1, 1, 4294967295u);
	finish(w, fd, 10000, 0);
	p = load("saturate.zst", &list, &st);
	CHECK(p != NULL);
	int saturated = 0;
	CHECK(profile_value_total(p, 0, &saturated) == 4000 * 4294967295ll && !saturated);
	CHECK(profile_value_total(p, 1, &saturated) == INT64_MAX && saturated);
	diag_list_free(&list);
	load_stats_free(&st);
	profile_free(p);
}

static void on_alarm(int sig)
{
	(void)sig;
	static const char msg[] = "load_test: loading a trace naming a FIFO hung\n";
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	_exit(1);
}

/* A module path that is a FIFO must not block analyze (an open() would). */
static void test_fifo_module(void)
{
	char fifo[256];
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	CHECK(mkfifo(fifo, 0600) == 0);
	int fd;
	struct trace_writer *w = start("fifo.zst", &fd, 1);
	module(w, 1, fifo, START_NS);
	stack(w, 1, BIAS + 0x10);
	sample(w, START_NS + 1, 1, 1, 1);
	finish(w, fd, START_NS + 1000000, 0);
	signal(SIGALRM, on_alarm);
	alarm(10);
	struct diag_list list;
	struct profile *p = load("fifo.zst", &list, NULL);
	alarm(0);
	CHECK(p && (p->modules[0].flags & PROFILE_MODULE_NOT_REGULAR));
	CHECKF(count_messages(&list, "fifo: not a regular file") == 1, "%zu messages", list.n);
	diag_list_free(&list);
	profile_free(p);
}

/* Blocks of 4 GiB and more (their sizes kept beside the live table) and an
 * address reused for a small block after a huge one was freed. */
static void test_huge_blocks(void)
{
	int fd;
	struct trace_writer *w = start("huge.zst", &fd, 1);
	trace_writer_meta(w, TRACE_META_ALLOC_SCHEME, "all");
	module(w, 1, "/nonexistent/liba.so", START_NS);
	stack(w, 1, BIAS + 0x1000);
	const uint64_t G = 1ull << 30, a = 0x10000, b = 0x20000, c = 0x30000;
	struct trace_heap_event e[6] = {
		{ 1, START_NS + 1, a, 5 * G, 1, 1, TRACE_HEAP_MALLOC, 0 },
		{ 2, START_NS + 2, b, 100, 1, 1, TRACE_HEAP_MALLOC, 0 },
		{ 3, START_NS + 3, c, 6 * G, 1, 1, TRACE_HEAP_MALLOC, 0 },
		{ 4, START_NS + 4, a, 0, 1, 0, TRACE_HEAP_FREE, 0 },
		{ 5, START_NS + 5, a, 10, 1, 1, TRACE_HEAP_MALLOC, 0 },
		{ 6, START_NS + 6, a, 0, 1, 0, TRACE_HEAP_FREE, 0 },
	};
	CHECK(trace_writer_allocs(w, 1, e, 6) == 0);
	finish(w, fd, START_NS + 100000000, 0);

	struct diag_list list;
	struct load_stats st;
	struct profile *p = load("huge.zst", &list, &st);
	CHECK(p != NULL);
	CHECK(st.has_allocs && st.allocs == 4 && st.frees == 2);
	CHECKF(st.alloc_bytes == (int64_t)(11 * G + 110), "%lld", (long long)st.alloc_bytes);
	CHECKF(st.freed_bytes == (int64_t)(5 * G + 10), "%lld", (long long)st.freed_bytes);
	CHECKF(st.peak_bytes == (int64_t)(11 * G + 100) && st.peak_objects == 3, "%lld", (long long)st.peak_bytes);
	CHECKF(st.leaked_bytes == (int64_t)(6 * G + 100) && st.leaked_objects == 2, "%lld",
	       (long long)st.leaked_bytes);
	diag_list_free(&list);
	load_stats_free(&st);
	profile_free(p);
}

/*
 * Allocations of a process tree: each program image its own live blocks. A
 * fork child frees a block it inherited and allocates at the same address;
 * after its exec the new image frees a block of the old one (a free of
 * nothing) and numbers its events from 1 again.
 */
static void test_process_heaps(void)
{
	int fd;
	struct trace_writer *w = start("tree.zst", &fd, 1);
	trace_writer_meta(w, TRACE_META_ALLOC_SCHEME, "all");
	module(w, 1, "/nonexistent/liba.so", START_NS);
	stack(w, 1, BIAS + 0x1000);
	const uint64_t a = 0x10000, b = 0x20000, c = 0x30000, d = 0x40000;
	struct trace_process forked = { 2, 1, START_NS + 10, TRACE_PROCESS_FORKED, 0, "", "", 0, "" };
	struct trace_process execed = { 2, 1, START_NS + 20, TRACE_PROCESS_EXECED, 0, "/bin/x", "x", 0, "" };
	struct trace_heap_event parent[2] = {
		{ 1, START_NS + 1, a, 100, 1, 1, TRACE_HEAP_MALLOC, 0 },
		{ 2, START_NS + 2, b, 200, 1, 1, TRACE_HEAP_MALLOC, 0 },
	};
	struct trace_heap_event child[4] = {
		{ 1, START_NS + 11, a, 0, 2, 0, TRACE_HEAP_FREE, 0 }, /* the parent's block: nothing of its own */
		{ 2, START_NS + 12, a, 50, 2, 1, TRACE_HEAP_MALLOC, 0 },
		{ 3, START_NS + 13, c, 30, 2, 1, TRACE_HEAP_MALLOC, 0 },
		{ 4, START_NS + 14, a, 0, 2, 0, TRACE_HEAP_FREE, 0 },
	};
	struct trace_heap_event parent_free[1] = { { 3, START_NS + 15, a, 0, 1, 0, TRACE_HEAP_FREE, 0 } };
	struct trace_heap_event execd[2] = {
		{ 1, START_NS + 21, c, 0, 2, 0, TRACE_HEAP_FREE, 0 }, /* the old image's: its leak */
		{ 2, START_NS + 22, d, 7, 2, 1, TRACE_HEAP_MALLOC, 0 },
	};
	CHECK(trace_writer_allocs(w, 1, parent, 2) == 0);
	CHECK(trace_writer_process(w, &forked) == 0);
	CHECK(trace_writer_allocs(w, 2, child, 4) == 0);
	CHECK(trace_writer_allocs(w, 1, parent_free, 1) == 0);
	CHECK(trace_writer_process(w, &execed) == 0);
	CHECK(trace_writer_allocs(w, 2, execd, 2) == 0);
	finish(w, fd, START_NS + 100000000, 0);

	struct diag_list list;
	struct load_stats st;
	struct profile *p = load("tree.zst", &list, &st);
	CHECK(p != NULL);
	CHECKF(st.allocs == 5 && st.alloc_bytes == 387, "%lld %lld", (long long)st.allocs, (long long)st.alloc_bytes);
	CHECKF(st.frees == 2 && st.freed_bytes == 150 && st.unmatched_frees == 2, "%lld %lld %llu",
	       (long long)st.frees, (long long)st.freed_bytes, (unsigned long long)st.unmatched_frees);
	CHECKF(st.leaked_objects == 3 && st.leaked_bytes == 237, "%lld %lld", (long long)st.leaked_objects,
	       (long long)st.leaked_bytes);
	/* Each image's own peak (300, 80, 7), summed. */
	CHECKF(st.peak_objects == 5 && st.peak_bytes == 387, "%lld %lld", (long long)st.peak_objects,
	       (long long)st.peak_bytes);
	uint32_t inuse = profile_find_value_type(p, "inuse_space");
	CHECK(inuse != PROFILE_NO_VALUE);
	int64_t leaked[2] = { 0, 0 };
	for (uint64_t i = 0; inuse != PROFILE_NO_VALUE && i < p->nsamples; i++) {
		uint32_t pid = p->threads[p->samples[i].thread].pid;
		if (pid == 1 || pid == 2)
			leaked[pid - 1] += profile_sample_value(p, i, inuse);
	}
	CHECKF(leaked[0] == 200 && leaked[1] == 37, "%lld %lld", (long long)leaked[0], (long long)leaked[1]);
	diag_list_free(&list);
	load_stats_free(&st);
	profile_free(p);
}

/*
 * The allocation consumer's two loops (load_allocs.c: allocs_events_fast for a
 * plain load, allocs_events with time bins for plots) give the same figures
 * on a stream with everything in it: blocks that outlive the live array (its
 * hash part), huge sizes, reallocs whose free is undone (RESTORED), blocks
 * allocated again without a free, frees of nothing, temporaries, two threads
 * and a forked process.
 */
static struct profile *load_bins(const char *name, struct load_stats *st, uint32_t bins)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	struct diag_list list = { 0 };
	struct diag_sink sink = diag_list_sink(&list);
	struct load_options o;
	load_options_init(&o);
	o.diag = &sink;
	o.alloc_bins = bins;
	struct profile *p = load_trace(path, &o, st);
	diag_list_free(&list);
	return p;
}

static void test_alloc_paths_agree(void)
{
	int fd;
	struct trace_writer *w = start("paths.zst", &fd, 1);
	trace_writer_meta(w, TRACE_META_ALLOC_SCHEME, "all");
	module(w, 1, "/nonexistent/liba.so", START_NS);
	for (uint32_t id = 1; id <= 4; id++)
		stack(w, id, BIAS + 0x1000 + 16 * id);
	enum { N = 60000, LIVE = 12000 };
	struct trace_heap_event *ev = calloc(N, sizeof *ev);
	uint64_t *live = calloc(LIVE, sizeof *live), x = 12345, next_address = 0x100000, seq = 1;
	uint32_t nlive = 0, n = 0, restored = 0, repeated = 0;
	for (uint32_t pid = 1; pid <= 2; pid++) {
		if (pid == 2) {
			struct trace_process forked = { 2, 1, START_NS + N, TRACE_PROCESS_FORKED, 0, "", "", 0, "" };
			CHECK(trace_writer_process(w, &forked) == 0);
			nlive = 0;
			seq = 1;
		}
		for (n = 0; n < N - 2;) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			uint32_t r = (uint32_t)(x >> 33) % 100, tid = pid * 10 + (uint32_t)(x >> 20) % 2;
			uint64_t t = START_NS + (pid - 1) * N + n, size = 1 + (x >> 40) % 1000;
			if ((x >> 13) % 700 == 0)
				size += 5ull << 30; /* 4 GiB and more: beside the live slots */
			uint32_t stack_id = 1 + (uint32_t)(x >> 50) % 4;
			if ((r < 52 || !nlive) && nlive < LIVE) {
				uint64_t a = next_address += 16;
				if (r < 4 && nlive) { /* the address of a live block: allocated again, no free */
					a = live[(x >> 24) % nlive];
					repeated++;
				} else {
					live[nlive++] = a;
				}
				ev[n++] = (struct trace_heap_event){ seq++, t, a, size, tid, stack_id, TRACE_HEAP_MALLOC, 0 };
			} else if (r < 92 && nlive) {
				/* Mostly a recent block, now and then one of any age. */
				uint32_t j = (x >> 24) % 8 ? nlive - 1 - (uint32_t)(x >> 28) % (nlive < 64 ? nlive : 64)
							   : (uint32_t)((x >> 24) % nlive);
				uint64_t a = live[j];
				uint32_t flags = (x >> 8) % 4 == 0 ? TRACE_HEAP_TEMPORARY : 0;
				if ((x >> 10) % 5 == 0)
					flags |= TRACE_HEAP_BY_REALLOC;
				ev[n++] = (struct trace_heap_event){ seq++, t, a, 0, tid, 0, TRACE_HEAP_FREE, flags };
				if ((flags & TRACE_HEAP_BY_REALLOC) && (x >> 12) % 3 == 0) { /* the realloc failed */
					ev[n++] = (struct trace_heap_event){ seq++, t, a, size, tid, stack_id, TRACE_HEAP_REALLOC,
									    TRACE_HEAP_RESTORED };
					restored++;
				} else {
					live[j] = live[--nlive];
				}
			} else {
				ev[n++] = (struct trace_heap_event){ seq++, t, 0x10 + 16 * (x >> 44), 0, tid, 0, TRACE_HEAP_FREE, 0 };
			}
		}
		for (uint32_t i = 0; i < n; i += 4096)
			CHECK(trace_writer_allocs(w, pid, ev + i, n - i < 4096 ? n - i : 4096) == 0);
	}
	finish(w, fd, START_NS + 100000000, 0);
	free(ev);
	free(live);
	CHECKF(restored > 1000 && repeated > 1000, "%u restored, %u repeated", restored, repeated);

	struct load_stats plain, binned;
	struct profile *a = load_bins("paths.zst", &plain, 0), *b = load_bins("paths.zst", &binned, 8);
	CHECK(a && b && plain.has_allocs && binned.has_allocs);
	CHECKF(plain.allocs == binned.allocs && plain.alloc_bytes == binned.alloc_bytes && plain.frees == binned.frees &&
		       plain.freed_bytes == binned.freed_bytes,
	       "allocs %lld/%lld bytes %lld/%lld frees %lld/%lld", (long long)plain.allocs, (long long)binned.allocs,
	       (long long)plain.alloc_bytes, (long long)binned.alloc_bytes, (long long)plain.frees,
	       (long long)binned.frees);
	CHECKF(plain.peak_bytes == binned.peak_bytes && plain.peak_objects == binned.peak_objects &&
		       plain.peak_ns == binned.peak_ns,
	       "peak %lld/%lld", (long long)plain.peak_bytes, (long long)binned.peak_bytes);
	CHECKF(plain.leaked_bytes == binned.leaked_bytes && plain.leaked_objects == binned.leaked_objects,
	       "leaked %lld/%lld", (long long)plain.leaked_bytes, (long long)binned.leaked_bytes);
	CHECKF(plain.temporary == binned.temporary && plain.temporary_bytes == binned.temporary_bytes &&
		       plain.unmatched_frees == binned.unmatched_frees,
	       "temporary %lld/%lld unmatched %llu/%llu", (long long)plain.temporary, (long long)binned.temporary,
	       (unsigned long long)plain.unmatched_frees, (unsigned long long)binned.unmatched_frees);
	/* Temporaries are heaptrack's here (every allocation recorded): a free right after an allocation of
	 * its block's size and stack, a few hundred of these random events. */
	CHECKF(plain.unmatched_frees > 1000 && plain.leaked_objects > 1000 && plain.temporary > 100,
	       "unmatched %llu leaked %lld temporary %lld", (unsigned long long)plain.unmatched_frees,
	       (long long)plain.leaked_objects, (long long)plain.temporary);
	load_stats_free(&plain);
	load_stats_free(&binned);
	profile_free(a);
	profile_free(b);
}

/* Each (thread, stack)'s summed value: sums[thread * 4 + stack index]. */
static void sums_by_key(const struct profile *p, int64_t sums[8])
{
	memset(sums, 0, 8 * sizeof(*sums));
	for (uint64_t i = 0; i < p->nsamples; i++) {
		const struct profile_sample *s = &p->samples[i];
		CHECK(s->thread < 2 && s->stack < 4);
		if (s->thread < 2 && s->stack < 4)
			sums[s->thread * 4 + s->stack] += p->values[i * p->ncolumns];
	}
}

/*
 * LOAD_TIMES_BINNED: within its bound, the rows of LOAD_TIMES_EXACT one for
 * one; past it, at most the bound of rows, the same sums per (thread,
 * stack), every sample counted, and each thread's rows in time order bin by bin.
 */
static void test_time_bins(void)
{
	int fd;
	struct trace_writer *w = start("bins.zst", &fd, 1);
	module(w, 1, "/nonexistent/liba.so", START_NS);
	for (uint32_t s = 1; s <= 3; s++)
		stack(w, s, BIAS + 0x1000 * s);
	/* 2 threads over a second, their stacks changing in runs of different lengths. */
	for (uint32_t i = 0; i < 1000; i++) {
		sample(w, START_NS + i * INTERVAL, 1, 1 + (i / 7) % 3, 1 + (i % 50 == 0));
		sample(w, START_NS + i * INTERVAL + 500, 2, 1 + (i / 3) % 3, 1);
	}
	finish(w, fd, START_NS + 1000 * INTERVAL, 0);

	struct diag_list l1, l2, l3;
	struct load_stats s1, s2, s3;
	struct profile *exact = load_timed("bins.zst", LOAD_TIMES_EXACT, 0, &l1, &s1);
	struct profile *within = load_timed("bins.zst", LOAD_TIMES_BINNED, 0, &l2, &s2);
	struct profile *binned = load_timed("bins.zst", LOAD_TIMES_BINNED, 64, &l3, &s3);
	CHECK(exact && within && binned);
	if (!exact || !within || !binned)
		return;
	CHECK(exact->nsamples == 2000 && within->nsamples == 2000 && !s2.time_bin_ns);
	for (uint64_t i = 0; i < exact->nsamples && i < within->nsamples; i++) {
		const struct profile_sample *a = &exact->samples[i], *b = &within->samples[i];
		CHECKF(a->stack == b->stack && a->thread == b->thread && a->time_ns == b->time_ns && !b->merged &&
			       exact->values[i] == within->values[i],
		       "row %llu", (unsigned long long)i);
	}
	CHECKF(binned->nsamples <= 64 && s3.time_bin_ns > 0, "%llu rows, bins of %llu ns",
	       (unsigned long long)binned->nsamples, (unsigned long long)s3.time_bin_ns);
	CHECK(profile_samples_total(binned) == 2000);
	int64_t want[8], got[8];
	sums_by_key(exact, want);
	sums_by_key(binned, got);
	CHECK(!memcmp(want, got, sizeof(want)));
	uint64_t last_bin[2] = {0, 0};
	for (uint64_t i = 0; s3.time_bin_ns && i < binned->nsamples; i++) {
		const struct profile_sample *s = &binned->samples[i];
		uint64_t bin = (s->time_ns - START_NS) / s3.time_bin_ns;
		CHECKF(s->thread >= 2 || bin >= last_bin[s->thread], "row %llu", (unsigned long long)i);
		if (s->thread < 2)
			last_bin[s->thread] = bin;
	}
	/* The module's file is missing, and nothing else is said. */
	CHECKF(l1.n == 1 && l2.n == 1 && l3.n == 1, "%zu %zu %zu messages", l1.n, l2.n, l3.n);
	struct diag_list *lists[] = {&l1, &l2, &l3};
	struct load_stats *stats[] = {&s1, &s2, &s3};
	for (int k = 0; k < 3; k++) {
		diag_list_free(lists[k]);
		load_stats_free(stats[k]);
	}
	profile_free(exact);
	profile_free(within);
	profile_free(binned);
}

/* Does every leaf function name carry the same samples in p as in q? */
static int same_leaves(const struct profile *p, const struct profile *q)
{
	const struct profile *both[2] = {p, q};
	const char *names[16];
	uint64_t counts[2][16] = {{0}};
	int n = 0;
	for (int k = 0; k < 2; k++)
		for (uint64_t i = 0; i < both[k]->nsamples; i++) {
			const char *name = leaf_name(both[k], i);
			int j = 0;
			while (j < n && strcmp(names[j], name))
				j++;
			if (j == n && n == 16)
				return 0;
			if (j == n)
				names[n++] = name;
			counts[k][j] += profile_sample_count(&both[k]->samples[i]);
		}
	return !memcmp(counts[0], counts[1], sizeof(counts[0]));
}

/*
 * Rows binned in time see what summed rows see: the traces of the checks
 * above, loaded with a bound of a few rows, say the same things with the
 * same figures, and name the same frames.
 */
static void test_time_bins_checked(void)
{
	const char *traces[] = {"weights.zst", "saturate.zst", "late-unload.zst", "epochs.zst"};
	for (int k = 0; k < 4; k++) {
		struct diag_list summed, binned;
		struct load_stats a, b;
		struct profile *p = load_timed(traces[k], LOAD_TIMES_NONE, 0, &summed, &a);
		struct profile *q = load_timed(traces[k], LOAD_TIMES_BINNED, 2, &binned, &b);
		CHECK(p && q);
		if (!p || !q)
			continue;
		int same = summed.n == binned.n;
		for (size_t i = 0; same && i < summed.n; i++)
			same = !strcmp(summed.texts[i], binned.texts[i]);
		CHECKF(same, "%s: %zu messages summed, %zu binned", traces[k], summed.n, binned.n);
		if (!same) {
			dump(&summed);
			dump(&binned);
		}
		CHECK(a.clamped_weights == b.clamped_weights && a.samples_outside_run == b.samples_outside_run &&
		      a.samples_backwards == b.samples_backwards && a.overbusy_threads == b.overbusy_threads &&
		      a.undefined_stack_samples == b.undefined_stack_samples && b.time_bin_ns > 0);
		int sa = 0, sb = 0;
		CHECK(profile_samples_total(p) == profile_samples_total(q));
		CHECKF(same_leaves(p, q), "%s: leaf functions differ", traces[k]);
		for (uint32_t v = 0; v < p->nvalue_types; v++)
			CHECK(profile_value_total(p, v, &sa) == profile_value_total(q, v, &sb) && sa == sb);
		diag_list_free(&summed);
		diag_list_free(&binned);
		load_stats_free(&a);
		load_stats_free(&b);
		profile_free(p);
		profile_free(q);
	}
}

int main(void)
{
	CHECK(mkdtemp(dir) != NULL);
	test_values_and_epochs();
	test_late_unload();
	test_time_bins();
	test_unknown_records();
	test_truncated_and_empty();
	test_implausible_losses();
	test_implausible_samples();
	test_time_bins_checked();
	test_fifo_module();
	test_huge_blocks();
	test_process_heaps();
	test_alloc_paths_agree();
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "load_test: could not remove %s\n", dir);
	if (check_failures)
		return check_exit_status();
	puts("load tests passed");
	return 0;
}
