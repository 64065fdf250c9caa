/*
 * diff_test.c - analyze diff (analyze/diff/diff.c, render_diff.c) on hand-built
 * profiles (profile_builder.h):
 *  - a 70/30 run against a 30/70 one: -40/+40 points, both significant, in
 *    tree, flat, TSV and folded; a profile against itself: every delta 0;
 *  - the display filters judge each run on its own (a row shows when either
 *    run would show it);
 *  - matching by name: other addresses and string ids change nothing; a
 *    renamed function or one moved to another module is removed + added;
 *  - the noise test's error rate on synthetic multinomial runs of one
 *    program: uncorrected p-values are calibrated (about 5% below 0.05) and
 *    Holm keeps the share of pairs with ANY significant row below
 *    1 - confidence; a real change of a few points is found;
 *  - exact allocation profiles (bytes): the diff equals the known
 *    difference exactly and every change is significant (built by hand;
 *    e2e_alloc_sampled does it on real traces);
 *  - value types: which one is compared, none in common is refused;
 *  - the exports of a diff profile: folded "stack base new", pprof's
 *    pprof::base labels and negated values, speedscope's two runs.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "diff.h"
#include "export.h"
#include "options.h"
#include "profile.pb-c.h"
#include "profile_builder.h"
#include "report.h"

#include "check.h"

/* ---- profiles ---- */

/*
 * A run of "app" (module path and address bias vary, as across builds):
 *   main -> mid_j -> leaf_i   for 20 leaves under 4 mids, weights[i]
 * names_first interns unrelated strings first so string ids differ.
 */
#define NLEAVES 20
static struct profile *tree_run(const int64_t *weights, uint64_t bias, int names_first)
{
	struct profile *p = build_cpu_profile(1000000);
	if (names_first)
		profile_intern(p, "unrelated");
	p->command = profile_intern(p, "./app --run");
	struct profile_module m = {.path = profile_intern(p, bias ? "/opt/v2/app" : "/opt/v1/app")};
	profile_add_module(p, &m);
	struct profile_thread t = {.pid = 9, .tid = 9, .name = profile_intern(p, "app")};
	profile_add_thread(p, &t);
	uint32_t f_main = build_function(p, "main", "app.c", 1, 0, 0), l1 = 3;
	int main_loc = (int)build_location(p, bias + 0x100, 0, &f_main, &l1, 1);
	int mids[4];
	for (int j = 0; j < 4; j++) {
		char name[16];
		snprintf(name, sizeof(name), "mid%d", j);
		uint32_t f = build_function(p, name, "app.c", 10 + (uint32_t)j, 0, 0), l = 11;
		mids[j] = (int)build_location(p, bias + 0x200 + 16 * (uint64_t)j, 0, &f, &l, 1);
	}
	for (int i = 0; i < NLEAVES; i++) {
		char name[16];
		snprintf(name, sizeof(name), "leaf%02d", i);
		uint32_t f = build_function(p, name, "leaf.c", 100 + (uint32_t)i, 0, 0), l = 101;
		int leaf = (int)build_location(p, bias + 0x1000 + 16 * (uint64_t)i, 0, &f, &l, 1);
		uint32_t stack = build_stack(p, (int[]){main_loc, mids[i / 5], leaf, -1});
		if (weights[i])
			build_weighted_sample(p, stack, 0, 0, weights[i]);
	}
	return p;
}

/* main -> heavy (h) and main -> light (l), one sample each. */
static struct profile *split_run(int64_t h, int64_t l, const char *heavy_name, const char *module)
{
	struct profile *p = build_cpu_profile(1000000);
	p->command = profile_intern(p, "./split");
	struct profile_module app = {.path = profile_intern(p, "/bin/split")};
	struct profile_module lib = {.path = profile_intern(p, module ? module : "/lib/libother.so")};
	profile_add_module(p, &app);
	profile_add_module(p, &lib);
	struct profile_thread t = {.pid = 1, .tid = 1, .name = profile_intern(p, "split")};
	profile_add_thread(p, &t);
	uint32_t f_main = build_function(p, "main", "split.c", 1, 0, 0);
	uint32_t f_heavy = build_function(p, heavy_name, "split.c", 10, module ? 1 : 0, 0);
	uint32_t f_light = build_function(p, "light", "split.c", 20, 0, 0);
	uint32_t l2 = 2, l3 = 3, l11 = 11, l21 = 21;
	int m2 = (int)build_location(p, 0x10, 0, &f_main, &l2, 1);
	int m3 = (int)build_location(p, 0x14, 0, &f_main, &l3, 1);
	int hv = (int)build_location(p, 0x20, module ? 1 : 0, &f_heavy, &l11, 1);
	int lt = (int)build_location(p, 0x30, 0, &f_light, &l21, 1);
	build_weighted_sample(p, build_stack(p, (int[]){m2, hv, -1}), 0, 1, h);
	build_weighted_sample(p, build_stack(p, (int[]){m3, lt, -1}), 0, 2, l);
	return p;
}

/* An exact allocation run: main -> grow (n blocks of size) and main -> keep (one block of 4096). */
static struct profile *alloc_run(int64_t n, int64_t size)
{
	struct profile *p = profile_new();
	profile_add_value_type(p, "alloc_objects", "count");
	profile_add_value_type(p, "alloc_space", "bytes");
	p->default_value = 1;
	p->exact = 1;
	p->ended = 1;
	p->command = profile_intern(p, "./alloc");
	struct profile_module m = {.path = profile_intern(p, "/bin/alloc")};
	profile_add_module(p, &m);
	struct profile_thread t = {.pid = 1, .tid = 1, .name = profile_intern(p, "alloc")};
	profile_add_thread(p, &t);
	uint32_t f_main = build_function(p, "main", "a.c", 1, 0, 0);
	uint32_t f_grow = build_function(p, "grow", "a.c", 10, 0, 0);
	uint32_t f_keep = build_function(p, "keep", "a.c", 20, 0, 0);
	uint32_t l2 = 2, l3 = 3, l11 = 11, l21 = 21;
	int m2 = (int)build_location(p, 0x10, 0, &f_main, &l2, 1);
	int m3 = (int)build_location(p, 0x14, 0, &f_main, &l3, 1);
	int g = (int)build_location(p, 0x20, 0, &f_grow, &l11, 1);
	int k = (int)build_location(p, 0x30, 0, &f_keep, &l21, 1);
	build_sample(p, build_stack(p, (int[]){m2, g, -1}), 0, 0, (int64_t[]){n, n * size});
	build_sample(p, build_stack(p, (int[]){m3, k, -1}), 0, 0, (int64_t[]){1, 4096});
	return p;
}

/* ---- running a diff ---- */

struct run_opts {
	int normalize;
	double confidence;
	const char *value;
	int lines;
};

static const struct run_opts defaults = {1, 0.99, NULL, 0};

static int build(struct diff *d, const struct profile *b, const struct profile *n, const struct run_opts *ro,
		 char *err, size_t errlen)
{
	struct diff_options o = {.value_name = ro->value, .lines = ro->lines, .normalize = ro->normalize,
				 .confidence = ro->confidence};
	return diff_build(d, b, "base.zst", n, "new.zst", &o, err, errlen);
}

static char *render_with(const struct diff *d, const struct diff_view *v, const struct analyze_options *o);

static char *render(const struct diff *d, const struct diff_view *v, int lines)
{
	struct analyze_options o;
	memset(&o, 0, sizeof(o));
	load_options_init(&o.load);
	o.combine = 1;
	o.lines = lines;
	return render_with(d, v, &o);
}

static char *render_with(const struct diff *d, const struct diff_view *v, const struct analyze_options *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct report r;
	report_init(&r, out, d->p, o, DIFF_VALUE);
	diff_report(&r, d, v);
	fclose(out);
	/* A copy: gcc -O3 takes a pointer into what open_memstream filled for
	 * one into the local variable itself (-Wdangling-pointer). */
	char *text = strdup(buf);
	free(buf);
	return text;
}

static char *diff_text(const struct profile *b, const struct profile *n, const struct run_opts *ro,
		       const struct diff_view *v)
{
	struct diff d;
	char err[512];
	if (build(&d, b, n, ro, err, sizeof(err))) {
		CHECKF(0, "diff_build: %s", err);
		return strdup("");
	}
	char *out = render(&d, v, ro->lines);
	diff_free(&d);
	return out;
}

/* The line of text holding word between blanks (a function's row), or NULL. */
static const char *row_of(const char *text, const char *word, char *buf, size_t len)
{
	size_t w = strlen(word);
	for (const char *s = text; s && *s;) {
		const char *end = strchr(s, '\n');
		size_t l = end ? (size_t)(end - s) : strlen(s);
		for (size_t i = 1; i + w <= l; i++) {
			char after = i + w < l ? s[i + w] : ' ';
			if ((s[i - 1] == ' ' || s[i - 1] == '\t') && !memcmp(s + i, word, w) &&
			    (after == ' ' || after == '\t')) {
				snprintf(buf, len, "%.*s", (int)l, s);
				return buf;
			}
		}
		s = end ? end + 1 : NULL;
	}
	return NULL;
}

/* Count of rows with TSV significant = 1 (field 7). */
static int significant_rows(const char *tsv, int *rows)
{
	int n = 0, r = 0;
	const char *s = strchr(tsv, '\n');
	while (s && s[1]) {
		s++;
		const char *f = s;
		for (int i = 0; i < 6 && f; i++)
			f = strchr(f, '\t') ? strchr(f, '\t') + 1 : NULL;
		if (f && *f == '1')
			n++;
		r++;
		s = strchr(s, '\n');
	}
	if (rows)
		*rows = r;
	return n;
}

/* Every TSV row's delta (field 3) is 0 and its base equals its new. */
static int all_deltas_zero(const char *tsv)
{
	for (const char *s = strchr(tsv, '\n'); s && s[1]; s = strchr(s + 1, '\n')) {
		long long base, new, delta;
		if (sscanf(s + 1, "%lld\t%lld\t%lld\t", &base, &new, &delta) != 3 || delta || base != new)
			return 0;
	}
	return 1;
}

/* ---- tests ---- */

static void test_split(void)
{
	struct profile *b = split_run(700, 300, "heavy", NULL), *n = split_run(300, 700, "heavy", NULL);
	struct diff_view tree = {0}, flat = {.flat = 1}, tsv = {.tsv = 1};
	char *out = diff_text(b, n, &defaults, &tree), buf[512];
	const char *heavy = row_of(out, "heavy", buf, sizeof(buf));
	CHECKF(heavy && strstr(heavy, " 700  300  -400  -40.0% * ╎ split.c:?; heavy"), "tree:\n%s", out);
	CHECKF(row_of(out, "light", buf, sizeof(buf)) && strstr(buf, "+400  +40.0% * "), "tree:\n%s", out);
	CHECKF(row_of(out, "main", buf, sizeof(buf)) && strstr(buf, "0.0% = "), "tree:\n%s", out);
	CHECKF(strstr(out, "Noise:  two-proportion z-test on the samples behind each row, Holm-Bonferroni over 3 "
			   "rows,\n        99% confidence: 2 beyond sampling noise") != NULL, "header:\n%s", out);
	free(out);
	out = diff_text(b, n, &defaults, &flat);
	CHECKF(row_of(out, "heavy", buf, sizeof(buf)) && strstr(buf, "-40.0% * split.c"), "flat:\n%s", out);
	/* Sorted by the size of the change: main (0) last. */
	CHECKF(strstr(out, "heavy") < strstr(out, " main\n"), "flat order:\n%s", out);
	free(out);
	out = diff_text(b, n, &defaults, &tsv);
	CHECKF(row_of(out, "heavy", buf, sizeof(buf)) && !strncmp(buf, "700\t300\t-400\t-40.0000\t", 22), "tsv:\n%s", out);
	int rows;
	CHECK(significant_rows(out, &rows) == 2 && rows == 3);
	free(out);

	/* --significant hides main (unchanged); in the tree it stays as the caller. */
	struct diff_view sig = {.flat = 1, .significant_only = 1};
	out = diff_text(b, n, &defaults, &sig);
	CHECKF(!row_of(out, "main", buf, sizeof(buf)) && row_of(out, "light", buf, sizeof(buf)), "--significant:\n%s", out);
	free(out);
	sig.flat = 0;
	out = diff_text(b, n, &defaults, &sig);
	CHECKF(row_of(out, "main", buf, sizeof(buf)), "--significant tree keeps callers:\n%s", out);
	free(out);

	/* Normalised: a new run twice as long with the same split changes nothing. */
	struct profile *twice = split_run(1400, 600, "heavy", NULL);
	out = diff_text(b, twice, &defaults, &tsv);
	CHECKF(significant_rows(out, NULL) == 0 && strstr(out, "700\t700\t0\t") != NULL, "normalised:\n%s", out);
	free(out);
	struct run_opts raw = defaults;
	raw.normalize = 0;
	out = diff_text(b, twice, &raw, &tsv);
	CHECKF(row_of(out, "heavy", buf, sizeof(buf)) && !strncmp(buf, "700\t1400\t700\t70.0000\t", 21), "raw:\n%s", out);
	CHECKF(significant_rows(out, NULL) == 3, "raw: all three grew:\n%s", out);
	free(out);
	profile_free(twice);

	/* Folded: "stack base new" lines. */
	struct diff d;
	char err[256];
	CHECK(build(&d, b, n, &defaults, err, sizeof(err)) == 0);
	struct export_options eo = {.value = DIFF_VALUE};
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);
	CHECK(export_folded(d.p, &eo, f) == 0);
	fclose(f);
	CHECKF(!strcmp(text, "main;heavy 700 300\nmain;light 300 700\n"), "folded:\n%s", text);
	free(text);
	diff_free(&d);
	profile_free(b);
	profile_free(n);
}

/* --mincount, --maxdepth and --noisefloor judge each run on its own: a row
 * shows when either run would show it. */
static void test_filters(void)
{
	struct profile *b = split_run(700, 300, "heavy", NULL), *same = split_run(700, 300, "heavy", NULL);
	struct profile *n = split_run(3, 997, "heavy", NULL);
	struct diff d;
	char err[256], buf[512];
	struct analyze_options o;
	memset(&o, 0, sizeof(o));
	load_options_init(&o.load);
	o.combine = 1;
	o.mincount = 500;
	struct diff_view tree = {0}, flat = {.flat = 1};
	CHECK(build(&d, b, n, &defaults, err, sizeof(err)) == 0);
	char *out = render_with(&d, &tree, &o);
	/* heavy: 700 in base; light: 997 in new; both shown. */
	CHECKF(row_of(out, "heavy", buf, sizeof(buf)) && row_of(out, "light", buf, sizeof(buf)), "mincount:\n%s", out);
	free(out);
	diff_free(&d);
	CHECK(build(&d, b, same, &defaults, err, sizeof(err)) == 0);
	out = render_with(&d, &flat, &o);
	CHECKF(row_of(out, "heavy", buf, sizeof(buf)) && !row_of(out, "light", buf, sizeof(buf)), "mincount flat:\n%s", out);
	free(out);
	o.mincount = 0;
	struct diff_view shallow = {.maxdepth = 1};
	out = render_with(&d, &shallow, &o);
	CHECKF(row_of(out, "main", buf, sizeof(buf)) && !row_of(out, "heavy", buf, sizeof(buf)), "maxdepth:\n%s", out);
	free(out);
	diff_free(&d);
	/* noisefloor 20: floor(20 * sqrt(1000)) = 632 hides light (300) in base;
	 * in new (997 of 1000) it shows. */
	struct diff_view floor = {.noisefloor = 20};
	CHECK(build(&d, b, same, &defaults, err, sizeof(err)) == 0);
	out = render_with(&d, &floor, &o);
	CHECKF(row_of(out, "heavy", buf, sizeof(buf)) && !row_of(out, "light", buf, sizeof(buf)), "noisefloor:\n%s", out);
	free(out);
	diff_free(&d);
	CHECK(build(&d, b, n, &defaults, err, sizeof(err)) == 0);
	out = render_with(&d, &floor, &o);
	CHECKF(row_of(out, "light", buf, sizeof(buf)) && row_of(out, "heavy", buf, sizeof(buf)), "noisefloor, one run:\n%s", out);
	free(out);
	diff_free(&d);
	profile_free(b);
	profile_free(same);
	profile_free(n);
}

static void test_self_and_names(void)
{
	int64_t w[NLEAVES];
	for (int i = 0; i < NLEAVES; i++)
		w[i] = 10 + 7 * i;
	struct profile *a = tree_run(w, 0, 0);
	struct diff_view tsv = {.tsv = 1}, tree = {0};
	char *out = diff_text(a, a, &defaults, &tsv);
	int rows;
	CHECK(significant_rows(out, &rows) == 0 && rows == 1 + 4 + NLEAVES);
	CHECKF(all_deltas_zero(out), "self-diff:\n%s", out);
	free(out);
	out = diff_text(a, a, &defaults, &tree);
	CHECKF(!strstr(out, " * ") && !strstr(out, " ~ "), "self-diff tree:\n%s", out);
	free(out);

	/* Another build: other addresses, module path and string ids. */
	struct profile *moved = tree_run(w, 0x7f0000000000, 1);
	out = diff_text(a, moved, &defaults, &tsv);
	CHECK(significant_rows(out, &rows) == 0 && rows == 1 + 4 + NLEAVES);
	CHECKF(all_deltas_zero(out), "rebuilt:\n%s", out);
	free(out);
	profile_free(moved);
	profile_free(a);

	/* Renamed, and moved to another module: removed + added. */
	struct profile *b = split_run(500, 500, "heavy", NULL);
	struct profile *renamed = split_run(500, 500, "heavier", NULL);
	struct profile *in_lib = split_run(500, 500, "heavy", "/lib/libheavy.so");
	char buf[512];
	out = diff_text(b, renamed, &defaults, &tsv);
	CHECKF(row_of(out, "heavy", buf, sizeof(buf)) && !strncmp(buf, "500\t0\t-500\t", 11), "renamed:\n%s", out);
	CHECKF(row_of(out, "heavier", buf, sizeof(buf)) && !strncmp(buf, "0\t500\t500\t", 10), "renamed:\n%s", out);
	free(out);
	out = diff_text(b, in_lib, &defaults, &tsv);
	CHECKF(strstr(out, "500\t0\t-500\t") && strstr(out, "0\t500\t500\t"), "moved module:\n%s", out);
	free(out);
	profile_free(b);
	profile_free(renamed);
	profile_free(in_lib);
}

/* ---- the noise test's error rates ---- */

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static double uniform(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (double)((rng_state * 0x2545f4914f6cdd1dull) >> 11) * 0x1.0p-53;
}

/* n samples over NLEAVES leaves with shares q (summing to 1). */
static void multinomial(const double *q, int64_t n, int64_t *out)
{
	double cdf[NLEAVES];
	double s = 0;
	for (int i = 0; i < NLEAVES; i++)
		cdf[i] = s += q[i];
	memset(out, 0, NLEAVES * sizeof(*out));
	for (int64_t k = 0; k < n; k++) {
		double u = uniform() * s;
		int i = 0;
		while (i < NLEAVES - 1 && u >= cdf[i])
			i++;
		out[i]++;
	}
}

/* Pairs of runs of one program: how often any row is significant. */
static double false_positive_rate(const double *q, int64_t n, int pairs, double confidence,
				  double *row_rate_05)
{
	struct run_opts ro = defaults;
	ro.confidence = confidence;
	int any = 0;
	long rows_tested = 0, rows_below = 0;
	for (int k = 0; k < pairs; k++) {
		int64_t wb[NLEAVES], wn[NLEAVES];
		multinomial(q, n, wb);
		multinomial(q, n + (int64_t)(uniform() * (double)n / 5), wn); /* runs differ in length too */
		struct profile *b = tree_run(wb, 0, 0), *nw = tree_run(wn, 0x1000, 1);
		struct diff d;
		char err[256];
		CHECK(build(&d, b, nw, &ro, err, sizeof(err)) == 0);
		struct diff_view tsv = {.tsv = 1};
		char *out = render(&d, &tsv, 0);
		int rows;
		any += significant_rows(out, &rows) > 0;
		/* The uncorrected p-values (field 5) of the leaves. */
		for (const char *s = strchr(out, '\n'); s && s[1]; s = strchr(s + 1, '\n')) {
			if (!strstr(s + 1, "\tleaf.c\t") || strchr(s + 1, '\n') < strstr(s + 1, "\tleaf.c\t"))
				continue;
			const char *f = s + 1;
			for (int i = 0; i < 4; i++)
				f = strchr(f, '\t') + 1;
			rows_tested++;
			rows_below += atof(f) < 0.05;
		}
		free(out);
		diff_free(&d);
		profile_free(b);
		profile_free(nw);
	}
	if (row_rate_05)
		*row_rate_05 = (double)rows_below / (double)(rows_tested ? rows_tested : 1);
	return (double)any / pairs;
}

static void test_noise(void)
{
	/* Zipf-like shares: a few hot leaves and a long tail of small ones. */
	double q[NLEAVES], s = 0;
	for (int i = 0; i < NLEAVES; i++)
		s += q[i] = 1.0 / (i + 1);
	for (int i = 0; i < NLEAVES; i++)
		q[i] /= s;
	double row05;
	int pairs = 2000;
	double fwer99 = false_positive_rate(q, 2000, pairs, 0.99, &row05);
	double fwer90 = false_positive_rate(q, 2000, pairs, 0.90, NULL);
	printf("noise: %d pairs of 2000-sample runs of one program, 25 rows each: pairs with a significant row "
	       "%.2f%% at 99%% confidence, %.2f%% at 90%%; leaf rows with p < 0.05: %.2f%%\n",
	       pairs, 100 * fwer99, 100 * fwer90, 100 * row05);
	/* Calibrated: the uncorrected test rejects about 5% at 0.05. */
	CHECKF(row05 > 0.035 && row05 < 0.065, "uncorrected rate at 0.05: %.4f", row05);
	/* Holm keeps the family-wise rate at most 1 - confidence (with the
	 * binomial sampling error of the estimate: 3 sigma), and not far below. */
	CHECKF(fwer99 <= 0.01 + 3 * sqrt(0.01 * 0.99 / pairs), "false positives at 99%%: %.4f", fwer99);
	CHECKF(fwer90 <= 0.10 + 3 * sqrt(0.1 * 0.9 / pairs) && fwer90 > 0.03, "false positives at 90%%: %.4f", fwer90);

	/* Power: leaf 5 taking 3 more points of 20000 samples is found. */
	int found = 0, trials = 50;
	for (int k = 0; k < trials; k++) {
		double q2[NLEAVES];
		memcpy(q2, q, sizeof(q2));
		q2[5] += 0.03;
		q2[0] -= 0.03;
		int64_t wb[NLEAVES], wn[NLEAVES];
		multinomial(q, 20000, wb);
		multinomial(q2, 20000, wn);
		struct profile *b = tree_run(wb, 0, 0), *n = tree_run(wn, 0, 0);
		struct diff_view tsv = {.tsv = 1};
		char *out = diff_text(b, n, &defaults, &tsv), buf[512];
		found += row_of(out, "leaf05", buf, sizeof(buf)) && strstr(buf, "\t1\t") != NULL;
		free(out);
		profile_free(b);
		profile_free(n);
	}
	CHECKF(found >= trials * 9 / 10, "a 3-point change found in %d of %d pairs", found, trials);
}

/* ---- one signal, many periods ---- */

/*
 * split_run's main -> heavy with 600 samples of weight 1 and main -> light
 * with one sample of weight light_weight (a CPU-time timer's sample of
 * kernel time that waited: 1 + overruns), one row per sample as the loader
 * makes them.
 */
static struct profile *signal_run(int64_t light_weight, int rows_are_signals)
{
	struct profile *p = split_run(1, light_weight, "heavy", NULL);
	uint32_t heavy = p->samples[0].stack;
	for (int i = 1; i < 600; i++)
		build_weighted_sample(p, heavy, 0, (uint64_t)i, 1);
	p->rows_are_signals = rows_are_signals;
	return p;
}

static void test_signals(void)
{
	/* 1 period against 27 in one signal each: one observation either way, no significant change. */
	struct profile *b = signal_run(1, 1), *n = signal_run(27, 1);
	struct diff_view tsv = {.tsv = 1};
	char *out = diff_text(b, n, &defaults, &tsv), buf[512];
	CHECKF(row_of(out, "light", buf, sizeof(buf)) && strstr(buf, "\t0\t"),
	       "one signal of 27 periods marked significant: %s", out);
	CHECK(significant_rows(out, NULL) == 0);
	free(out);
	profile_free(b);
	profile_free(n);
	/* The same rows taken as aggregated counts (rows_are_signals 0): 1 against 27 samples is a change. */
	b = signal_run(1, 0);
	n = signal_run(27, 0);
	out = diff_text(b, n, &defaults, &tsv);
	CHECKF(row_of(out, "light", buf, sizeof(buf)) && strstr(buf, "\t1\t"),
	       "27 samples against 1 not significant: %s", out);
	free(out);
	profile_free(b);
	profile_free(n);
}

/* ---- exact allocations, value types ---- */

static void test_alloc(void)
{
	/* 1000 blocks of 64 bytes against 1000 of 96: +32000 bytes exactly. */
	struct profile *b = alloc_run(1000, 64), *n = alloc_run(1000, 96);
	struct run_opts raw = defaults;
	raw.normalize = 0;
	struct diff_view tsv = {.tsv = 1}, flat = {.flat = 1};
	char *out = diff_text(b, n, &raw, &tsv), buf[512];
	CHECKF(row_of(out, "grow", buf, sizeof(buf)) && !strncmp(buf, "64000\t96000\t32000\t", 18), "bytes:\n%s", out);
	CHECKF(row_of(out, "main", buf, sizeof(buf)) && !strncmp(buf, "68096\t100096\t32000\t", 19), "bytes:\n%s", out);
	CHECKF(row_of(out, "keep", buf, sizeof(buf)) && !strncmp(buf, "4096\t4096\t0\t", 12), "bytes:\n%s", out);
	/* Exact: every change is significant however small, none otherwise. */
	int rows;
	CHECK(significant_rows(out, &rows) == 2 && rows == 3);
	free(out);
	out = diff_text(b, n, &raw, &flat);
	CHECKF(strstr(out, "Noise:  none: both runs are exact counts") && strstr(out, "Values: alloc_space (bytes), of "
	       "the types both runs have: alloc_objects, alloc_space"), "exact header:\n%s", out);
	free(out);
	/* Objects: the same count, no change. */
	raw.value = "alloc_objects";
	out = diff_text(b, n, &raw, &tsv);
	CHECKF(significant_rows(out, NULL) == 0 && strstr(out, "1001\t1001\t0\t"), "objects:\n%s", out);
	free(out);

	/* A CPU run and an allocation run have nothing to compare. */
	struct profile *cpu = split_run(1, 1, "heavy", NULL);
	struct diff d;
	char err[512];
	CHECK(build(&d, cpu, b, &defaults, err, sizeof(err)) == -1);
	CHECKF(strstr(err, "nothing to compare: base.zst has the value types samples, cpu, new.zst has alloc_objects, "
			   "alloc_space"), "%s", err);
	raw.value = "cpu";
	CHECK(build(&d, b, n, &raw, err, sizeof(err)) == -1);
	CHECKF(strstr(err, "--value cpu: the value types both traces have are alloc_objects, alloc_space"), "%s", err);
	/* Two CPU runs: cpu compared in nanoseconds, its counts still samples. */
	struct profile *cpu2 = split_run(2, 1, "heavy", NULL);
	raw.value = "cpu";
	CHECK(build(&d, cpu, cpu2, &raw, err, sizeof(err)) == 0);
	CHECK(!strcmp(profile_string(d.p, d.p->value_types[DIFF_VALUE].unit), "nanoseconds"));
	CHECK(!strcmp(diff_count_name(&d), "samples") && d.base.total == 2000000);
	diff_free(&d);
	profile_free(cpu);
	profile_free(cpu2);
	profile_free(b);
	profile_free(n);
}

static void test_exports(void)
{
	struct profile *b = split_run(700, 300, "heavy", NULL), *n = split_run(600, 1400, "heavy", NULL);
	struct diff d;
	char err[256];
	CHECK(build(&d, b, n, &defaults, err, sizeof(err)) == 0);
	CHECK(fabs(d.scale - 0.5) < 1e-12);
	struct export_options eo = {.value = DIFF_VALUE};
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);
	CHECK(export_pprof(d.p, &eo, f) == 0);
	fclose(f);
	unsigned char raw[1 << 16];
	z_stream z = {0};
	CHECK(inflateInit2(&z, 15 + 16) == Z_OK);
	z.next_in = (Bytef *)text;
	z.avail_in = (uInt)size;
	z.next_out = raw;
	z.avail_out = sizeof(raw);
	CHECK(inflate(&z, Z_FINISH) == Z_STREAM_END);
	Perftools__Profiles__Profile *pr = perftools__profiles__profile__unpack(NULL, z.total_out, raw);
	inflateEnd(&z);
	CHECK(pr != NULL);
	/* Base samples negated and labelled pprof::base=true; new scaled. */
	int64_t base = 0, new = 0, labelled = 0;
	for (size_t i = 0; pr && i < pr->n_sample; i++) {
		const Perftools__Profiles__Sample *s = pr->sample[i];
		int is_base = 0;
		for (size_t l = 0; l < s->n_label; l++)
			if (!strcmp(pr->string_table[s->label[l]->key], "pprof::base") &&
			    !strcmp(pr->string_table[s->label[l]->str], "true"))
				is_base = 1;
		labelled += is_base;
		if (is_base)
			base += s->value[0];
		else
			new += s->value[0];
		CHECK(is_base ? s->value[0] < 0 : s->value[0] > 0);
	}
	CHECKF(labelled == 2 && base == -1000 && new == 1000, "pprof: %lld labelled, base %lld, new %lld",
	       (long long)labelled, (long long)base, (long long)new);
	if (pr)
		CHECK(!strcmp(pr->string_table[pr->default_sample_type], "samples"));
	perftools__profiles__profile__free_unpacked(pr, NULL);
	free(text);

	text = NULL;
	f = open_memstream(&text, &size);
	CHECK(export_speedscope(d.p, &eo, f) == 0);
	fclose(f);
	json_t *doc = json_loads(text, 0, NULL);
	json_t *profiles = json_object_get(doc, "profiles");
	CHECK(json_array_size(profiles) == 2);
	json_t *p0 = json_array_get(profiles, 0), *p1 = json_array_get(profiles, 1);
	CHECK(p0 && !strcmp(json_string_value(json_object_get(p0, "name")), "new 1 (split)"));
	CHECK(p1 && !strcmp(json_string_value(json_object_get(p1, "name")), "base 1 (split)"));
	/* Each run's own values, positive: base's 1000 samples. */
	CHECK(json_integer_value(json_object_get(p1, "endValue")) == 1000);
	json_t *weights = json_object_get(p1, "weights");
	for (size_t i = 0; i < json_array_size(weights); i++)
		CHECK(json_integer_value(json_array_get(weights, i)) > 0);
	json_decref(doc);
	free(text);
	diff_free(&d);
	profile_free(b);
	profile_free(n);
}

static void test_math(void)
{
	CHECK(fabs(diff_normal_z(0.05) - 1.959964) < 1e-5);
	CHECK(fabs(diff_normal_p(2.575829) - 0.01) < 1e-6);
	/* Student's t, two-sided, against its tables: t(1) 12.706 and t(10) 2.228 at 5%,
	 * t(4) 4.604 at 1%; t(30) 2.042 at 5%; tends to the normal's. */
	CHECK(fabs(diff_student_p(12.706, 1) - 0.05) < 1e-4);
	CHECK(fabs(diff_student_p(2.228, 10) - 0.05) < 1e-4);
	CHECK(fabs(diff_student_p(-4.604, 4) - 0.01) < 1e-4);
	CHECK(fabs(diff_student_p(2.042, 30) - 0.05) < 1e-3);
	CHECK(fabs(diff_student_p(2.575829, 1e7) - 0.01) < 1e-5);
	CHECK(diff_student_p(0, 3) > 0.999999 && diff_student_p(INFINITY, 3) == 0);
	/* Holm on (0.01, 0.04, 0.03, 0.005) of 4: 0.02, 0.06, 0.06, 0.02 -> (0.03, 0.06, 0.06, 0.02). */
	struct diff d = {.confidence = 0.95};
	struct diff_row r[4] = {{.p = 0.01, .new = 1}, {.p = 0.04, .new = 1}, {.p = 0.03, .new = 1}, {.p = 0.005, .new = 1}};
	uint32_t ids[4] = {0, 1, 2, 3};
	diff_adjust(&d, r, ids, 4);
	CHECKF(fabs(r[3].p_adjusted - 0.02) < 1e-12 && fabs(r[0].p_adjusted - 0.03) < 1e-12 &&
	       fabs(r[2].p_adjusted - 0.06) < 1e-12 && fabs(r[1].p_adjusted - 0.06) < 1e-12,
	       "%g %g %g %g", r[0].p_adjusted, r[1].p_adjusted, r[2].p_adjusted, r[3].p_adjusted);
	CHECK(r[3].significant && r[0].significant && !r[1].significant && !r[2].significant);
}

int main(void)
{
	test_math();
	test_split();
	test_filters();
	test_self_and_names();
	test_alloc();
	test_exports();
	test_noise();
	test_signals();
	if (check_failures)
		return check_exit_status();
	puts("diff tests passed");
	return 0;
}
