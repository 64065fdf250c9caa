/*
 * report_test.c - unit tests of analyze's reports on hand-built profiles
 * (profile_builder.h):
 * tree shape and counts, what each of noisefloor, mincount, maxdepth,
 * combine and -C makes appear or vanish (exact lines), recursion in flat,
 * flat sorting, inlined frames, the filters' copies, and the allocation
 * views' figures and header.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"
#include "options.h"
#include "profile.h"
#include "profile_builder.h"
#include "report.h"

#include "check.h"

/* ---- building profiles by hand (profile_builder.h) ---- */

static uint32_t function(struct profile *p, const char *name, const char *file, uint32_t line,
			 int system)
{
	return build_function(p, name, file, line, 0, system ? PROFILE_FUNCTION_SYSTEM : 0);
}

static uint32_t location_chain(struct profile *p, uint64_t address, const uint32_t *fns,
			       const uint32_t *lines, int n)
{
	return build_location(p, address, 0, fns, lines, n);
}

static uint32_t location(struct profile *p, uint64_t address, uint32_t fn, uint32_t line)
{
	return build_location(p, address, 0, &fn, &line, 1);
}

/* Add weight samples of one stack given root first, -1 terminated. */
static void sample(struct profile *p, uint32_t thread, int64_t weight, const int *root_first)
{
	build_weighted_sample(p, build_stack(p, root_first), thread, 0, weight);
}

static struct profile *new_profile(void)
{
	struct profile *p = build_cpu_profile(1000000);
	struct profile_module m = {.path = profile_intern(p, "/bin/t")};
	profile_add_module(p, &m);
	struct profile_thread t = {.pid = 1, .tid = 1, .name = profile_intern(p, "t")};
	profile_add_thread(p, &t);
	struct profile_thread t2 = {.pid = 1, .tid = 2, .name = profile_intern(p, "worker")};
	profile_add_thread(p, &t2);
	p->command = profile_intern(p, "./t");
	return p;
}

/*
 * The main test profile, total weight 100 (root first):
 *   _start main:10 a:20 memcpy   50      (memcpy, _start: system)
 *   _start main:10 a:20 c:40     20 (c at 0x4000) + 10 (c at 0x4004)
 *   _start main:10 b:30          16
 *   _start main:11 c:40           3
 *   _start main:10 a:20 b:30      1
 */
static struct profile *main_profile(void)
{
	struct profile *p = new_profile();
	uint32_t f_start = function(p, "_start", "start.S", 1, 1);
	uint32_t f_memcpy = function(p, "memcpy", "memcpy.S", 1, 1);
	uint32_t f_main = function(p, "main", "t.c", 5, 0);
	uint32_t f_a = function(p, "a", "t.c", 19, 0);
	uint32_t f_b = function(p, "b", "t.c", 29, 0);
	uint32_t f_c = function(p, "c", "t.c", 39, 0);
	int start = (int)location(p, 0x1000, f_start, 0);
	int main10 = (int)location(p, 0x2000, f_main, 10);
	int main11 = (int)location(p, 0x2010, f_main, 11);
	int a20 = (int)location(p, 0x3000, f_a, 20);
	int b30 = (int)location(p, 0x3800, f_b, 30);
	int c40 = (int)location(p, 0x4000, f_c, 40);
	int c40b = (int)location(p, 0x4004, f_c, 40);
	int memcpy_ = (int)location(p, 0x9000, f_memcpy, 0);
	sample(p, 0, 50, (int[]){start, main10, a20, memcpy_, -1});
	sample(p, 0, 20, (int[]){start, main10, a20, c40, -1});
	sample(p, 1, 10, (int[]){start, main10, a20, c40b, -1});
	sample(p, 0, 16, (int[]){start, main10, b30, -1});
	sample(p, 0, 3, (int[]){start, main11, c40, -1});
	sample(p, 0, 1, (int[]){start, main10, a20, b30, -1});
	return p;
}

/* ---- running reports into a string ---- */

static void default_options(struct analyze_options *o)
{
	memset(o, 0, sizeof(*o));
	load_options_init(&o->load);
	o->combine = 1;
}

static char *run_tree_value(const struct profile *in, const struct analyze_options *o,
			    const struct tree_options *to, uint32_t value)
{
	struct profile *p = filter_profile(in, &o->filter);
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct report r;
	report_init(&r, out, p, o, value == PROFILE_NO_VALUE ? p->default_value : value);
	tree_report(&r, to);
	fclose(out);
	profile_free(p);
	return buf;
}

/* The tree as printed, with each node's share of the total (" 97.0% " before the rail). */
static char *run_tree_shares(const struct profile *in, const struct analyze_options *o,
			     const struct tree_options *to)
{
	return run_tree_value(in, o, to, PROFILE_NO_VALUE);
}

/* The tree as Julia prints it: the share column taken out, so the lines say what Julia's would. */
static char *run_tree(const struct profile *in, const struct analyze_options *o,
		      const struct tree_options *to)
{
	char *buf = run_tree_shares(in, o, to);
	static const char rail[] = "╎";
	for (char *line = buf; line && *line;) {
		char *at = strstr(line, rail), *end = strchr(line, '\n');
		if (at && (!end || at < end) && at - line >= 8 && at[-1] == ' ' && at[-2] == '%') {
			memmove(at - 8, at, strlen(at) + 1);
			end = strchr(line, '\n');
		}
		line = end ? end + 1 : NULL;
	}
	return buf;
}

static char *run_flat(const struct profile *in, const struct analyze_options *o,
		      const struct flat_options *fo)
{
	struct profile *p = filter_profile(in, &o->filter);
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct report r;
	report_init(&r, out, p, o, p->default_value);
	flat_report(&r, fo);
	fclose(out);
	profile_free(p);
	return buf;
}

/* 1 when text has a line exactly equal to line. */
static int has_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	for (const char *s = text; s && *s;) {
		const char *end = strchr(s, '\n');
		size_t len = end ? (size_t)(end - s) : strlen(s);
		if (len == n && !memcmp(s, line, n))
			return 1;
		s = end ? end + 1 : NULL;
	}
	return 0;
}

/* Index of the line equal to line, -1 if none. */
static int line_index(const char *text, const char *line)
{
	size_t n = strlen(line);
	int i = 0;
	for (const char *s = text; s && *s; i++) {
		const char *end = strchr(s, '\n');
		size_t len = end ? (size_t)(end - s) : strlen(s);
		if (len == n && !memcmp(s, line, n))
			return i;
		s = end ? end + 1 : NULL;
	}
	return -1;
}

#define EXPECT_LINE(text, line) CHECKF(has_line(text, line), "missing line [%s] in:\n%s", line, text)
#define EXPECT_NO_LINE(text, line) \
	CHECKF(!has_line(text, line), "unexpected line [%s] in:\n%s", line, text)

/* Lines of the default tree of main_profile. */
static const char *const tree_main10 = "  ╎97 t.c:10; main";
static const char *const tree_a = "50╎ 81 t.c:20; a";
static const char *const tree_a_c = "30╎  30 t.c:40; c";
static const char *const tree_a_b = " 1╎  1  t.c:30; b";
static const char *const tree_b = "16╎ 16 t.c:30; b";
static const char *const tree_main11 = "  ╎3  t.c:11; main";
static const char *const tree_main11_c = " 3╎ 3  t.c:40; c";

static void test_tree_shape(const struct profile *p)
{
	struct analyze_options o;
	struct tree_options to = {0};
	default_options(&o);
	char *out = run_tree(p, &o, &to);
	const char *const lines[] = {tree_main10, tree_a, tree_a_c, tree_a_b,
				     tree_b, tree_main11, tree_main11_c};
	int last = -1;
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		int at = line_index(out, lines[i]);
		CHECKF(at > last, "line [%s] missing or out of order in:\n%s", lines[i], out);
		last = at;
	}
	/* System frames are hidden: memcpy's 50 are a's self time. */
	CHECKF(!strstr(out, "memcpy") && !strstr(out, "_start"), "system frames shown:\n%s", out);
	CHECKF(strstr(out, "Total samples: 6 (weight 100 = 100.0 ms of CPU)") != NULL,
	      "footer wrong:\n%s", out);
	free(out);
}

/* The share column, and the node fraction hiding small nodes with the line that says so. */
static void test_tree_share_and_fraction(const struct profile *p)
{
	struct analyze_options o;
	struct tree_options to = {0};
	default_options(&o);
	char *out = run_tree_shares(p, &o, &to);
	EXPECT_LINE(out, "    97.0% ╎97 t.c:10; main");
	EXPECT_LINE(out, "50  81.0% ╎ 81 t.c:20; a");
	EXPECT_LINE(out, " 1   1.0% ╎  1  t.c:30; b");
	CHECKF(!strstr(out, "Hidden:"), "nothing hidden, yet:\n%s", out);
	free(out);
	/* Below 5%: main:11 with its c (3), and a's b (1): 3 nodes, 4% of the total. */
	to.nodefraction = 0.05;
	out = run_tree_shares(p, &o, &to);
	EXPECT_LINE(out, "50  81.0% ╎ 81 t.c:20; a");
	EXPECT_LINE(out, "16  16.0% ╎ 16 t.c:30; b");
	EXPECT_NO_LINE(out, " 1   1.0% ╎  1  t.c:30; b");
	CHECKF(!strstr(out, "t.c:11; main"), "main:11 (3%%) shown:\n%s", out);
	EXPECT_LINE(out, "Hidden: 3 nodes below 5% of the total each, 4.0% of it together (--nodefraction 0 "
			 "shows every node)");
	free(out);
	/* Per thread: each tree against its own total, one line for all. */
	to.threads = 1;
	out = run_tree_shares(p, &o, &to);
	CHECKF(strstr(out, "100.0% ╎10 t.c:10; main") != NULL, "thread 2's tree not of its own total:\n%s", out);
	EXPECT_LINE(out, "Hidden: 3 nodes below 5% of the total each, 4.0% of it together (--nodefraction 0 "
			 "shows every node)");
	free(out);
}

/* An allocation profile's rows in people's units; a CPU profile's counts raw. */
static void test_alloc_units(const struct profile *cpu)
{
	struct analyze_options o;
	default_options(&o);
	struct profile *p = build_alloc_workload();
	struct tree_options to = {0};
	char *out = run_tree(p, &o, &to); /* alloc_space */
	EXPECT_LINE(out, "       ╎3.0 MiB app.c:6; main");
	EXPECT_LINE(out, "       ╎ 3.0 MiB app.c:21; make_big");
	EXPECT_LINE(out, "3.0 MiB╎  3.0 MiB ?:?; calloc 1.0 MiB");
	EXPECT_LINE(out, "3.1 KiB╎  3.1 KiB ?:?; malloc 32 B");
	free(out);
	struct flat_options fo = {.sort = FLAT_SORT_SELF};
	out = run_flat(p, &o, &fo);
	CHECKF(strstr(out, "3.0 MiB  99.9% 3.0 MiB  99.9% app.c   20 make_big") != NULL, "flat bytes:\n%s", out);
	free(out);
	struct report r;
	report_init(&r, stdout, p, &o, profile_find_value_type(p, "alloc_objects"));
	char buf[32];
	CHECK(!strcmp(report_row_value(&r, 9999, buf, sizeof(buf)), "9999"));
	CHECK(!strcmp(report_row_value(&r, 12345, buf, sizeof(buf)), "12.3 K"));
	CHECK(!strcmp(report_row_value(&r, -1234567, buf, sizeof(buf)), "-1.2 M"));
	CHECK(!strcmp(report_row_value(&r, 999999, buf, sizeof(buf)), "1.0 M"));
	report_init(&r, stdout, cpu, &o, cpu->default_value);
	CHECK(!strcmp(report_row_value(&r, 1234567, buf, sizeof(buf)), "1234567"));
	profile_free(p);
}

static void test_tree_noisefloor(const struct profile *p)
{
	struct analyze_options o;
	struct tree_options to = {.noisefloor = 2};
	default_options(&o);
	char *out = run_tree(p, &o, &to);
	/* floor(2 sqrt(97)) = 19 hides b (16) under main:10; floor(2 sqrt(81))
	 * = 18 hides b (1) under a; c (30) stays; floor(2 sqrt(3)) = 3 keeps
	 * c (3) under main:11; the top level is never hidden. */
	EXPECT_LINE(out, tree_main10);
	EXPECT_LINE(out, tree_a);
	EXPECT_LINE(out, tree_a_c);
	EXPECT_NO_LINE(out, tree_b);
	EXPECT_NO_LINE(out, tree_a_b);
	EXPECT_LINE(out, tree_main11);
	EXPECT_LINE(out, tree_main11_c);
	free(out);

	to.noisefloor = 2.4; /* floor(2.4 sqrt(3)) = 4 > 3: c under main:11 goes */
	out = run_tree(p, &o, &to);
	EXPECT_LINE(out, tree_main11);
	EXPECT_NO_LINE(out, tree_main11_c);
	free(out);
}

static void test_tree_mincount(const struct profile *p)
{
	struct analyze_options o;
	struct tree_options to = {0};
	default_options(&o);
	o.mincount = 4;
	char *out = run_tree(p, &o, &to);
	EXPECT_LINE(out, tree_main10);
	EXPECT_LINE(out, tree_a);
	EXPECT_LINE(out, tree_a_c);
	EXPECT_LINE(out, tree_b);
	EXPECT_NO_LINE(out, tree_a_b);      /* 1 < 4 */
	EXPECT_NO_LINE(out, tree_main11);   /* 3 < 4, with its subtree */
	EXPECT_NO_LINE(out, tree_main11_c);
	free(out);
}

static void test_tree_maxdepth(const struct profile *p)
{
	struct analyze_options o;
	struct tree_options to = {.maxdepth = 1};
	default_options(&o);
	char *out = run_tree(p, &o, &to);
	EXPECT_LINE(out, tree_main10);
	EXPECT_LINE(out, tree_main11);
	EXPECT_NO_LINE(out, tree_a);
	EXPECT_NO_LINE(out, tree_b);
	free(out);
	to.maxdepth = 2;
	out = run_tree(p, &o, &to);
	EXPECT_LINE(out, tree_a);
	EXPECT_LINE(out, tree_b);
	EXPECT_LINE(out, tree_main11_c);
	EXPECT_NO_LINE(out, tree_a_c);
	EXPECT_NO_LINE(out, tree_a_b);
	free(out);
}

static void test_tree_combine(const struct profile *p)
{
	struct analyze_options o;
	struct tree_options to = {0};
	default_options(&o);
	o.combine = 0;
	char *out = run_tree(p, &o, &to);
	/* c's two addresses under a become two nodes, each with its address. */
	EXPECT_NO_LINE(out, tree_a_c);
	EXPECT_LINE(out, "20╎  20 t.c:40; 0x0000000000004000 c");
	EXPECT_LINE(out, "10╎  10 t.c:40; 0x0000000000004004 c");
	EXPECT_LINE(out, "  ╎97 t.c:10; 0x0000000000002000 main");
	free(out);
}

static void test_tree_show_system(const struct profile *p)
{
	struct analyze_options o;
	struct tree_options to = {0};
	default_options(&o);
	o.filter.show_system = 1;
	char *out = run_tree(p, &o, &to);
	/* _start becomes the one top-level node; memcpy appears under a, whose
	 * self time drops from 50 to 0. */
	EXPECT_LINE(out, "  ╎100 start.S:?; _start");
	EXPECT_LINE(out, "  ╎ 97  t.c:10; main");
	EXPECT_LINE(out, "  ╎  81  t.c:20; a");
	EXPECT_LINE(out, "50╎   50  memcpy.S:?; memcpy");
	EXPECT_NO_LINE(out, tree_a);
	free(out);
}

static void test_tree_threads_and_tid(const struct profile *p)
{
	struct analyze_options o;
	struct tree_options to = {.threads = 1};
	default_options(&o);
	char *out = run_tree(p, &o, &to);
	CHECKF(strstr(out, "Thread 1 (t): 5 samples") && strstr(out, "Thread 2 (worker): 1 samples"),
	      "per-thread headings missing:\n%s", out);
	free(out);

	uint32_t tid = 2;
	to.threads = 0;
	o.filter.tids = &tid;
	o.filter.ntids = 1;
	out = run_tree(p, &o, &to);
	/* Only the 10 samples of thread 2 (c at 0x4004 under a). */
	EXPECT_LINE(out, "  ╎10 t.c:10; main");
	EXPECT_LINE(out, "  ╎ 10 t.c:20; a");
	EXPECT_LINE(out, "10╎  10 t.c:40; c");
	CHECKF(strstr(out, "Total samples: 1 (weight 10") != NULL, "tid footer:\n%s", out);
	free(out);
}

static void test_tree_indent_cut(void)
{
	/* A chain 30 deep at width 40: indentation stops at 20 columns and the
	 * rest shows as +n. */
	struct profile *p = new_profile();
	uint32_t f = function(p, "deep", "d.c", 1, 0);
	int chain[32];
	for (int i = 0; i < 30; i++)
		chain[i] = (int)location(p, 0x100 + (uint64_t)i, f, (uint32_t)i + 1);
	chain[30] = -1;
	sample(p, 0, 1, chain);
	struct analyze_options o;
	struct tree_options to = {0};
	default_options(&o);
	o.width = 40;
	char *out = run_tree(p, &o, &to);
	/* Level 19 (d.c:20) fits: 19 columns of indent. Level 25 (d.c:26):
	 * nindent is cut to width/2 = 20, minus 3 for "+5 ", so 16 columns
	 * of guides, a space, then "+5 ". */
	EXPECT_LINE(out, " ╎    ╎    ╎    ╎    1 d.c:20; deep");
	EXPECT_LINE(out, " ╎    ╎    ╎    ╎     1 d.c:21; deep");
	EXPECT_LINE(out, " ╎    ╎    ╎    ╎  +1 1 d.c:22; deep");
	EXPECT_LINE(out, " ╎    ╎    ╎    ╎  +5 1 d.c:26; deep");
	free(out);
	profile_free(p);
}

/* Recursion: main -> f x4 (10), main -> f -> g (5). */
static struct profile *recursive_profile(void)
{
	struct profile *p = new_profile();
	uint32_t f_main = function(p, "main", "r.c", 1, 0);
	uint32_t f_f = function(p, "f", "r.c", 10, 0);
	uint32_t f_g = function(p, "g", "r.c", 20, 0);
	int m = (int)location(p, 0x10, f_main, 3);
	int fr = (int)location(p, 0x20, f_f, 12);
	int fl = (int)location(p, 0x24, f_f, 11);
	int g = (int)location(p, 0x30, f_g, 21);
	sample(p, 0, 10, (int[]){m, fr, fr, fr, fl, -1});
	sample(p, 0, 5, (int[]){m, fr, g, -1});
	return p;
}

static void test_recursion(void)
{
	struct profile *p = recursive_profile();
	struct analyze_options o;
	struct flat_options fo = {0};
	default_options(&o);
	char *out = run_flat(p, &o, &fo);
	/* Count columns: f is on every stack (several times): 15, not 35. */
	EXPECT_LINE(out, "   15 100.0%   10  66.7% r.c    10 f");
	EXPECT_LINE(out, "   15 100.0%    0   0.0% r.c     1 main");
	EXPECT_LINE(out, "    5  33.3%    5  33.3% r.c    20 g");
	free(out);
	o.lines = 1;
	out = run_flat(p, &o, &fo);
	EXPECT_LINE(out, "   15 100.0%    0   0.0% r.c    12 f");
	EXPECT_LINE(out, "   10  66.7%   10  66.7% r.c    11 f");
	free(out);

	struct tree_options to = {0};
	o.lines = 0;
	out = run_tree(p, &o, &to);
	EXPECT_LINE(out, "  ╎15 r.c:3; main");
	EXPECT_LINE(out, "  ╎ 15 r.c:12; f");
	EXPECT_LINE(out, "  ╎  10 r.c:12; f");
	EXPECT_LINE(out, "  ╎   10 r.c:12; f");
	EXPECT_LINE(out, "10╎    10 r.c:11; f");
	EXPECT_LINE(out, " 5╎  5  r.c:21; g");
	free(out);
	profile_free(p);
}

static void test_flat_sorting(const struct profile *p)
{
	struct analyze_options o;
	struct flat_options fo = {0};
	default_options(&o);
	const char *a = "   81  81.0%   50  50.0% t.c    19 a";
	const char *b = "   17  17.0%   17  17.0% t.c    29 b";
	const char *c = "   33  33.0%   33  33.0% t.c    39 c";
	const char *m = "  100 100.0%    0   0.0% t.c     5 main";
	char *out = run_flat(p, &o, &fo);
	/* filefuncline: a, b, c, main (same file, by name) */
	CHECKF(line_index(out, a) >= 0 && line_index(out, a) < line_index(out, b) &&
		      line_index(out, b) < line_index(out, c) && line_index(out, c) < line_index(out, m),
	      "filefuncline order:\n%s", out);
	free(out);
	fo.sort = FLAT_SORT_COUNT;
	out = run_flat(p, &o, &fo);
	CHECKF(line_index(out, m) >= 0 && line_index(out, m) < line_index(out, a) &&
		      line_index(out, a) < line_index(out, c) && line_index(out, c) < line_index(out, b),
	      "count order:\n%s", out);
	free(out);
	fo.sort = FLAT_SORT_SELF;
	out = run_flat(p, &o, &fo);
	CHECKF(line_index(out, a) >= 0 && line_index(out, a) < line_index(out, c) &&
		      line_index(out, c) < line_index(out, b) && line_index(out, b) < line_index(out, m),
	      "self order:\n%s", out);
	free(out);
	fo.limit = 2;
	o.mincount = 0;
	out = run_flat(p, &o, &fo);
	EXPECT_LINE(out, a);
	EXPECT_LINE(out, c);
	EXPECT_NO_LINE(out, b);
	free(out);
	fo.limit = 0;
	o.mincount = 20;
	out = run_flat(p, &o, &fo);
	EXPECT_LINE(out, a);
	EXPECT_NO_LINE(out, b);
	free(out);
}

static void test_flat_show_system(const struct profile *p)
{
	struct analyze_options o;
	struct flat_options fo = {0};
	default_options(&o);
	o.filter.show_system = 1;
	char *out = run_flat(p, &o, &fo);
	EXPECT_LINE(out, "   81  81.0%    0   0.0% t.c        19 a");
	EXPECT_LINE(out, "   50  50.0%   50  50.0% memcpy.S    1 memcpy");
	EXPECT_LINE(out, "  100 100.0%    0   0.0% start.S     1 _start");
	free(out);
}

static void test_inlined(void)
{
	/* hot() inlined into caller() at m.c:12, the work at h.c:5. */
	struct profile *p = new_profile();
	uint32_t f_main = function(p, "main", "m.c", 1, 0);
	uint32_t f_caller = function(p, "caller", "m.c", 10, 0);
	uint32_t f_hot = function(p, "hot", "h.c", 3, 0);
	int m = (int)location(p, 0x10, f_main, 2);
	int chain = (int)location_chain(p, 0x40, (uint32_t[]){f_hot, f_caller},
					(uint32_t[]){5, 12}, 2);
	sample(p, 0, 9, (int[]){m, chain, -1});
	struct analyze_options o;
	struct tree_options to = {0};
	struct flat_options fo = {0};
	default_options(&o);
	char *out = run_tree(p, &o, &to);
	EXPECT_LINE(out, " ╎9 m.c:2; main");
	EXPECT_LINE(out, " ╎ 9 m.c:12; caller");
	EXPECT_LINE(out, "9╎  9 h.c:5; hot [inlined]");
	free(out);
	out = run_flat(p, &o, &fo);
	EXPECT_LINE(out, "    9 100.0%    9 100.0% h.c     3 hot [inlined]");
	EXPECT_LINE(out, "    9 100.0%    0   0.0% m.c    10 caller");
	free(out);
	/* --no-inline: hot's cost is caller's own, at the line of the call. */
	o.filter.no_inline = 1;
	out = run_tree(p, &o, &to);
	EXPECT_LINE(out, "9╎ 9 m.c:12; caller");
	CHECKF(strstr(out, "hot") == NULL, "an inlined frame is left:\n%s", out);
	free(out);
	out = run_flat(p, &o, &fo);
	EXPECT_LINE(out, "    9 100.0%    9 100.0% m.c    10 caller");
	CHECKF(strstr(out, "hot") == NULL, "an inlined frame is left:\n%s", out);
	free(out);
	profile_free(p);
}

static void test_all_hidden(void)
{
	/* A sample entirely in system code keeps its innermost frame. */
	struct profile *p = new_profile();
	uint32_t f_start = function(p, "_start", "s.S", 1, 1);
	uint32_t f_dl = function(p, "_dl_relocate", "dl.c", 1, 1);
	uint32_t f_main = function(p, "main", "m.c", 1, 0);
	int s = (int)location(p, 0x1, f_start, 1);
	int d = (int)location(p, 0x2, f_dl, 7);
	int m = (int)location(p, 0x3, f_main, 2);
	sample(p, 0, 4, (int[]){s, d, -1});
	sample(p, 0, 6, (int[]){s, m, -1});
	struct analyze_options o;
	struct tree_options to = {0};
	default_options(&o);
	char *out = run_tree(p, &o, &to);
	EXPECT_LINE(out, "6╎6 m.c:2; main");
	EXPECT_LINE(out, "4╎4 dl.c:7; _dl_relocate");
	EXPECT_NO_LINE(out, "  ╎10 s.S:1; _start");
	CHECKF(strstr(out, "weight 10 ") != NULL, "totals shrank:\n%s", out);
	free(out);
	profile_free(p);
}

static void test_filter_copy(const struct profile *p)
{
	struct filter_options f = {0};
	struct profile *q = filter_profile(p, &f);
	CHECKF(q->nsamples == p->nsamples && profile_value_total(q, q->default_value, NULL) == 100,
	       "samples %llu weight %lld", (unsigned long long)q->nsamples,
	       (long long)profile_value_total(q, q->default_value, NULL));
	CHECKF(q->nstrings == p->nstrings && q->nfunctions == p->nfunctions, "tables not kept");
	/* The memcpy stack and the b stack... every stack lost _start. */
	for (uint32_t s = 0; s < q->nstacks; s++)
		for (uint32_t i = 0; i < q->stacks[s].depth; i++) {
			const struct profile_location *l =
				&q->locations[q->stack_locations[q->stacks[s].first + i]];
			for (uint32_t k = 0; k < l->nlines; k++)
				CHECKF(!(q->functions[q->lines[l->first_line + k].function].flags &
					PROFILE_FUNCTION_SYSTEM),
				      "system frame kept in stack %u", s);
		}
	int64_t weights[2];
	profile_thread_totals(q, q->default_value, weights, NULL);
	CHECKF(weights[0] == 90 && weights[1] == 10, "thread weights %lld %lld", (long long)weights[0],
	       (long long)weights[1]);
	/* The consuming variant gives the same. */
	struct profile *copy = filter_profile(p, &(struct filter_options){.show_system = 1});
	struct profile *r = filter_profile_consume(copy, &f);
	CHECKF(r->nsamples == q->nsamples && r->nstacks == q->nstacks &&
		      profile_value_total(r, 0, NULL) == profile_value_total(q, 0, NULL),
	      "consume differs: %llu/%u vs %llu/%u", (unsigned long long)r->nsamples, r->nstacks,
	      (unsigned long long)q->nsamples, q->nstacks);
	profile_free(r);
	profile_free(q);
}

/* Total of the type named name in p, or -1 when p has no such type. */
static int64_t type_total(const struct profile *p, const char *name)
{
	uint32_t v = profile_find_value_type(p, name);
	return v == PROFILE_NO_VALUE ? -1 : profile_value_total(p, v, NULL);
}

/*
 * The views count their blocks only, in every type (build_alloc_workload:
 * 41 of 103 blocks leaked, 1 MiB + 1280 B; all 103 live at the peak; none
 * temporary), what they cannot know is no type of theirs, and the header
 * gives the run's figures and the view's apart.
 */
static void test_alloc_views(void)
{
	struct profile *in = build_alloc_workload();
	struct analyze_options o;
	default_options(&o);
	o.filter.show_system = 1;
	o.filter.view = FILTER_VIEW_LEAKS;
	struct profile *p = filter_profile(in, &o.filter);
	CHECK(type_total(p, "alloc_objects") == 41);
	CHECK(type_total(p, "alloc_space") == 1048576 + 1280);
	CHECK(type_total(p, "inuse_objects") == 41);
	CHECK(type_total(p, "temporary_objects") == 0);
	CHECK(type_total(p, "peak_space") == -1);
	CHECK(p->alloc_run[PROFILE_ALLOC_RUN_ALLOC] == 103);
	char why[160];
	CHECK(filter_view_lacks(FILTER_VIEW_LEAKS, "peak_space", why, sizeof(why)) != NULL);
	CHECK(filter_view_lacks(FILTER_VIEW_LEAKS, "alloc_space", why, sizeof(why)) == NULL);
	profile_free(p);
	struct tree_options to = {0};
	char *text = run_tree(in, &o, &to);
	CHECK(strstr(text, "Allocations: 103 in the run (3.0 MiB), 41 of them leaked (1.0 MiB), shown; 62 frees;"));
	CHECK(strstr(text, "Heap: peak 3.0 MiB live in 103 blocks"));
	free(text);
	o.filter.view = FILTER_VIEW_PEAK;
	p = filter_profile(in, &o.filter);
	CHECK(type_total(p, "alloc_objects") == 103);
	CHECK(type_total(p, "inuse_objects") == -1 && type_total(p, "temporary_objects") == -1);
	profile_free(p);
	o.filter.view = FILTER_VIEW_TEMPORARY;
	p = filter_profile(in, &o.filter);
	CHECK(type_total(p, "alloc_objects") == 0);
	CHECK(type_total(p, "inuse_space") == 0);
	profile_free(p);
	profile_free(in);
}

int main(void)
{
	struct profile *p = main_profile();
	test_tree_shape(p);
	test_tree_share_and_fraction(p);
	test_alloc_units(p);
	test_tree_noisefloor(p);
	test_tree_mincount(p);
	test_tree_maxdepth(p);
	test_tree_combine(p);
	test_tree_show_system(p);
	test_tree_threads_and_tid(p);
	test_tree_indent_cut();
	test_recursion();
	test_flat_sorting(p);
	test_flat_show_system(p);
	test_inlined();
	test_all_hidden();
	test_filter_copy(p);
	test_alloc_views();
	profile_free(p);
	if (check_failures)
		return check_exit_status();
	printf("report tests passed\n");
	return 0;
}
