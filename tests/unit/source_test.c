/*
 * source_test.c - per-line costs (analyze/report/source.h) and analyze source's
 * output (render_source.c) on hand-built profiles with known answers: the
 * charging rule (innermost frame per file, callers clean, inlined frames in
 * their own file, a library's cost at the line of the call, recursion once),
 * file matching by suffix, reading sources (moved, missing, changed, FIFO,
 * control characters), the hot line first, TSV, and an allocation profile
 * whose allocating lines get their bytes and counts exactly.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "options.h"
#include "profile_builder.h"
#include "report.h"
#include "source.h"

#include "check.h"

static char dir[64];
static char a_path[256], util_path[256], other_path[256], binary_path[256];

static void write_lines(const char *path, int n, const char *eol)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	for (int i = 1; i <= n; i++)
		fprintf(f, "code of line %d%s", i, eol);
	fclose(f);
}

/*
 * Root first, weights in samples:
 *   main a.c:5  work a.c:12 [helper util.h:3 inlined]    500
 *   main a.c:6  memcpy string.c:40                       300
 *   main a.c:7  rec a.c:30  rec a.c:31                   200
 *   main a.c:8  other x/a.c:2                             10
 */
static struct profile *cpu_profile(void)
{
	struct profile *p = build_cpu_profile(1000000);
	struct profile_module m = {.path = profile_intern(p, binary_path)};
	profile_add_module(p, &m);
	struct profile_thread t = {.pid = 1, .tid = 1, .name = profile_intern(p, "t")};
	profile_add_thread(p, &t);
	p->command = profile_intern(p, "./t");
	uint32_t f_main = build_function(p, "main", a_path, 4, 0, 0);
	uint32_t f_work = build_function(p, "work", a_path, 10, 0, 0);
	uint32_t f_helper = build_function(p, "helper", util_path, 1, 0, 0);
	uint32_t f_memcpy = build_function(p, "memcpy", "/usr/src/glibc/string.c", 30, 0, 0);
	uint32_t f_rec = build_function(p, "rec", a_path, 29, 0, 0);
	uint32_t f_other = build_function(p, "other", other_path, 1, 0, 0);
	uint32_t l5 = 5, l6 = 6, l7 = 7, l8 = 8, l30 = 30, l31 = 31, l40 = 40, l2 = 2;
	int m5 = (int)build_location(p, 5, 0, &f_main, &l5, 1), m6 = (int)build_location(p, 6, 0, &f_main, &l6, 1);
	int m7 = (int)build_location(p, 7, 0, &f_main, &l7, 1), m8 = (int)build_location(p, 8, 0, &f_main, &l8, 1);
	int work = (int)build_location(p, 12, 0, (uint32_t[]){f_helper, f_work}, (uint32_t[]){3, 12}, 2);
	int cpy = (int)build_location(p, 40, 0, &f_memcpy, &l40, 1);
	int r30 = (int)build_location(p, 30, 0, &f_rec, &l30, 1), r31 = (int)build_location(p, 31, 0, &f_rec, &l31, 1);
	int other = (int)build_location(p, 2, 0, &f_other, &l2, 1);
	build_weighted_sample(p, build_stack(p, (int[]){m5, work, -1}), 0, 0, 500);
	build_weighted_sample(p, build_stack(p, (int[]){m6, cpy, -1}), 0, 0, 300);
	build_weighted_sample(p, build_stack(p, (int[]){m7, r30, r31, -1}), 0, 0, 200);
	build_weighted_sample(p, build_stack(p, (int[]){m8, other, -1}), 0, 0, 10);
	return p;
}

static int64_t line_value(const struct source_table *st, const char *file, uint32_t line, uint32_t k)
{
	for (uint32_t f = 0; f < st->nfiles; f++) {
		if (strcmp(profile_string(st->t->profile, st->files[f].file), file))
			continue;
		for (uint32_t i = 0; i < st->files[f].nlines; i++)
			if (st->files[f].lines[i].line == line)
				return source_line_value(st, &st->files[f].lines[i], k);
	}
	return 0;
}

static void test_table(void)
{
	struct profile *p = cpu_profile();
	struct calltree *t = calltree_new(p, 1, CALLTREE_ALL_THREADS, 0);
	const int64_t *values[1] = {t->stack_value};
	struct source_table st;
	source_table_build(&st, t, values, 1);
	CHECKF(line_value(&st, a_path, 12, 0) == 500, "work's line: %lld", (long long)line_value(&st, a_path, 12, 0));
	CHECK(line_value(&st, util_path, 3, 0) == 500);   /* the inlined helper in its own file */
	CHECK(line_value(&st, a_path, 5, 0) == 0);        /* main's call of work: clean */
	CHECK(line_value(&st, a_path, 6, 0) == 300);      /* the call into the library */
	CHECK(line_value(&st, "/usr/src/glibc/string.c", 40, 0) == 300);
	CHECK(line_value(&st, a_path, 31, 0) == 200);     /* recursion: the innermost once */
	CHECK(line_value(&st, a_path, 30, 0) == 0 && line_value(&st, a_path, 7, 0) == 0);
	CHECK(line_value(&st, a_path, 8, 0) == 10);
	CHECK(line_value(&st, other_path, 2, 0) == 10);
	uint32_t *order;
	uint32_t n = source_files_by_cost(&st, 0, &order);
	CHECK(n == 4);
	CHECK(!strcmp(profile_string(p, st.files[order[0]].file), a_path) && st.files[order[0]].totals[0] == 1010);
	CHECK(!strcmp(profile_string(p, st.files[order[1]].file), util_path) && st.files[order[1]].totals[0] == 500);
	free(order);
	/* FILE by suffix at a path component. */
	uint32_t found[4];
	CHECK(source_match_file(&st, "a.c", found, 4) == 2);
	CHECK(source_match_file(&st, "src/a.c", found, 4) == 1 && st.files[found[0]].file == profile_intern(p, a_path));
	CHECK(source_match_file(&st, a_path, found, 4) == 1);
	CHECK(source_match_file(&st, "rc/a.c", found, 4) == 0);
	CHECK(source_match_file(&st, "string.c", found, 4) == 1);
	CHECK(source_match_file(&st, "", found, 4) == 0);
	source_table_free(&st);
	calltree_free(t);
	profile_free(p);
}

static void test_text(void)
{
	struct source_text tx;
	char moved[256], fifo[256];
	/* At its recorded path; then the binary older than the source: a note. */
	source_text_load(&tx, a_path, binary_path, NULL, 0, 40);
	CHECKF(tx.path && tx.nlines == 45 && !tx.note[0], "note: %s", tx.note);
	size_t len;
	const char *l12 = source_text_line(&tx, 12, &len);
	CHECK(l12 && len == strlen("code of line 12") && !strncmp(l12, "code of line 12", len));
	CHECK(source_text_line(&tx, 46, &len) == NULL && source_text_line(&tx, 0, &len) == NULL);
	source_text_free(&tx);
	struct timespec old[2] = {{1000000000, 0}, {1000000000, 0}};
	utimensat(AT_FDCWD, binary_path, old, 0);
	source_text_load(&tx, a_path, binary_path, NULL, 0, 40);
	CHECKF(strstr(tx.note, "was modified after") && strstr(tx.note, binary_path), "note: %s", tx.note);
	source_text_free(&tx);
	/* Fewer lines than the costs name. */
	source_text_load(&tx, a_path, NULL, NULL, 0, 50);
	CHECKF(strstr(tx.note, "has 45 lines but the costs name line 50"), "note: %s", tx.note);
	source_text_free(&tx);
	/* Moved: found under --search-dir by a tail of the recorded path. */
	snprintf(moved, sizeof(moved), "/nonexistent/build/tree/src/a.c");
	const char *dirs[1] = {dir};
	source_text_load(&tx, moved, binary_path, dirs, 1, 40);
	CHECKF(tx.path && strstr(tx.path, "/src/a.c") && !tx.note[0], "path %s note %s", tx.path ? tx.path : "-", tx.note);
	source_text_free(&tx);
	/* Missing: a note, no path. */
	source_text_load(&tx, "/nonexistent/q.c", NULL, dirs, 1, 1);
	CHECKF(!tx.path && strstr(tx.note, "source file not found: /nonexistent/q.c (nor under the --search-dir"),
	       "note: %s", tx.note);
	source_text_free(&tx);
	/* A FIFO is never opened for reading (it would block). */
	snprintf(fifo, sizeof(fifo), "%s/fifo.c", dir);
	CHECK(mkfifo(fifo, 0600) == 0);
	source_text_load(&tx, fifo, NULL, NULL, 0, 1);
	CHECKF(!tx.path && strstr(tx.note, "not a regular file"), "note: %s", tx.note);
	source_text_free(&tx);
	unlink(fifo);
	/* A path with an escape sequence is escaped in the note. */
	source_text_load(&tx, "/nonexistent/\x1b[2Jx.c", NULL, NULL, 0, 1);
	CHECKF(!strchr(tx.note, '\x1b') && strstr(tx.note, "\\e[2Jx.c"), "note: %s", tx.note);
	source_text_free(&tx);
	/* Code made printable: tabs to stops of 8, control characters escaped, CRLF cut. */
	char buf[256];
	CHECK(!strcmp(source_printable("\tx\x1b[31m", 7, buf, sizeof(buf)), "        x\\e[31m"));
	CHECK(!strcmp(source_printable("ab\tc", 4, buf, sizeof(buf)), "ab      c"));
	CHECK(!strcmp(source_printable("a\0b", 3, buf, sizeof(buf)), "a\\x00b"));
	char crlf[256];
	snprintf(crlf, sizeof(crlf), "%s/crlf.c", dir);
	write_lines(crlf, 3, "\r\n");
	source_text_load(&tx, crlf, NULL, NULL, 0, 3);
	const char *l2 = source_text_line(&tx, 2, &len);
	CHECK(tx.nlines == 3 && l2 && len == strlen("code of line 2"));
	source_text_free(&tx);
	unlink(crlf);
}

/* analyze source's output of p (value type value) into a string; rc and err. */
static char *report(const struct profile *p, uint32_t value, const struct source_options *so, int *rc, char *err,
		    size_t errlen)
{
	struct analyze_options o;
	memset(&o, 0, sizeof(o));
	load_options_init(&o.load);
	o.combine = 1;
	o.filter.show_system = 1;
	struct source_options named = *so;
	named.trace = "t.zst";
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct report r;
	report_init(&r, out, p, &o, value);
	*rc = source_report(&r, &named, err, errlen);
	fclose(out);
	return buf;
}

static void test_report(void)
{
	struct profile *p = cpu_profile();
	uint32_t cpu = profile_find_value_type(p, "cpu");
	char err[1024];
	int rc;
	/* The whole file: every line, the cost between number and code. */
	struct source_options so = {.file = "src/a.c", .files = 5, .top = 5, .context = 2};
	char *out = report(p, cpu, &so, &rc, err, sizeof(err));
	CHECK(rc == 0);
	CHECKF(strstr(out, "a.c: 1.010 s (100.0% of cpu)"), "%s", out);
	CHECKF(strstr(out, "  12 500.0 ms  49.5% │ code of line 12\n"), "%s", out);
	CHECKF(strstr(out, "   5                 │ code of line 5\n"), "%s", out);
	CHECKF(strstr(out, "  31 200.0 ms  19.8% │ code of line 31\n"), "%s", out);
	CHECK(strstr(out, "  45                 │ code of line 45\n") != NULL);
	free(out);
	/* Without FILE: files by cost, then the hot line's hunk first. */
	so.file = NULL;
	out = report(p, cpu, &so, &rc, err, sizeof(err));
	CHECK(rc == 0);
	const char *list = strstr(out, "Files by cpu");
	const char *a = strstr(out, a_path), *u = strstr(out, util_path);
	CHECKF(list && a && u && a < u, "%s", out);
	const char *hot = strstr(out, "  12 500.0 ms"), *warm = strstr(out, "  31 200.0 ms");
	CHECKF(hot && warm && hot < warm, "hot line first:\n%s", out);
	CHECKF(strstr(out, "\n ...\n") != NULL, "hunks apart:\n%s", out);
	CHECKF(!strstr(out, "code of line 20\n"), "no line outside the context:\n%s", out);
	free(out);
	/* Errors about FILE: nothing printed, a message. */
	so.file = "a.c";
	out = report(p, cpu, &so, &rc, err, sizeof(err));
	CHECKF(rc < 0 && strstr(err, "'a.c' matches 2 source files of t.zst") && !*out, "%s", err);
	free(out);
	so.file = "nope.c";
	out = report(p, cpu, &so, &rc, err, sizeof(err));
	CHECKF(rc < 0 && strstr(err, "no source file of t.zst ends with 'nope.c'"), "%s", err);
	free(out);
	/* TSV: every type, raw. */
	so.file = "util.h";
	so.format = SOURCE_FORMAT_TSV;
	out = report(p, 0, &so, &rc, err, sizeof(err));
	char want[512];
	snprintf(want, sizeof(want), "file\tline\tsamples\tcpu\n%s\t3\t500\t500000000\n", util_path);
	CHECKF(rc == 0 && !strcmp(out, want), "%s", out);
	free(out);
	profile_free(p);
}

static void test_alloc(void)
{
	struct profile *p = build_alloc_workload();
	uint32_t space = profile_find_value_type(p, "alloc_space");
	char err[1024];
	int rc;
	/* Every type at the allocating lines, exactly: bytes, counts, still live. */
	struct source_options so = {.files = 5, .top = 5, .context = 2, .format = SOURCE_FORMAT_TSV};
	char *out = report(p, space, &so, &rc, err, sizeof(err));
	CHECKF(rc == 0 && !strcmp(out, "file\tline\talloc_space\talloc_objects\tinuse_objects\tinuse_space\t"
				      "peak_objects\tpeak_space\ttemporary_objects\ttemporary_space\n"
				      "app.c\t11\t3200\t100\t40\t1280\t100\t3200\t0\t0\n"
				      "app.c\t21\t3145728\t3\t1\t1048576\t3\t3145728\t0\t0\n"),
	       "%s", out);
	free(out);
	so.format = SOURCE_FORMAT_TEXT;
	so.file = "app.c";
	out = report(p, profile_find_value_type(p, "alloc_objects"), &so, &rc, err, sizeof(err));
	CHECKF(strstr(out, "source file not found: app.c") && strstr(out, "costs by line number only"), "%s", out);
	CHECKF(strstr(out, "  11  100  97.1% │ \n") && strstr(out, "  21    3   2.9% │ \n"), "%s", out);
	free(out);
	/* flat charges what was allocated to the allocating frame; the leaves are no rows. */
	struct analyze_options o;
	memset(&o, 0, sizeof(o));
	o.combine = 1;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct report r;
	report_init(&r, f, p, &o, space);
	struct flat_options fo = {.sort = FLAT_SORT_SELF, .format = FLAT_FORMAT_TSV};
	flat_report(&r, &fo);
	fclose(f);
	CHECKF(strstr(buf, "3145728\t3145728\tapp.c\t20\tmake_big\t") && strstr(buf, "3200\t3200\tapp.c\t10\tmake_small\t") &&
		       !strstr(buf, "malloc 32 B"),
	       "%s", buf);
	free(buf);
	profile_free(p);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/source_test.XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	char src[128], x[128];
	snprintf(src, sizeof(src), "%s/src", dir);
	snprintf(x, sizeof(x), "%s/x", dir);
	mkdir(src, 0700);
	mkdir(x, 0700);
	snprintf(a_path, sizeof(a_path), "%s/a.c", src);
	snprintf(util_path, sizeof(util_path), "%s/util.h", src);
	snprintf(other_path, sizeof(other_path), "%s/a.c", x);
	snprintf(binary_path, sizeof(binary_path), "%s/t", dir);
	write_lines(a_path, 45, "\n");
	write_lines(util_path, 5, "\n");
	write_lines(other_path, 3, "\n");
	write_lines(binary_path, 1, "\n");
	test_table();
	test_text();
	test_report();
	test_alloc();
	unlink(a_path);
	unlink(util_path);
	unlink(other_path);
	unlink(binary_path);
	rmdir(src);
	rmdir(x);
	rmdir(dir);
	return check_exit_status();
}
