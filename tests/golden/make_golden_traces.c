/*
 * make_golden_traces.c - writes the small deterministic CPU traces whose
 * report and export outputs tests/golden/expected/ holds (saved from main as
 * of commit 626e6a0, before the values model), so that tests/golden/check.sh
 * can say whether tree, flat, folded, speedscope and pprof stay byte-identical.
 *
 * The traces name modules that exist nowhere (/nonexistent-ipscope-golden/...),
 * so every frame is "module+0xoffset" whatever the machine has installed,
 * and the outputs depend only on analyze. They cover: three threads (one
 * unnamed), weights above 1, shared stack prefixes, a system module (libc,
 * hidden without -C), a sample whose stack is empty, one naming a stack the
 * trace never defines, losses, a dlclose followed by another module mapped
 * at the same addresses (epochs), and a cut-off trace without END.
 *
 * The traces are committed beside the outputs; this program documents how
 * they were made and remakes them: make_golden_traces DIR.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "trace.h"

#define INTERVAL_NS 1000000ull
#define START_NS 1000000000000ull
#define APP_BIAS 0x555555554000ull
#define LIBC_BIAS 0x7f0000000000ull
#define PLUGIN_BIAS 0x7f1000000000ull


static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static void check(int ok, const char *what)
{
	if (!ok) {
		perror(what);
		exit(1);
	}
}

static const struct trace_segment app_segments[] = {
	{0x0, 0x1000, 0x0, TRACE_SEGMENT_READ},
	{0x1000, 0x8000, 0x1000, TRACE_SEGMENT_READ | TRACE_SEGMENT_EXEC},
};
static const struct trace_segment lib_segments[] = {
	{0x0, 0x100000, 0x0, TRACE_SEGMENT_READ | TRACE_SEGMENT_EXEC},
};
static const uint8_t app_id[20] = {0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10};

static void meta(struct trace_writer *w)
{
	check(trace_writer_meta(w, TRACE_META_COMMAND, "./golden --run 'x y'") == 0, "meta");
	check(trace_writer_meta(w, TRACE_META_MODE, "cpu") == 0, "meta");
	check(trace_writer_meta(w, TRACE_META_INTERVAL_NS, "1000000") == 0, "meta");
	check(trace_writer_meta(w, TRACE_META_SOURCE, "perf-task-clock") == 0, "meta");
	check(trace_writer_meta(w, TRACE_META_START_REALTIME_NS, "1764400000000000000") == 0, "meta");
	check(trace_writer_meta(w, TRACE_META_START_MONOTONIC_NS, "1000000000000") == 0, "meta");
}

static void module(struct trace_writer *w, uint32_t id, const char *path, uint64_t bias,
		   const struct trace_segment *seg, uint32_t nseg, uint64_t time_ns)
{
	struct trace_module m = {42, id, time_ns, bias, path, id == 1 ? app_id : NULL,
				 id == 1 ? sizeof(app_id) : 0, nseg, seg};
	check(trace_writer_module(w, &m) == 0, "module");
}

static void thread(struct trace_writer *w, uint32_t tid, const char *name)
{
	struct trace_thread t = {42, tid, START_NS, TRACE_THREAD_START | TRACE_THREAD_NAME, name, 0};
	check(trace_writer_thread(w, &t) == 0, "thread");
}

/*
 * Stacks: root-first paths through a small call graph in app, some ending
 * in libc (system frames), written leaf first. Stack i extends a prefix of
 * stack i/2, as call trees share prefixes.
 */
#define NSTACKS 40
#define MAX_DEPTH 12

static void stacks(struct trace_writer *w, uint64_t lib_bias, uint32_t first_id, int use_plugin)
{
	uint64_t paths[NSTACKS][MAX_DEPTH];
	uint32_t depth[NSTACKS];
	for (uint32_t i = 0; i < NSTACKS; i++) {
		uint32_t d = 0;
		paths[i][d++] = LIBC_BIAS + 0x29d90; /* __libc_start_call_main: system */
		paths[i][d++] = APP_BIAS + 0x1100;   /* main */
		if (i > 0) {
			uint32_t parent = i / 2;
			uint32_t keep = depth[parent] > 2 ? 2 + (uint32_t)(rng() % (depth[parent] - 1)) : 2;
			if (keep > depth[parent])
				keep = depth[parent];
			memcpy(paths[i], paths[parent], keep * sizeof(uint64_t));
			d = keep;
		}
		uint32_t extra = 1 + (uint32_t)(rng() % 4);
		for (uint32_t k = 0; k < extra && d < MAX_DEPTH - 1; k++)
			paths[i][d++] = APP_BIAS + 0x1200 + 0x100 * (rng() % 12) + 4 * (rng() % 3);
		if (rng() % 4 == 0)
			paths[i][d++] = LIBC_BIAS + 0x9a000 + 8 * (rng() % 4); /* memcpy & co */
		else if (use_plugin && rng() % 3 == 0)
			paths[i][d++] = lib_bias + 0x1500 + 16 * (rng() % 4);
		depth[i] = d;
	}
	for (uint32_t i = 0; i < NSTACKS; i++) {
		uint64_t ips[MAX_DEPTH];
		for (uint32_t k = 0; k < depth[i]; k++)
			ips[k] = paths[i][depth[i] - 1 - k];
		struct trace_stack s = {first_id + i, i % 3 == 0 ? TRACE_STACK_LEAF_EXACT : 0, depth[i], ips};
		check(trace_writer_stack(w, &s) == 0, "stack");
	}
	struct trace_stack empty = {first_id + NSTACKS, TRACE_STACK_TRUNCATED, 0, NULL};
	check(trace_writer_stack(w, &empty) == 0, "stack");
}

static void samples(struct trace_writer *w, uint64_t *time_ns, uint32_t n, uint32_t first_id)
{
	static const uint32_t tids[] = {42, 43, 44};
	for (uint32_t i = 0; i < n; i++) {
		*time_ns += 300000 + rng() % 400000;
		/* a skewed choice: low stacks are hot */
		uint64_t u = rng() % 1000;
		uint32_t stack = first_id + (uint32_t)(u * u * NSTACKS / 1000000);
		if (i % 97 == 5)
			stack = first_id + NSTACKS; /* the empty stack */
		if (i % 211 == 7)
			stack = 9999; /* never defined */
		struct trace_sample s = {*time_ns, 42, tids[rng() % 3], stack,
					 rng() % 10 == 0 ? 2 + (uint32_t)(rng() % 4) : 1, 0};
		check(trace_writer_sample(w, &s) == 0, "sample");
	}
}

static struct trace_writer *open_trace(const char *dir, const char *name, int *fd)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	*fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	check(*fd >= 0, path);
	struct trace_writer *w = trace_writer_open(*fd, 3);
	check(w != NULL, "trace_writer_open");
	return w;
}

/* Three threads, losses, an empty and an undefined stack. */
static void write_threads(const char *dir)
{
	int fd;
	struct trace_writer *w = open_trace(dir, "threads.trace.zst", &fd);
	meta(w);
	module(w, 1, "/nonexistent-ipscope-golden/golden", APP_BIAS, app_segments, 2, START_NS);
	module(w, 2, "/nonexistent-ipscope-golden/libc.so.6", LIBC_BIAS, lib_segments, 1, START_NS);
	module(w, 3, "/nonexistent-ipscope-golden/libplugin.so", PLUGIN_BIAS, lib_segments, 1, START_NS);
	thread(w, 42, "golden");
	thread(w, 43, "worker-1");
	thread(w, 44, "");
	stacks(w, PLUGIN_BIAS, 1, 1);
	uint64_t t = START_NS;
	samples(w, &t, 3000, 1);
	struct trace_loss l = {42, 43, 0, 17};
	check(trace_writer_loss(w, &l) == 0, "loss");
	struct trace_end e = {t + 1000000, 0, TRACE_END_EXITED, 3000, 0, 17, 0, 0};
	check(trace_writer_close(w, &e) == 0, "close");
	close(fd);
}

/*
 * A plugin dlclosed halfway and another mapped at the same addresses: the
 * stacks through that range resolve in the module live at each sample's time.
 */
static void write_epochs(const char *dir)
{
	int fd;
	struct trace_writer *w = open_trace(dir, "epochs.trace.zst", &fd);
	meta(w);
	module(w, 1, "/nonexistent-ipscope-golden/golden", APP_BIAS, app_segments, 2, START_NS);
	module(w, 2, "/nonexistent-ipscope-golden/libc.so.6", LIBC_BIAS, lib_segments, 1, START_NS);
	module(w, 3, "/nonexistent-ipscope-golden/libfirst.so", PLUGIN_BIAS, lib_segments, 1, START_NS);
	thread(w, 42, "golden");
	thread(w, 43, "worker-1");
	thread(w, 44, "worker-2");
	stacks(w, PLUGIN_BIAS, 1, 1);
	uint64_t t = START_NS;
	samples(w, &t, 1500, 1);
	struct trace_module_unload u = {42, 3, t + 1};
	check(trace_writer_module_unload(w, &u) == 0, "unload");
	module(w, 4, "/nonexistent-ipscope-golden/libsecond.so", PLUGIN_BIAS, lib_segments, 1, t + 2);
	samples(w, &t, 1500, 1);
	struct trace_end e = {t + 1000000, 0, TRACE_END_EXITED, 3000, 0, 0, 0, 0};
	check(trace_writer_close(w, &e) == 0, "close");
	close(fd);
}

/* Cut after a flush: no END record. */
static void write_truncated(const char *dir)
{
	int fd;
	struct trace_writer *w = open_trace(dir, "truncated.trace.zst", &fd);
	meta(w);
	module(w, 1, "/nonexistent-ipscope-golden/golden", APP_BIAS, app_segments, 2, START_NS);
	module(w, 2, "/nonexistent-ipscope-golden/libc.so.6", LIBC_BIAS, lib_segments, 1, START_NS);
	thread(w, 42, "golden");
	stacks(w, PLUGIN_BIAS, 1, 0);
	uint64_t t = START_NS;
	samples(w, &t, 800, 1);
	check(trace_writer_flush(w) == 0, "flush");
	uint64_t cut = trace_writer_compressed_bytes(w);
	samples(w, &t, 100, 1);
	struct trace_end e = {t, 0, TRACE_END_EXITED, 900, 0, 0, 0, 0};
	check(trace_writer_close(w, &e) == 0, "close");
	check(ftruncate(fd, (off_t)cut) == 0, "ftruncate");
	close(fd);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: make_golden_traces DIR\n");
		return 2;
	}
	write_threads(argv[1]);
	write_epochs(argv[1]);
	write_truncated(argv[1]);
	return 0;
}
