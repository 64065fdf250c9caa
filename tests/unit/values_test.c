/*
 * values_test.c - a profile with two value types of different units, built
 * by hand (profile_builder.h): alloc_objects/count and alloc_space/bytes, as
 * an allocation profile will have them. Every view must show the type it is
 * asked for, with units formatted right: tree and flat counts and headers,
 * flat TSV, folded, speedscope (unit "bytes"), pprof (both types,
 * default_sample_type the chosen one). Then a diff-like profile with signed
 * values: negative counts print with a sign and sort by absolute size.
 *
 * Samples here are aggregated, one per (stack, thread) with summed values,
 * as allocation profiles are (load_allocs.c): nothing may assume a sample is
 * one timer tick.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "export.h"
#include "filter.h"
#include "options.h"
#include "profile.pb-c.h"
#include "profile_builder.h"
#include "report.h"

#include "check.h"

/*
 * main -> make_small: 1000 objects, 32000 bytes (two samples, two threads)
 * main -> make_big:     3 objects, 3 MiB
 * main:                 1 object, 100 bytes (self)
 * Ranked by objects make_small leads; by bytes make_big does.
 */
static struct profile *alloc_profile(void)
{
	struct profile *p = profile_new();
	uint32_t objects = profile_add_value_type(p, "alloc_objects", "count");
	uint32_t space = profile_add_value_type(p, "alloc_space", "bytes");
	CHECK(objects == 0 && space == 1 && p->ncolumns == 2 && p->default_value == objects);
	p->default_value = space;
	p->command = profile_intern(p, "./alloc");
	p->mode = profile_intern(p, "alloc");
	p->ended = 1;
	struct profile_module m = {.path = profile_intern(p, "/bin/alloc")};
	profile_add_module(p, &m);
	struct profile_thread t1 = {1, 1, profile_intern(p, "main"), 0, 0, 0}, t2 = {1, 2, profile_intern(p, "w"), 0, 0, 0};
	profile_add_thread(p, &t1);
	profile_add_thread(p, &t2);
	uint32_t f_main = build_function(p, "main", "a.c", 1, 0, 0);
	uint32_t f_small = build_function(p, "make_small", "a.c", 10, 0, 0);
	uint32_t f_big = build_function(p, "make_big", "a.c", 20, 0, 0);
	uint32_t l5 = 5, l11 = 11, l21 = 21, l6 = 6, l7 = 7;
	int main5 = (int)build_location(p, 0x10, 0, &f_main, &l5, 1);
	int main6 = (int)build_location(p, 0x14, 0, &f_main, &l6, 1);
	int main7 = (int)build_location(p, 0x18, 0, &f_main, &l7, 1);
	int small = (int)build_location(p, 0x20, 0, &f_small, &l11, 1);
	int big = (int)build_location(p, 0x30, 0, &f_big, &l21, 1);
	uint32_t s_small = build_stack(p, (int[]){main5, small, -1});
	uint32_t s_big = build_stack(p, (int[]){main6, big, -1});
	uint32_t s_main = build_stack(p, (int[]){main7, -1});
	build_sample(p, s_small, 0, 0, (int64_t[]){600, 19200});
	build_sample(p, s_small, 1, 0, (int64_t[]){400, 12800});
	build_sample(p, s_big, 0, 0, (int64_t[]){3, 3 << 20});
	build_sample(p, s_main, 0, 0, (int64_t[]){1, 100});
	return p;
}

static char *render(const struct profile *p, uint32_t value, int flat, const struct flat_options *fo,
		    int threads)
{
	struct analyze_options o;
	memset(&o, 0, sizeof(o));
	load_options_init(&o.load);
	o.combine = 1;
	o.filter.show_system = 1;
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct report r;
	report_init(&r, out, p, &o, value);
	struct tree_options to = {.threads = threads};
	if (flat)
		flat_report(&r, fo);
	else
		tree_report(&r, &to);
	fclose(out);
	return buf;
}

static int has_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	for (const char *s = text; s && *s;) {
		const char *end = strchr(s, '\n');
		size_t l = end ? (size_t)(end - s) : strlen(s);
		if (l == n && !memcmp(s, line, n))
			return 1;
		s = end ? end + 1 : NULL;
	}
	return 0;
}

static int line_at(const char *text, const char *line)
{
	const char *at = strstr(text, line);
	return at ? (int)(at - text) : -1;
}

#define EXPECT_LINE(text, line) CHECKF(has_line(text, line), "missing line [%s] in:\n%s", line, text)

static void test_reports(const struct profile *p)
{
	/* By bytes (the default here): make_big first, MiB in the header. */
	char *out = render(p, 1, 0, NULL, 0);
	CHECKF(strstr(out, "Samples: 4, alloc_objects 1004, alloc_space 3.0 MiB, threads: 2") != NULL,
	       "header:\n%s", out);
	/* In people's units (raw in the TSV below), each node's share beside. */
	EXPECT_LINE(out, "          99.0% ╎3.0 MiB  a.c:6; main");
	EXPECT_LINE(out, " 3.0 MiB  99.0% ╎ 3.0 MiB  a.c:21; make_big");
	EXPECT_LINE(out, "31.2 KiB   1.0% ╎ 31.2 KiB a.c:11; make_small");
	CHECKF(line_at(out, "make_big") < line_at(out, "make_small"), "bytes order:\n%s", out);
	CHECKF(strstr(out, "Total samples: 4 (alloc_objects 1004, alloc_space 3.0 MiB) in 2 threads.") != NULL,
	       "footer:\n%s", out);
	CHECKF(!strstr(out, "Values:"), "the default type needs no note:\n%s", out);
	free(out);

	/* By objects: make_small first, and the header says what the counts are. */
	out = render(p, 0, 0, NULL, 0);
	EXPECT_LINE(out, "Values: alloc_objects (count)");
	EXPECT_LINE(out, "      99.6% ╎1000 a.c:5; main");
	EXPECT_LINE(out, "1000  99.6% ╎ 1000 a.c:11; make_small");
	CHECKF(line_at(out, "make_small") < line_at(out, "make_big"), "objects order:\n%s", out);
	free(out);

	/* Per thread: the heading gives that thread's totals in both units. */
	out = render(p, 1, 0, NULL, 1);
	CHECKF(strstr(out, "Thread 2 (w): 1 samples, alloc_objects 400, alloc_space 12.5 KiB") != NULL,
	       "thread heading:\n%s", out);
	free(out);

	struct flat_options fo = {.sort = FLAT_SORT_COUNT};
	out = render(p, 1, 1, &fo, 0);
	EXPECT_LINE(out, "   Count      %     Self      % File Line Function");
	EXPECT_LINE(out, " 3.0 MiB  99.0%  3.0 MiB  99.0% a.c    20 make_big");
	EXPECT_LINE(out, "31.2 KiB   1.0% 31.2 KiB   1.0% a.c    10 make_small");
	free(out);

	/* TSV: raw integers of the chosen type, then every type's. */
	fo.format = FLAT_FORMAT_TSV;
	out = render(p, 0, 1, &fo, 0);
	EXPECT_LINE(out, "count\tself\tfile\tline\tfunction\taddress\tinlined\talloc_objects\talloc_objects_self"
			 "\talloc_space\talloc_space_self");
	EXPECT_LINE(out, "1000\t1000\ta.c\t10\tmake_small\t\t0\t1000\t1000\t32000\t32000");
	EXPECT_LINE(out, "3\t3\ta.c\t20\tmake_big\t\t0\t3\t3\t3145728\t3145728");
	EXPECT_LINE(out, "1004\t1\ta.c\t1\tmain\t\t0\t1004\t1\t3177828\t100");
	free(out);
}

static char *export_text(int (*exporter)(const struct profile *, const struct export_options *, FILE *),
			 const struct profile *p, const struct export_options *o, size_t *len)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	CHECK(exporter(p, o, f) == 0);
	fclose(f);
	if (len)
		*len = size;
	return buf;
}

static void test_exports(const struct profile *p)
{
	struct export_options o = {.value = 0};
	char *out = export_text(export_folded, p, &o, NULL);
	CHECKF(!strcmp(out, "main 1\nmain;make_big 3\nmain;make_small 1000\n"), "folded objects:\n%s", out);
	free(out);
	o.value = 1;
	out = export_text(export_folded, p, &o, NULL);
	CHECKF(!strcmp(out, "main 100\nmain;make_big 3145728\nmain;make_small 32000\n"), "folded bytes:\n%s", out);
	free(out);

	out = export_text(export_speedscope, p, &o, NULL);
	json_t *doc = json_loads(out, 0, NULL);
	CHECK(doc != NULL);
	json_t *first = json_array_get(json_object_get(doc, "profiles"), 0);
	CHECK(!strcmp(json_string_value(json_object_get(first, "unit")), "bytes"));
	CHECK(!strcmp(json_string_value(json_object_get(first, "name")), "1 (main)"));
	CHECK(json_integer_value(json_object_get(first, "endValue")) == 19200 + (3 << 20) + 100);
	json_decref(doc);
	free(out);
	o.value = 0;
	out = export_text(export_speedscope, p, &o, NULL);
	doc = json_loads(out, 0, NULL);
	first = json_array_get(json_object_get(doc, "profiles"), 0);
	CHECK(!strcmp(json_string_value(json_object_get(first, "unit")), "none"));
	CHECK(json_integer_value(json_object_get(first, "endValue")) == 604);
	json_decref(doc);
	free(out);

	/* pprof: both types, the chosen one the default, no period. */
	size_t len;
	out = export_text(export_pprof, p, &o, &len);
	z_stream z = {0};
	unsigned char raw[1 << 16];
	CHECK(inflateInit2(&z, 15 + 16) == Z_OK);
	z.next_in = (Bytef *)out;
	z.avail_in = (uInt)len;
	z.next_out = raw;
	z.avail_out = sizeof(raw);
	CHECK(inflate(&z, Z_FINISH) == Z_STREAM_END);
	Perftools__Profiles__Profile *pr = perftools__profiles__profile__unpack(NULL, z.total_out, raw);
	inflateEnd(&z);
	CHECK(pr != NULL && pr->n_sample_type == 2);
	CHECK(!strcmp(pr->string_table[pr->sample_type[1]->type], "alloc_space"));
	CHECK(!strcmp(pr->string_table[pr->sample_type[1]->unit], "bytes"));
	CHECK(!strcmp(pr->string_table[pr->default_sample_type], "alloc_objects"));
	CHECK(pr->period_type == NULL);
	int64_t bytes = 0, objects = 0;
	for (size_t i = 0; i < pr->n_sample; i++) {
		CHECK(pr->sample[i]->n_value == 2);
		objects += pr->sample[i]->value[0];
		bytes += pr->sample[i]->value[1];
	}
	CHECK(objects == 1004 && bytes == 32000 + (3 << 20) + 100);
	perftools__profiles__profile__free_unpacked(pr, NULL);
	free(out);
}

/* A diff-like profile: new minus base, some values negative. */
static void test_signed(void)
{
	struct profile *p = profile_new();
	profile_add_value_type(p, "alloc_space", "bytes");
	p->ended = 1;
	struct profile_thread t = {1, 1, 0, 0, 0, 0};
	profile_add_thread(p, &t);
	uint32_t f_main = build_function(p, "main", "d.c", 1, UINT32_MAX, 0);
	uint32_t f_grew = build_function(p, "grew", "d.c", 10, UINT32_MAX, 0);
	uint32_t f_shrank = build_function(p, "shrank", "d.c", 20, UINT32_MAX, 0);
	uint32_t l2 = 2, l11 = 11, l21 = 21;
	int m = (int)build_location(p, 0x1, UINT32_MAX, &f_main, &l2, 1);
	int g = (int)build_location(p, 0x2, UINT32_MAX, &f_grew, &l11, 1);
	int s = (int)build_location(p, 0x3, UINT32_MAX, &f_shrank, &l21, 1);
	build_sample(p, build_stack(p, (int[]){m, g, -1}), 0, 0, (int64_t[]){2048});
	build_sample(p, build_stack(p, (int[]){m, s, -1}), 0, 0, (int64_t[]){-(5 << 20)});
	char *out = render(p, 0, 0, NULL, 0);
	CHECKF(strstr(out, "Samples: 2, alloc_space -5.0 MiB, threads: 1") != NULL, "negative total:\n%s", out);
	EXPECT_LINE(out, "         -99.9% ╎-5.0 MiB d.c:2; main");
	EXPECT_LINE(out, "-5.0 MiB -100.0% ╎ -5.0 MiB d.c:21; shrank");
	EXPECT_LINE(out, " 2.0 KiB   0.0% ╎ 2.0 KiB  d.c:11; grew");
	/* By absolute size: the bigger change first, though it is negative. */
	CHECKF(line_at(out, "shrank") < line_at(out, "grew"), "signed order:\n%s", out);
	free(out);
	struct flat_options fo = {.sort = FLAT_SORT_SELF};
	out = render(p, 0, 1, &fo, 0);
	CHECKF(line_at(out, "shrank") < line_at(out, "grew"), "flat signed order:\n%s", out);
	EXPECT_LINE(out, "-5.0 MiB -100.0% -5.0 MiB -100.0% d.c    20 shrank");
	EXPECT_LINE(out, "-5.0 MiB -99.9%      0 B   0.0% d.c     1 main");
	free(out);
	struct export_options o = {.value = 0};
	out = export_text(export_folded, p, &o, NULL);
	CHECKF(!strcmp(out, "main;grew 2048\nmain;shrank -5242880\n"), "signed folded:\n%s", out);
	free(out);
	profile_free(p);
}

/* format_value, the one formatter of units. */
static void test_units(void)
{
	char b[64];
	CHECK(!strcmp(format_value(1500000, "nanoseconds", b, sizeof(b)), "1.5 ms"));
	CHECK(!strcmp(format_value(-2500000000, "nanoseconds", b, sizeof(b)), "-2.500 s"));
	CHECK(!strcmp(format_value(1023, "bytes", b, sizeof(b)), "1023 B"));
	CHECK(!strcmp(format_value(1536, "bytes", b, sizeof(b)), "1.5 KiB"));
	CHECK(!strcmp(format_value(3ll << 30, "bytes", b, sizeof(b)), "3.0 GiB"));
	CHECK(!strcmp(format_value(-42, "count", b, sizeof(b)), "-42"));
}

/* escape_text: what may reach a terminal from a trace. */
static void test_escapes(void)
{
	char b[256];
	const char *plain = "std::vector<int>::push_back caf\xc3\xa9";
	CHECK(escape_text(plain, b, sizeof(b)) == plain); /* UTF-8 is not a control */
	CHECK(!strcmp(escape_text("a\033]0;x\007b", b, sizeof(b)), "a\\e]0;x\\x07b"));
	CHECK(!strcmp(escape_text("t\tn\nr\r\x7f", b, sizeof(b)), "t\\tn\\nr\\r\\x7f"));
	CHECK(!strcmp(escape_text("raw\x9b" "1m", b, sizeof(b)), "raw\\x9b1m"));        /* C1 CSI, raw */
	CHECK(!strcmp(escape_text("utf\xc2\x9b" "1m", b, sizeof(b)), "utf\\xc2\\x9b1m")); /* C1 CSI, UTF-8 */
	CHECK(!strcmp(escape_text("\xe2\x95\x8e ok", b, sizeof(b)), "\xe2\x95\x8e ok")); /* a 0x95 continuation */
	char small[8];
	CHECK(strlen(escape_text("\033\033\033\033\033", small, sizeof(small))) < sizeof(small));
	/* Bytes of no well-formed UTF-8, each as \xHH: a stray 0xff or continuation, a cut
	 * sequence, an overlong '/', a surrogate, beyond U+10FFFF. */
	CHECK(!strcmp(escape_text("a\xff" "b\x85", b, sizeof(b)), "a\\xffb\\x85"));
	CHECK(!strcmp(escape_text("cut\xe2\x80", b, sizeof(b)), "cut\\xe2\\x80"));
	CHECK(!strcmp(escape_text("\xc0\xaf", b, sizeof(b)), "\\xc0\\xaf"));
	CHECK(!strcmp(escape_text("\xed\xa0\x80", b, sizeof(b)), "\\xed\\xa0\\x80"));
	CHECK(!strcmp(escape_text("\xf4\x90\x80\x80", b, sizeof(b)), "\\xf4\\x90\\x80\\x80"));
	const char *four = "emoji \xf0\x9f\x94\xa5 ok"; /* U+1F525 is printable */
	CHECK(escape_text(four, b, sizeof(b)) == four);
	/* Bidi controls ("Trojan Source") by code point; other UTF-8 beside them kept. */
	CHECK(!strcmp(escape_text("is_admin\xe2\x80\xae\xe2\x81\xa6x", b, sizeof(b)), "is_admin\\u{202e}\\u{2066}x"));
	CHECK(!strcmp(escape_text("\xe2\x80\x8f\xd8\x9c" "caf\xc3\xa9", b, sizeof(b)), "\\u{200f}\\u{61c}caf\xc3\xa9"));
	const char *dash = "a\xe2\x80\x94z"; /* U+2014, a neighbour of the controls, kept */
	CHECK(escape_text(dash, b, sizeof(b)) == dash);
	/* A backslash is doubled: the text \x1b in a name cannot pass for an escape. */
	CHECK(!strcmp(escape_text("a\\x1b", b, sizeof(b)), "a\\\\x1b"));
	CHECK(!strcmp(escape_text("\\\033", b, sizeof(b)), "\\\\\\e"));
	/* Source code keeps its own backslashes, and has the rest escaped. */
	const char *code = "printf(\"%s\\n\", s);";
	CHECK(escape_controls(code, b, sizeof(b)) == code);
	CHECK(!strcmp(escape_controls("s = \"\\t\033\xff\";", b, sizeof(b)), "s = \"\\t\\e\\xff\";"));
	/* Cut whole: never inside an escape or a character. */
	CHECK(!strcmp(escape_text("ab\xe2\x80\xae", small, sizeof(small)), "ab"));
	CHECK(!strcmp(escape_text("\\caf\xe2\x80\x94", small, sizeof(small)), "\\\\caf"));
}

int main(void)
{
	struct profile *p = alloc_profile();
	test_reports(p);
	test_exports(p);
	/* A filtered copy keeps both columns and both types. */
	struct filter_options f = {.show_system = 0};
	struct profile *q = filter_profile(p, &f);
	CHECK(q->nvalue_types == 2 && q->ncolumns == 2 && q->default_value == 1);
	CHECK(profile_value_total(q, 1, NULL) == 32000 + (3 << 20) + 100);
	profile_free(q);
	profile_free(p);
	test_signed();
	test_units();
	test_escapes();
	if (check_failures)
		return check_exit_status();
	puts("values tests passed");
	return 0;
}
