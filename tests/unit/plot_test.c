/*
 * plot_test.c - analyze plot (analyze/plot_*.c, the templates in plots/) on hand-built
 * profiles with known answers, gnuplot run for real:
 *  - every kind draws a valid PNG (1280x720, more than one colour, not
 *    blank) and SVG (well-formed XML, holding the title) and a PDF;
 *  - the data files hold the right values: timeline's per-thread and
 *    per-function columns add up to each one's total, the phase change is
 *    where the workload changes; top's rows are flat's; heap's highest
 *    point is the peak the plot marks, its last value what stays live;
 *    rate's columns add up to the allocations and frees;
 *  - heap and rate on an allocation profile built by hand (alloc_* and
 *    inuse_* value types, one sample per event with its time; real traces
 *    in e2e_alloc_sampled), refused on a CPU profile;
 *  - rows the loader summed per time bin wider than the plot's columns
 *    (profile.sample_bin_ns) are spread evenly over their bins, every
 *    thread's and function's total kept;
 *  - gnuplot missing or failing: the error says so, with its message.
 * usage: unit_plot BUILD_DIR (templates in BUILD_DIR/share/ipscope/plots,
 * outputs left in BUILD_DIR/tests/plot-unit to look at).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "diff.h"
#include "options.h"
#include "plot.h"
#include "png_check.h"
#include "profile_builder.h"

#include "check.h"

static char out_dir[4096], templates[4096];

#define START_NS 1000000000ull

/*
 * ./cpuprog --fast: thread 1 runs main -> early for the first half second
 * and main -> late for the second, a sample every ms; thread 2 (worker)
 * runs work every 4 ms throughout.
 */
static struct profile *cpu_profile_binned(uint64_t bin_ms);

static struct profile *cpu_profile(void)
{
	return cpu_profile_binned(0);
}

/*
 * The same run as the loader sums it per time bin of bin_ms (0: a row per
 * sample): one row per stack, thread and bin, of all their samples in it
 * (profile_sample.merged), at the bin's middle.
 */
static struct profile *cpu_profile_binned(uint64_t bin_ms)
{
	struct profile *p = build_cpu_profile(1000000);
	p->command = profile_intern(p, "/usr/bin/cpuprog --fast");
	p->start_ns = START_NS;
	p->duration_ns = 1000000000;
	struct profile_module m = {.path = profile_intern(p, "/usr/bin/cpuprog")};
	profile_add_module(p, &m);
	struct profile_thread t1 = {.pid = 5, .tid = 5, .name = profile_intern(p, "cpuprog")};
	struct profile_thread t2 = {.pid = 5, .tid = 6, .name = profile_intern(p, "worker")};
	profile_add_thread(p, &t1);
	profile_add_thread(p, &t2);
	uint32_t f_main = build_function(p, "main", "c.c", 1, 0, 0), f_early = build_function(p, "early", "c.c", 10, 0, 0);
	uint32_t f_late = build_function(p, "late", "c.c", 20, 0, 0), f_work = build_function(p, "work", "w.c", 5, 0, 0);
	uint32_t l = 2;
	int lm = (int)build_location(p, 0x10, 0, &f_main, &l, 1), le = (int)build_location(p, 0x20, 0, &f_early, &l, 1);
	int ll = (int)build_location(p, 0x30, 0, &f_late, &l, 1), lw = (int)build_location(p, 0x40, 0, &f_work, &l, 1);
	uint32_t s_early = build_stack(p, (int[]){lm, le, -1}), s_late = build_stack(p, (int[]){lm, ll, -1});
	uint32_t s_work = build_stack(p, (int[]){lw, -1});
	if (bin_ms) {
		p->sample_bin_ns = bin_ms * 1000000;
		for (uint64_t b = 0; b < 1000 / bin_ms; b++) {
			uint64_t t = START_NS + b * p->sample_bin_ns + p->sample_bin_ns / 2, from = b * bin_ms;
			uint64_t to = from + bin_ms, early = to <= 500 ? bin_ms : from >= 500 ? 0 : 500 - from;
			uint32_t rows[3] = {s_early, s_late, s_work}, threads[3] = {0, 0, 1};
			uint64_t counts[3] = {early, bin_ms - early, bin_ms / 4};
			for (int k = 0; k < 3; k++) {
				if (!counts[k])
					continue;
				build_weighted_sample(p, rows[k], threads[k], t, (uint32_t)counts[k]);
				p->samples[p->nsamples - 1].merged = (uint32_t)counts[k] - 1;
			}
		}
		return p;
	}
	for (uint64_t ms = 0; ms < 1000; ms++) {
		uint64_t t = START_NS + ms * 1000000 + 500000;
		build_weighted_sample(p, ms < 500 ? s_early : s_late, 0, t, 1);
		if (ms % 4 == 0)
			build_weighted_sample(p, s_work, 1, t, 1);
	}
	return p;
}

/*
 * An allocation run built by hand: each event a sample at
 * its time, allocations adding to alloc_* and inuse_*, frees subtracting
 * from inuse_* on the allocation's stack. Over 100 ms:
 *   10 ms alloc 1000 (a)  20 ms alloc 5000 (b)  30 ms free the 1000
 *   40 ms alloc 3000 (a)  -> peak 8000          50 ms free the 5000
 *   60 ms alloc 2000 (b)  -> 5000 in 2 blocks still live at the end
 * plus 200 pairs of 16-byte blocks allocated and freed at once (between
 * 70 and 90 ms), which never raise the peak.
 */
static struct profile *alloc_profile(void)
{
	struct profile *p = profile_new();
	profile_add_value_type(p, "alloc_objects", "count");
	profile_add_value_type(p, "alloc_space", "bytes");
	profile_add_value_type(p, "inuse_objects", "count");
	profile_add_value_type(p, "inuse_space", "bytes");
	p->default_value = 1;
	p->exact = 1;
	p->ended = 1;
	p->command = profile_intern(p, "./allocprog 3");
	p->start_ns = START_NS;
	p->duration_ns = 100000000;
	struct profile_module m = {.path = profile_intern(p, "/bin/allocprog")};
	profile_add_module(p, &m);
	struct profile_thread t = {.pid = 7, .tid = 7, .name = profile_intern(p, "allocprog")};
	profile_add_thread(p, &t);
	uint32_t f_main = build_function(p, "main", "a.c", 1, 0, 0), f_a = build_function(p, "make_a", "a.c", 10, 0, 0);
	uint32_t f_b = build_function(p, "make_b", "a.c", 20, 0, 0), l = 3;
	int lm = (int)build_location(p, 0x10, 0, &f_main, &l, 1);
	int la = (int)build_location(p, 0x20, 0, &f_a, &l, 1), lb = (int)build_location(p, 0x30, 0, &f_b, &l, 1);
	uint32_t sa = build_stack(p, (int[]){lm, la, -1}), sb = build_stack(p, (int[]){lm, lb, -1});
	struct {
		uint32_t ms, stack;
		int64_t size; /* negative: a free */
	} events[] = {{10, sa, 1000}, {20, sb, 5000}, {30, sa, -1000}, {40, sa, 3000}, {50, sb, -5000}, {60, sb, 2000}};
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		int64_t s = events[i].size, alloc = s > 0;
		int64_t v[4] = {alloc, alloc ? s : 0, alloc ? 1 : -1, s};
		build_sample(p, events[i].stack, 0, START_NS + events[i].ms * 1000000ull, v);
	}
	for (int k = 0; k < 200; k++) {
		uint64_t at_ns = START_NS + 70000000ull + (uint64_t)k * 100000;
		build_sample(p, sb, 0, at_ns, (int64_t[]){1, 16, 1, 16});
		build_sample(p, sb, 0, at_ns + 50000, (int64_t[]){0, 0, -1, -16});
	}
	return p;
}

static struct analyze_options options;

static struct plot_request request(enum plot_kind kind, const struct profile *p, const char *output)
{
	return (struct plot_request){
		.kind = kind, .p = p, .o = &options, .value = PROFILE_NO_VALUE, .trace = "test.trace.zst",
		.output = output, .text_width = 100, .text_height = 30, .templates = templates,
	};
}

/* Read a whole file; NULL when it cannot be read. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	char chunk[8192];
	size_t n;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		fwrite(chunk, 1, n, m);
	fclose(f);
	fclose(m);
	return buf;
}

/* Draw rq into NAME.png, .svg and .pdf in out_dir and check each. */
static void draw_all(struct plot_request rq, const char *name, const char *title)
{
	const char *exts[] = {"png", "svg", "pdf"};
	for (int e = 0; e < 3; e++) {
		char path[8192], err[2048];
		snprintf(path, sizeof(path), "%s/%s.%s", out_dir, name, exts[e]);
		remove(path);
		rq.output = path;
		CHECKF(plot_make(&rq, err, sizeof(err)) == 0, "%s: %s", path, err);
		if (e == 0) {
			struct png_info info;
			CHECKF(png_check(path, &info, err, sizeof(err)) == 0, "%s", err);
			CHECKF(info.width == 1280 && info.height == 720, "%s: %ux%u", path, info.width, info.height);
			CHECKF(info.colors > 2 && info.foreground > 0.01, "%s: %u colours, %.3f not background", path,
			       info.colors, info.foreground);
		} else if (e == 1) {
			char cmd[8300];
			snprintf(cmd, sizeof(cmd), "xmllint --noout '%s'", path);
			CHECKF(system(cmd) == 0, "%s is not well-formed XML (xmllint)", path);
			char *svg = slurp(path);
			CHECKF(svg && strstr(svg, title), "%s does not hold the title '%s'", path, title);
			free(svg);
		} else {
			char *pdf = slurp(path);
			CHECKF(pdf && !strncmp(pdf, "%PDF-", 5), "%s is not a PDF", path);
			free(pdf);
		}
	}
}

/* The data file of a kind kept with --keep-data: numbers by row and column. */
struct table {
	double v[4096][16];
	int rows, cols;
};

static void read_table(const char *dir, const char *name, struct table *t)
{
	char path[8192];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "r");
	CHECKF(f != NULL, "no data file %s", path);
	t->rows = t->cols = 0;
	char line[4096];
	while (f && fgets(line, sizeof(line), f) && t->rows < 4096) {
		if (line[0] == '#')
			continue;
		int c = 0;
		for (char *s = line, *end; c < 16; s = end, c++) {
			t->v[t->rows][c] = strtod(s, &end);
			if (end == s)
				break;
		}
		t->cols = c;
		t->rows++;
	}
	if (f)
		fclose(f);
}

/* The number a kept script assigns to name ("name = 12"). */
static double script_number(const char *script, const char *name)
{
	char key[128];
	snprintf(key, sizeof(key), "\n%s = ", name);
	const char *at = script ? strstr(script, key) : NULL;
	CHECKF(at != NULL, "the script sets no %s", name);
	return at ? atof(at + strlen(key)) : -1;
}

static char *keep(struct plot_request rq, const char *name)
{
	char dir[8192], err[2048], path[8300];
	snprintf(dir, sizeof(dir), "%s/%s-data", out_dir, name);
	snprintf(path, sizeof(path), "%s/%s.txt", out_dir, name);
	rq.keep_dir = dir;
	rq.output = path;
	CHECKF(plot_make(&rq, err, sizeof(err)) == 0, "%s: %s", name, err);
	snprintf(path, sizeof(path), "%s/%s.gp", dir, plot_kind_name(rq.kind));
	return strdup(dir);
}

static void test_cpu(void)
{
	struct profile *p = cpu_profile();
	draw_all(request(PLOT_TIMELINE, p, NULL), "timeline", "timeline of cpuprog --fast");
	draw_all(request(PLOT_TOP, p, NULL), "top", "top functions of cpuprog --fast");

	/* Timeline: per thread, the ms of CPU each ran; per function too. */
	struct plot_request rq = request(PLOT_TIMELINE, p, NULL);
	rq.bins = 100;
	char *dir = keep(rq, "timeline");
	static struct table t;
	read_table(dir, "timeline-threads.dat", &t);
	CHECKF(t.rows == 100 && t.cols == 3, "threads: %d rows, %d columns", t.rows, t.cols);
	double sums[16] = {0};
	for (int r = 0; r < t.rows; r++)
		for (int c = 1; c < t.cols; c++)
			sums[c] += t.v[r][c];
	CHECKF(sums[1] == 1000e6 && sums[2] == 250e6, "thread totals %g %g ns", sums[1], sums[2]);
	read_table(dir, "timeline-functions.dat", &t);
	memset(sums, 0, sizeof(sums));
	for (int r = 0; r < t.rows; r++)
		for (int c = 1; c < t.cols; c++)
			sums[c] += t.v[r][c];
	/* early and late tie at 500 ms: ranked by name's order of appearance. */
	CHECKF(t.cols == 5 && sums[1] == 500e6 && sums[2] == 500e6 && sums[3] == 250e6 && sums[4] == 0,
	       "function totals %g %g %g %g", sums[1], sums[2], sums[3], sums[4]);
	char path[8300];
	snprintf(path, sizeof(path), "%s/timeline.gp", dir);
	char *script = slurp(path);
	CHECKF(script_number(script, "nphases") == 2 && fabs(script_number(script, "phase_start[2]") - 0.5) < 1e-9,
	       "phases:\n%s", script);
	CHECK(script && strstr(script, "thread_names[1] = '5 (cpuprog)'") && strstr(script, "function_names[1] = 'early'"));
	free(script);
	free(dir);

	/* Top: ranked by self, values in nanoseconds as flat --value cpu. */
	dir = keep(request(PLOT_TOP, p, NULL), "top");
	read_table(dir, "top.dat", &t);
	CHECKF(t.rows == 3 && t.v[0][1] == 500e6 && t.v[0][2] == 500e6 && t.v[2][1] == 250e6, "top.dat: %d rows", t.rows);
	free(dir);

	/* Not an allocation profile: heap and rate say what they need. */
	char err[2048];
	snprintf(path, sizeof(path), "%s/not-made.png", out_dir);
	rq = request(PLOT_HEAP, p, path);
	CHECK(plot_make(&rq, err, sizeof(err)) == -1);
	CHECKF(strstr(err, "plot heap needs an allocation trace (inuse_space); it has the value types samples, cpu"),
	       "%s", err);
	rq = request(PLOT_TOP, p, "x.gif");
	CHECK(plot_make(&rq, err, sizeof(err)) == -1 && strstr(err, "x.gif: the output's extension says its type"));
	profile_free(p);
}

/* Bins of 200 ms, the plot's of 10: each row evenly over its bin, the one that holds the change
 * from early to late half each; every column of a thread as busy as it was. */
static void test_binned_rows(void)
{
	struct profile *p = cpu_profile_binned(200);
	struct plot_request rq = request(PLOT_TIMELINE, p, NULL);
	rq.bins = 100;
	char *dir = keep(rq, "timeline-binned");
	static struct table t;
	read_table(dir, "timeline-threads.dat", &t);
	CHECKF(t.rows == 100 && t.cols == 3, "threads: %d rows, %d columns", t.rows, t.cols);
	int even = 1;
	for (int r = 0; r < t.rows; r++)
		even &= t.v[r][1] == 10e6 && t.v[r][2] == 2.5e6;
	CHECKF(even, "thread columns not even: row 0 %g %g", t.v[0][1], t.v[0][2]);
	read_table(dir, "timeline-functions.dat", &t);
	double sums[16] = {0};
	int shape = 1;
	for (int r = 0; r < t.rows; r++) {
		for (int c = 1; c < t.cols; c++)
			sums[c] += t.v[r][c];
		/* early alone before 400 ms, half of each from 400 to 600, late alone after. */
		double early = r < 40 ? 10e6 : r < 60 ? 5e6 : 0;
		shape &= t.v[r][1] + t.v[r][2] == 10e6 && (t.v[r][1] == early || t.v[r][2] == early);
	}
	CHECKF(t.cols == 5 && sums[1] == 500e6 && sums[2] == 500e6 && sums[3] == 250e6,
	       "function totals %g %g %g", sums[1], sums[2], sums[3]);
	CHECK(shape);
	free(dir);
	profile_free(p);
}

static void test_alloc(void)
{
	struct profile *p = alloc_profile();
	draw_all(request(PLOT_HEAP, p, NULL), "heap", "live heap of allocprog 3");
	draw_all(request(PLOT_RATE, p, NULL), "rate", "allocation rate of allocprog 3");
	int64_t peak;
	uint64_t when;
	CHECK(plot_heap_peak(p, &peak, &when) == 0 && peak == 8000 && when == 40000000);

	/* heap.dat's highest value is the peak the script marks. */
	char *dir = keep(request(PLOT_HEAP, p, NULL), "heap");
	static struct table t;
	read_table(dir, "heap.dat", &t);
	double max = 0;
	for (int r = 0; r < t.rows; r++)
		max = t.v[r][3] > max ? t.v[r][3] : max;
	CHECKF(max == 8000 && t.v[t.rows - 1][1] == 5000, "heap.dat: max %g, last %g", max, t.v[t.rows - 1][1]);
	char path[8300];
	snprintf(path, sizeof(path), "%s/heap.gp", dir);
	char *script = slurp(path);
	CHECK(script_number(script, "peak") == 8000 && script_number(script, "end_bytes") == 5000 &&
	      script_number(script, "end_objects") == 2 && fabs(script_number(script, "peak_time") - 0.04) < 1e-9);
	free(script);
	free(dir);

	/* rate.dat: 204 allocations and 202 frees in all. */
	dir = keep(request(PLOT_RATE, p, NULL), "rate");
	read_table(dir, "rate.dat", &t);
	double allocs = 0, frees = 0;
	for (int r = 0; r < t.rows; r++) {
		allocs += t.v[r][1];
		frees += t.v[r][2];
	}
	CHECKF(allocs == 204 && frees == 202, "rate.dat: %g allocations, %g frees", allocs, frees);
	free(dir);

	/* The diff plot of two allocation runs: exact, no error bars. */
	struct profile *q = alloc_profile();
	q->values[1] = 5000; /* the first allocation of 1000 became 5000 bytes */
	struct diff d;
	char err[2048];
	struct diff_options dopt = {.normalize = 0, .confidence = 0.99};
	CHECK(diff_build(&d, p, "base.zst", q, "new.zst", &dopt, err, sizeof(err)) == 0);
	struct plot_request rq = request(PLOT_DIFF, NULL, NULL);
	rq.diff = &d;
	rq.trace = "base.zst -> new.zst";
	draw_all(rq, "diff", "changes of allocprog 3");
	dir = keep(rq, "diff");
	read_table(dir, "diff.dat", &t);
	/* main and make_a grew by 4000 of base's 14200 bytes, exactly: no margin. */
	CHECKF(t.rows == 2 && fabs(t.v[0][1] - 400000.0 / 14200) < 1e-4 && t.v[0][2] == 0 && t.v[0][3] == 1,
	       "diff.dat: %d rows, change %g margin %g", t.rows, t.v[0][1], t.v[0][2]);
	free(dir);
	diff_free(&d);
	profile_free(q);
	profile_free(p);
}

static void test_gnuplot_errors(void)
{
	struct profile *p = cpu_profile();
	char err[2048], path[8300];
	snprintf(path, sizeof(path), "%s/never.png", out_dir);
	struct plot_request rq = request(PLOT_TOP, p, path);
	rq.gnuplot = "ipscope-no-such-gnuplot";
	CHECK(plot_make(&rq, err, sizeof(err)) == -1);
	CHECKF(strstr(err, "cannot run ipscope-no-such-gnuplot: No such file or directory (install gnuplot"), "%s", err);
	struct stat st;
	CHECK(stat(path, &st) < 0); /* nothing half-written left behind */

	/* A template gnuplot rejects: its own message comes back. */
	char broken[8300];
	snprintf(broken, sizeof(broken), "%s/broken", out_dir);
	mkdir(broken, 0777);
	char gp[8400];
	snprintf(gp, sizeof(gp), "%s/top.gp", broken);
	FILE *f = fopen(gp, "w");
	fputs("plot 'top.dat' using 1:(no_such_variable)\n", f);
	fclose(f);
	rq = request(PLOT_TOP, p, path);
	rq.templates = broken;
	CHECK(plot_make(&rq, err, sizeof(err)) == -1);
	CHECKF(strstr(err, "gnuplot failed (exit 1)") && strstr(err, "undefined variable: no_such_variable"), "%s", err);
	CHECK(stat(path, &st) < 0);
	profile_free(p);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fputs("usage: unit_plot BUILD_DIR\n", stderr);
		return 2;
	}
	snprintf(templates, sizeof(templates), "%s/share/ipscope/plots", argv[1]);
	snprintf(out_dir, sizeof(out_dir), "%s/tests/plot-unit", argv[1]);
	mkdir(out_dir, 0777);
	memset(&options, 0, sizeof(options));
	load_options_init(&options.load);
	options.combine = 1;
	test_cpu();
	test_binned_rows();
	test_alloc();
	test_gnuplot_errors();
	if (check_failures)
		return check_exit_status();
	puts("plot tests passed");
	return 0;
}
