/*
 * hostile_traces.c - traces a hostile or merely unlucky program could leave
 * (its agent writes through memory the program can scribble on), for
 * tests/e2e/report_hostile.sh: each names one thing analyze must not trust.
 *
 *   fifo.zst      a module whose path is FIFO (given): opening it blocks
 *   escapes.zst   command line, thread name and module path holding ESC
 *                 sequences and other control characters
 *   unicode.zst   the same holding bytes of no valid UTF-8 (0xff), bidi
 *                 overrides (U+202E, U+2066) and the text \x1b
 *   lost.zst      lost-sample counters of 1000 threads' rings, 3 of them
 *                 garbage (12534910648671186440)
 *   weights.zst   weights of 2^32 - 1 and no start time to bound them
 *   deep.zst      one sample of a 100000-deep recursion
 *   denied.zst    a module whose file (given) the reader may not read
 *   agent.zst     a 1 s run whose thread measured 2^64 - 16 ns of CPU at its
 *                 exit and whose agent claims 6.2e16 ns in 1000 signals
 *
 * usage: hostile_traces DIR FIFO UNREADABLE
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "trace.h"

#define START_NS 1000000000ull
#define BIAS 0x7f0000000000ull

static const struct trace_segment segment = {0, 0x100000, 0, TRACE_SEGMENT_EXEC | TRACE_SEGMENT_READ};
static const char *dir;

static void check(int ok, const char *what)
{
	if (!ok) {
		perror(what);
		exit(1);
	}
}

static struct trace_writer *start(const char *name, int *fd, const char *command, int with_start)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	*fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	check(*fd >= 0, path);
	struct trace_writer *w = trace_writer_open(*fd, 1);
	check(w != NULL, "trace_writer_open");
	check(trace_writer_meta(w, TRACE_META_COMMAND, command) == 0, "meta");
	check(trace_writer_meta(w, TRACE_META_MODE, "cpu") == 0, "meta");
	check(trace_writer_meta(w, TRACE_META_INTERVAL_NS, "1000000") == 0, "meta");
	if (with_start)
		check(trace_writer_meta(w, TRACE_META_START_MONOTONIC_NS, "1000000000") == 0, "meta");
	return w;
}

static void finish(struct trace_writer *w, int fd, uint64_t end_ns, uint64_t lost)
{
	struct trace_end e = {end_ns, 0, TRACE_END_EXITED, 0, 0, lost, 0, 0, 0};
	check(trace_writer_close(w, &e) == 0, "close");
	close(fd);
}

/* A module at BIAS, a stack of two frames in it and n samples of weight. */
static void module_and_samples(struct trace_writer *w, const char *path, const char *thread, uint32_t n,
			       uint32_t weight)
{
	struct trace_module m = {1, 1, START_NS, BIAS, path, NULL, 0, 1, &segment};
	check(trace_writer_module(w, &m) == 0, "module");
	struct trace_thread t = {1, 1, START_NS, TRACE_THREAD_START | TRACE_THREAD_NAME, thread, 0};
	check(trace_writer_thread(w, &t) == 0, "thread");
	uint64_t ips[2] = {BIAS + 0x1234, BIAS + 0x100};
	struct trace_stack s = {1, TRACE_STACK_LEAF_EXACT, 2, ips};
	check(trace_writer_stack(w, &s) == 0, "stack");
	for (uint32_t i = 0; i < n; i++) {
		struct trace_sample smp = {START_NS + 1000 * (i + 1), 1, 1, 1, weight, 0, -1};
		check(trace_writer_sample(w, &smp) == 0, "sample");
	}
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: hostile_traces DIR FIFO UNREADABLE\n");
		return 2;
	}
	dir = argv[1];
	int fd;
	struct trace_writer *w = start("fifo.zst", &fd, "./app", 1);
	module_and_samples(w, argv[2], "main", 10, 1);
	finish(w, fd, START_NS + 1000000000ull, 0);

	/* ESC ] 0 ; title BEL retitles a terminal; ESC [ 2 J clears it. */
	w = start("escapes.zst", &fd, "./app \033]0;pwned\007 \033[2J", 1);
	module_and_samples(w, "/tmp/\033[31mred\033[0m/lib\033]0;x\007.so", "th\033[2Jread\r\x9b", 10, 1);
	finish(w, fd, START_NS + 1000000000ull, 0);

	/* U+202E (e2 80 ae) shows what follows it right to left ("Trojan Source"). */
	w = start("unicode.zst", &fd, "./app \xff\xfe \xe2\x80\xae" "evil\xe2\x81\xa6 \\x1b[2J", 1);
	module_and_samples(w, "/tmp/lib\xff\xe2\x80\xae\\x1b.so", "user\xe2\x80\xae" "nimda\xc3", 10, 1);
	finish(w, fd, START_NS + 1000000000ull, 0);

	w = start("lost.zst", &fd, "./app", 1);
	module_and_samples(w, "/nonexistent/app", "main", 10, 1);
	for (uint32_t tid = 1; tid <= 1000; tid++) {
		struct trace_loss l = {1, tid, 0, tid % 400 == 7 ? 12534910648671186440ull : 2};
		check(trace_writer_loss(w, &l) == 0, "loss");
	}
	finish(w, fd, START_NS + 2000000000ull, 12534910648671186440ull);

	w = start("weights.zst", &fd, "./app", 0);
	module_and_samples(w, "/nonexistent/app", "main", 3000, 4294967295u);
	finish(w, fd, START_NS + 1000000000ull, 0);

	w = start("deep.zst", &fd, "./app", 1);
	struct trace_module m = {1, 1, START_NS, BIAS, "/nonexistent/app", NULL, 0, 1, &segment};
	check(trace_writer_module(w, &m) == 0, "module");
	enum { DEPTH = 100000 };
	static uint64_t ips[DEPTH];
	for (int i = 0; i < DEPTH; i++)
		ips[i] = BIAS + 0x2000; /* the same return address: one recursive function */
	ips[0] = BIAS + 0x2100;
	struct trace_stack s = {1, TRACE_STACK_LEAF_EXACT, DEPTH, ips};
	check(trace_writer_stack(w, &s) == 0, "stack");
	struct trace_sample smp = {START_NS + 1000, 1, 1, 1, 1, 0, -1};
	check(trace_writer_sample(w, &smp) == 0, "sample");
	finish(w, fd, START_NS + 1000000000ull, 0);

	w = start("denied.zst", &fd, "./app", 1);
	module_and_samples(w, argv[3], "main", 10, 1);
	finish(w, fd, START_NS + 1000000000ull, 0);

	w = start("agent.zst", &fd, "./app", 1);
	module_and_samples(w, "/nonexistent/app", "main", 10, 1);
	struct trace_thread exit_record = {1, 1, START_NS + 900000000ull, TRACE_THREAD_EXIT, "", 0xfffffffffffffff0ull};
	check(trace_writer_thread(w, &exit_record) == 0, "thread");
	struct trace_end e = {START_NS + 1000000000ull, 0, TRACE_END_EXITED, 10, 10, 0, 61901825750703200ull, 1000, 0};
	check(trace_writer_close(w, &e) == 0, "close");
	close(fd);
	return 0;
}
