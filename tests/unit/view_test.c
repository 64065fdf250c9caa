/*
 * view_test.c - the viewer's model (analyze/view/view.h) driven without a
 * terminal on hand-built profiles with known answers: the screen's rows and
 * percentages at the start, after u (the other unit), after s (flat self
 * cost), in the source panel, after t (a thread), f (filters), / and n
 * (search); the
 * flame strip's layout; names shortened; every screen size from too small
 * to 200x60; no control character of a trace reaching a cell; and the
 * flat rows and source costs the viewer makes from tree nodes equal those
 * made from the stacks.
 *
 * The allocation views are view_alloc_test.c's; e2e_view_alloc runs the
 * viewer on a real collect --allocs trace.
 */
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile_builder.h"
#include "report.h"
#include "source.h"
#include "view.h"
#include "view_internal.h"

#include "check.h"

static char source_path[256]; /* a.c of the CPU profile, written by the test */

#include "view_driver.h"

/*
 * A CPU profile, interval 1 ms, 1000 samples, all in a.c (root first):
 *   run:41 main:5 hot:11              thread 1: 400, thread 2: 200
 *   run:41 main:6 cold:21             thread 1: 300
 *   run:41 main:7 main::{lambda}:31   thread 2: 100
 */
static struct profile *cpu_profile(void)
{
	struct profile *p = build_cpu_profile(1000000);
	struct profile_module m = {.path = profile_intern(p, "/nonexistent/view-test")};
	profile_add_module(p, &m);
	struct profile_thread t1 = {.pid = 7, .tid = 7, .name = profile_intern(p, "main")};
	struct profile_thread t2 = {.pid = 7, .tid = 8, .name = profile_intern(p, "worker")};
	profile_add_thread(p, &t1);
	profile_add_thread(p, &t2);
	p->command = profile_intern(p, "./viewtest --run");
	uint32_t f_run = build_function(p, "run", source_path, 40, 0, 0);
	uint32_t f_main = build_function(p, "main", source_path, 4, 0, 0);
	uint32_t f_hot = build_function(p, "hot", source_path, 10, 0, 0);
	uint32_t f_cold = build_function(p, "cold", source_path, 20, 0, 0);
	uint32_t f_lambda = build_function(p, "main::{lambda(int)#1}::operator()", source_path, 30, 0, 0);
	uint32_t l41 = 41, l5 = 5, l6 = 6, l7 = 7, l11 = 11, l21 = 21, l31 = 31;
	int run = (int)build_location(p, 0x100, 0, &f_run, &l41, 1);
	int m5 = (int)build_location(p, 0x105, 0, &f_main, &l5, 1);
	int m6 = (int)build_location(p, 0x106, 0, &f_main, &l6, 1);
	int m7 = (int)build_location(p, 0x107, 0, &f_main, &l7, 1);
	int hot = (int)build_location(p, 0x111, 0, &f_hot, &l11, 1);
	int cold = (int)build_location(p, 0x121, 0, &f_cold, &l21, 1);
	int lambda = (int)build_location(p, 0x131, 0, &f_lambda, &l31, 1);
	uint32_t s_hot = build_stack(p, (int[]){run, m5, hot, -1});
	uint32_t s_cold = build_stack(p, (int[]){run, m6, cold, -1});
	uint32_t s_lambda = build_stack(p, (int[]){run, m7, lambda, -1});
	/* Many samples, as a trace has them: the view sums them per (stack, thread). */
	for (int i = 0; i < 400; i++)
		build_weighted_sample(p, s_hot, 0, 0, 1);
	for (int i = 0; i < 100; i++)
		build_weighted_sample(p, s_hot, 1, 0, 2);
	build_weighted_sample(p, s_cold, 0, 0, 300);
	for (int i = 0; i < 100; i++)
		build_weighted_sample(p, s_lambda, 1, 0, 1);
	return p;
}

static void test_cpu(void)
{
	struct view *v = new_view(cpu_profile());
	draw(v);
	/* The hottest path is open: run, its three callers' lines, and main:5's hot (60%);
	 * main:6's cold (30%) stays closed. The cursor is on the top row. */
	EXPECT_ROW("start", "ipscope view: ./viewtest --run", "all threads", "tree");
	EXPECT_ROW("start", "weight 1000 = 1.000 s of CPU", "by cpu");
	EXPECT_ROW("start", "1.000 s 100.0%", "run  a.c:41");
	EXPECT_ROW("start", "600.0 ms  60.0%", "main  a.c:5");
	EXPECT_ROW("start", "300.0 ms  30.0%", "main  a.c:6");
	EXPECT_ROW("start", "100.0 ms  10.0%", "main  a.c:7");
	EXPECT_ROW("start", "600.0 ms  60.0%", "hot  a.c:11");
	EXPECT_NO_ROW("start", "cold  a.c:21");
	CHECK(selected_has("run"));
	/* The status line: the full name of the selection. */
	CHECK(ROW("run  a.c:41", "? keys") != NULL);

	/* Down: main:5, open on hot. */
	key(v, VIEW_KEY_DOWN);
	draw(v);
	EXPECT_ROW("expanded", "600.0 ms  60.0%", "hot  a.c:11");
	CHECK(selected_has("main  a.c:5"));

	/* u: samples (the other unit), every figure again, both totals above. */
	keys(v, "u");
	draw(v);
	EXPECT_ROW("after u", "weight 1000 = 1.000 s of CPU", "by samples");
	EXPECT_ROW("after u", "600  60.0%", "hot  a.c:11");
	EXPECT_ROW("after u", "1000 100.0%", "run");
	keys(v, "u");
	draw(v);
	EXPECT_ROW("u again", "600.0 ms  60.0%", "hot");

	/* s: self cost per line, largest first. */
	keys(v, "s");
	draw(v);
	EXPECT_ROW("after s", "flat");
	EXPECT_ROW("after s", "600.0 ms  60.0%", "hot  a.c:11");
	EXPECT_ROW("after s", "300.0 ms  30.0%", "cold  a.c:21");
	EXPECT_ROW("after s", "100.0 ms  10.0%", "main::\xce\xbb#1  a.c:31");
	EXPECT_NO_ROW("after s", "run  a.c");
	CHECK(selected_has("hot"));
	keys(v, "s");
	draw(v);
	CHECK(selected_has("main  a.c:5"));

	/* Expanding main:7 shows the lambda shortened; its full name in the status line. */
	key(v, VIEW_KEY_DOWN);
	key(v, VIEW_KEY_DOWN);
	key(v, VIEW_KEY_DOWN);
	key(v, VIEW_KEY_ENTER);
	key(v, VIEW_KEY_DOWN);
	draw(v);
	EXPECT_ROW("lambda", "100.0 ms  10.0%", "main::\xce\xbb#1  a.c:31");
	EXPECT_ROW("lambda status", "main::{lambda(int)#1}::operator()  a.c:31");

	/* Enter on a frame without callees opens its source, at the line, heat column
	 * (on a screen where all 45 lines fit). */
	key(v, VIEW_KEY_ENTER);
	view_screen_free(&screen);
	view_screen_init(&screen, 60, 100, 1);
	draw(v);
	EXPECT_ROW("source", "source");
	EXPECT_ROW("source", "a.c: 1.000 s (100.0%)");
	EXPECT_ROW("source", "31", "100.0 ms  10.0%", "line 31 of a.c");
	EXPECT_ROW("source", "11", "600.0 ms  60.0%", "line 11 of a.c");
	EXPECT_ROW("source", "21", "300.0 ms  30.0%", "line 21 of a.c");
	EXPECT_ROW("source clean callers", " 5 ", "line 5 of a.c");
	EXPECT_NO_ROW("source clean callers", "ms", "line 5 of a.c");
	EXPECT_NO_ROW("source clean callers", "ms", "line 41 of a.c");
	CHECK(selected_has("line 31 of a.c"));
	/* The heat: line 11 is the hottest (heat 4), line 31 a sixth of it (heat 2). */
	for (int y = 0; y < screen.rows; y++) {
		char line[8192];
		view_screen_line(&screen, y, line, sizeof(line));
		if (strstr(line, "line 11 of a.c"))
			CHECK(screen.cells[(size_t)y * (size_t)screen.cols + 10].attr == VA_HEAT4);
	}
	keys(v, "n"); /* the next costly line after 31: wraps to 11 */
	draw(v);
	CHECK(selected_has("line 11 of a.c"));
	keys(v, "q");
	view_screen_free(&screen);
	view_screen_init(&screen, 30, 100, 1);
	draw(v);
	EXPECT_ROW("back", "tree");

	/* t: the picker lists both threads; the second alone. */
	keys(v, "t");
	draw(v);
	EXPECT_ROW("threads", "1.000 s 100.0%  all threads");
	EXPECT_ROW("threads", "700.0 ms  70.0%", "thread 7 (main)");
	EXPECT_ROW("threads", "300.0 ms  30.0%", "thread 8 (worker)");
	key(v, VIEW_KEY_DOWN);
	key(v, VIEW_KEY_DOWN);
	key(v, VIEW_KEY_ENTER);
	draw(v);
	EXPECT_ROW("thread 8", "8 (worker) | tree");
	EXPECT_ROW("thread 8", "weight 300 = 300.0 ms of CPU");
	EXPECT_ROW("thread 8", "200.0 ms  66.7%", "main  a.c:5");
	EXPECT_ROW("thread 8", "100.0 ms  33.3%", "main  a.c:7");
	EXPECT_NO_ROW("thread 8", "main  a.c:6");
	keys(v, "t");
	key(v, VIEW_KEY_HOME);
	key(v, VIEW_KEY_ENTER);
	draw(v);
	EXPECT_ROW("all again", "300.0 ms  30.0%", "main  a.c:6");

	/* f: a noisefloor of 4 hides main:7 (100 < floor(4 sqrt 1000) = 126), min 400 main:6 too. */
	keys(v, "f4\r");
	key(v, VIEW_KEY_ENTER);
	draw(v);
	EXPECT_ROW("noisefloor", "noisefloor 4");
	EXPECT_ROW("noisefloor", "main  a.c:6");
	EXPECT_NO_ROW("noisefloor", "main  a.c:7");
	keys(v, "f");
	keys(v, "min 400");
	key(v, VIEW_KEY_ENTER);
	draw(v);
	EXPECT_NO_ROW("min", "main  a.c:6");
	EXPECT_ROW("min", "main  a.c:5");
	keys(v, "f");
	keys(v, "bogus");
	key(v, VIEW_KEY_ENTER);
	draw(v);
	EXPECT_ROW("bad filter", "f wants a noisefloor");
	keys(v, "f");
	keys(v, "off");
	key(v, VIEW_KEY_ENTER);
	draw(v);
	EXPECT_ROW("off", "main  a.c:7");

	/* / and n: cold is found below a collapsed main:6, which opens. */
	keys(v, "/cold");
	draw(v);
	EXPECT_ROW("typing", "/cold");
	key(v, VIEW_KEY_ENTER);
	draw(v);
	CHECK(selected_has("cold  a.c:21"));
	keys(v, "/m");
	key(v, VIEW_KEY_ENTER);
	keys(v, "nnn");
	draw(v);
	CHECK(selected_has("main"));
	keys(v, "/nothing-has-this");
	key(v, VIEW_KEY_ENTER);
	draw(v);
	EXPECT_ROW("no match", "no function shown matches 'nothing-has-this'");

	/* L on a CPU trace says why not; ? shows the keys; q quits. */
	keys(v, "L");
	draw(v);
	EXPECT_ROW("L", "leaks and peak are views of allocation traces");
	keys(v, "?");
	draw(v);
	EXPECT_ROW("help", "keys (any key closes)");
	keys(v, "x");
	draw(v);
	EXPECT_NO_ROW("help closed", "keys (any key closes)");
	CHECK(view_key(v, 'q') == 1);

	/* The flame strip of run: its callees side by side by their share. */
	struct view_flame_box boxes[64];
	uint32_t n = view_flame_layout(v, v->data[0].t->nodes[v->data[0].child_list[0]].parent == 0 ? v->data[0].child_list[0] : 0,
				       100, 3, boxes, 64);
	CHECKF(n == 7, "%u boxes", n);
	int widths[3] = {0};
	for (uint32_t i = 0; i < n; i++)
		if (boxes[i].level == 1)
			widths[boxes[i].x == 0 ? 0 : boxes[i].x == 60 ? 1 : 2] = boxes[i].w;
	CHECKF(widths[0] == 60 && widths[1] == 30 && widths[2] == 10, "%d %d %d", widths[0], widths[1], widths[2]);
	view_free(v);
}

static void test_names(void)
{
	static const struct {
		const char *in;
		int utf8;
		const char *out;
	} cases[] = {
		{"main::{lambda(int)#1}::operator()", 1, "main::\xce\xbb#1"},
		{"main::{lambda(int)#1}", 1, "main::\xce\xbb#1"},
		{"main::{lambda(int)#1}", 0, "main::lambda#1"},
		{"std::_Function_handler<void (), main::{lambda()#2}>::_M_invoke", 1,
		 "std::_Function_handler<void (), main::\xce\xbb#2>::_M_invoke"},
		{"f::{lambda(std::vector<int, std::allocator<int> > const&)#3}::operator() const", 1, "f::\xce\xbb#3"},
		{"main::main::{closure#0}", 1, "main::main::\xce\xbb#0"},
		{"rust_workload::main::{{closure}}", 1, "rust_workload::main::\xce\xbb"},
		{"std::function<void ()>::operator()", 1, "std::function<void ()>::operator()"},
		{"{lambda(int", 1, "{lambda(int"},
		{"evil\x1b[31mred", 1, "evil\\e[31mred"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[512];
		view_short_name(cases[i].in, cases[i].utf8, buf, sizeof(buf));
		CHECKF(!strcmp(buf, cases[i].out), "'%s' -> '%s', want '%s'", cases[i].in, buf, cases[i].out);
	}
}

/* A profile whose names would drive a terminal: nothing of them reaches a cell as a control character. */
/* A trace of two programs: the picker names each process's program, not only its pid. */
static void test_processes(void)
{
	struct profile *p = build_cpu_profile(1000000);
	struct profile_module m = {.path = profile_intern(p, "/x")};
	profile_add_module(p, &m);
	struct profile_thread t1 = {.pid = 11, .tid = 11, .name = profile_intern(p, "cc1"),
				    .command = profile_intern(p, "cc1")};
	struct profile_thread t2 = {.pid = 12, .tid = 12, .name = profile_intern(p, "as"),
				    .command = profile_intern(p, "as")};
	profile_add_thread(p, &t1);
	profile_add_thread(p, &t2);
	uint32_t f = build_function(p, "main", "/x.c", 1, 0, 0), l = 3;
	int loc = (int)build_location(p, 0x10, 0, &f, &l, 1);
	uint32_t s = build_stack(p, (int[]){loc, -1});
	build_weighted_sample(p, s, 0, 0, 30);
	build_weighted_sample(p, s, 1, 0, 10);
	struct view *v = new_view(p);
	keys(v, "t");
	draw(v);
	EXPECT_ROW("processes", "30.0 ms  75.0%  process 11 (cc1)");
	EXPECT_ROW("processes", "10.0 ms  25.0%  process 12 (as)");
	key(v, VIEW_KEY_DOWN);
	key(v, VIEW_KEY_ENTER);
	draw(v);
	EXPECT_ROW("process 11", "process 11 (cc1) | tree");
	view_free(v);
}

static void test_hostile_and_sizes(void)
{
	struct profile *p = build_cpu_profile(1000000);
	struct profile_module m = {.path = profile_intern(p, "/x")};
	profile_add_module(p, &m);
	struct profile_thread t = {.pid = 1, .tid = 1, .name = profile_intern(p, "\x1b]0;pwned\x07")};
	profile_add_thread(p, &t);
	p->command = profile_intern(p, "\x1b[2J\x9b" "31m");
	uint32_t f = build_function(p, "\x1b[31mevil\r\n\x7f\xc2\x9b", "/tmp/\x1b[1mx.c", 1, 0, 0), l = 3;
	int loc = (int)build_location(p, 0x10, 0, &f, &l, 1);
	build_weighted_sample(p, build_stack(p, (int[]){loc, -1}), 0, 0, 5);
	struct view *v = new_view(p);
	static const int sizes[][2] = {{80, 24}, {200, 60}, {40, 16}, {30, 6}, {10, 3}, {1, 1}};
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		view_screen_free(&screen);
		view_screen_init(&screen, sizes[k][1], sizes[k][0], 1);
		keys(v, "t");
		draw(v);
		keys(v, "q");
		keys(v, "o");
		draw(v);
		keys(v, "q");
		draw(v);
		for (size_t i = 0; i < (size_t)screen.rows * (size_t)screen.cols; i++) {
			uint32_t c = screen.cells[i].ch;
			CHECKF(c == 0 || (c >= 0x20 && c != 0x7f && !(c >= 0x80 && c < 0xa0)), "control U+%04X at %zu",
			       c, i);
		}
	}
	/* 80x24: the status line is the last, the flame strip above it. */
	view_screen_free(&screen);
	view_screen_init(&screen, 24, 80, 1);
	draw(v);
	char line[4096];
	CHECK(strstr(view_screen_line(&screen, 23, line, sizeof(line)), "? keys  q quit") != NULL);
	CHECK(ROW("flame graph") != NULL);
	CHECK(ROW("\\e[31mevil\\r\\n") != NULL);
	view_screen_free(&screen);
	view_screen_init(&screen, 5, 40, 1);
	draw(v);
	CHECK(ROW("too small") != NULL);
	/* Without UTF-8 only ASCII reaches the screen. */
	view_screen_free(&screen);
	view_screen_init(&screen, 30, 100, 0);
	draw(v);
	for (size_t i = 0; i < (size_t)screen.rows * (size_t)screen.cols; i++)
		CHECKF(screen.cells[i].ch < 0x80, "non-ASCII U+%04X without UTF-8", screen.cells[i].ch);
	view_free(v);
	view_screen_free(&screen);
	view_screen_init(&screen, 30, 100, 1);

	/* No samples at all. */
	v = new_view(build_cpu_profile(1000000));
	draw(v);
	CHECK(ROW("No samples.") != NULL);
	keys(v, "s");
	draw(v);
	CHECK(ROW("No self costs.") != NULL);
	keys(v, "sujkeco/x\rnutLw?x");
	draw(v);
	view_free(v);
}

/* The viewer's flat rows and source costs come from the tree's nodes: they
 * must equal what flat_table_build and source_table_build make from the
 * stacks, recursion, inlined frames, leaves and a thread's zeros included. */
static void compare_tables(struct profile *p, const char *what)
{
	struct calltree *t = calltree_new(p, 1, CALLTREE_ALL_THREADS, 0);
	calltree_build_all_nodes(t);
	int64_t *stack = calloc(p->nstacks + 1, sizeof(*stack)), *incl = calloc(t->nnodes, sizeof(*incl));
	uint8_t mask[2] = {1, 0};
	for (uint32_t v = 0; v < p->nvalue_types; v++) {
		for (int masked = 0; masked < 2; masked++) {
			calltree_stack_sums(t, v, masked ? mask : NULL, stack);
			calltree_node_sums(t, stack, incl, NULL);
			for (int by_line = 0; by_line < 2; by_line++) {
				struct flat_table a, b;
				flat_table_build(&a, t, by_line, stack);
				flat_table_build_nodes(&b, t, by_line, stack, incl, NULL);
				uint8_t *topmost = flat_table_topmost(&b);
				struct flat_table c;
				flat_table_build_nodes(&c, t, by_line, stack, incl, topmost);
				for (uint32_t i = 0; i < c.nrows; i++)
					CHECK(c.rows[i].count == b.rows[i].count && c.rows[i].self == b.rows[i].self);
				flat_table_free(&c);
				free(topmost);
				CHECKF(a.nrows == b.nrows, "%s: %u rows, %u from nodes", what, a.nrows, b.nrows);
				for (uint32_t i = 0; i < a.nrows && i < b.nrows; i++)
					CHECKF(a.rows[i].count == b.rows[i].count && a.rows[i].self == b.rows[i].self,
					       "%s type %u by_line %d row %u: %lld/%lld, from nodes %lld/%lld", what, v, by_line,
					       i, (long long)a.rows[i].count, (long long)a.rows[i].self,
					       (long long)b.rows[i].count, (long long)b.rows[i].self);
				flat_table_free(&a);
				flat_table_free(&b);
			}
			const int64_t *values[1] = {stack};
			struct source_table all;
			source_table_build(&all, t, values, 1);
			for (uint32_t f = 0; f < all.nfiles; f++) {
				struct source_table one;
				source_table_build_file(&one, t, all.files[f].file, values, 1);
				CHECKF(one.nfiles == 1 && one.files[0].nlines == all.files[f].nlines &&
					       one.files[0].totals[0] == all.files[f].totals[0],
				       "%s: file %u", what, f);
				for (uint32_t l = 0; one.nfiles && l < one.files[0].nlines && l < all.files[f].nlines; l++)
					CHECK(one.files[0].lines[l].line == all.files[f].lines[l].line &&
					      source_line_value(&one, &one.files[0].lines[l], 0) ==
						      source_line_value(&all, &all.files[f].lines[l], 0));
				source_table_free(&one);
			}
			source_table_free(&all);
		}
	}
	free(stack);
	free(incl);
	calltree_free(t);
	profile_free(p);
}

static void test_tables_from_nodes(void)
{
	compare_tables(cpu_profile(), "cpu");
	compare_tables(build_alloc_workload(), "alloc");
	/* Recursion and inline chains: rec calls itself through an inlined helper. */
	struct profile *p = build_cpu_profile(1000000);
	struct profile_module m = {.path = profile_intern(p, "/x")};
	profile_add_module(p, &m);
	struct profile_thread t1 = {.pid = 1, .tid = 1}, t2 = {.pid = 1, .tid = 2};
	profile_add_thread(p, &t1);
	profile_add_thread(p, &t2);
	uint32_t f_rec = build_function(p, "rec", "r.c", 1, 0, 0), f_help = build_function(p, "help", "h.h", 1, 0, 0);
	uint32_t l2 = 2;
	int r2 = (int)build_location(p, 2, 0, &f_rec, &l2, 1);
	int r3 = (int)build_location(p, 3, 0, (uint32_t[]){f_help, f_rec}, (uint32_t[]){7, 3}, 2);
	build_weighted_sample(p, build_stack(p, (int[]){r2, r3, r2, r3, -1}), 0, 0, 5);
	build_weighted_sample(p, build_stack(p, (int[]){r2, r3, r2, -1}), 1, 0, 3);
	build_weighted_sample(p, build_stack(p, (int[]){r3, r3, r3, -1}), 0, 0, 2);
	build_weighted_sample(p, build_stack(p, (int[]){r2, -1}), 1, 0, 1);
	compare_tables(p, "recursive");
}

static void write_source(void)
{
	char dir[] = "/tmp/view_test.XXXXXX";
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		exit(1);
	}
	snprintf(source_path, sizeof(source_path), "%s/a.c", dir);
	FILE *f = fopen(source_path, "w");
	for (int i = 1; i <= 45; i++)
		fprintf(f, "\tline %d of a.c\n", i);
	fclose(f);
}

int main(void)
{
	setlocale(LC_CTYPE, "C.UTF-8");
	write_source();
	view_screen_init(&screen, 30, 100, 1);
	test_cpu();
	test_names();
	test_tables_from_nodes();
	test_processes();
	test_hostile_and_sizes();
	view_screen_free(&screen);
	unlink(source_path);
	*strrchr(source_path, '/') = '\0';
	rmdir(source_path);
	return check_exit_status();
}
