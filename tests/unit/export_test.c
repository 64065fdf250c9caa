/*
 * export_test.c - unit tests of the exporters (ctest unit_export) on
 * hand-built profiles (profile_builder.h): exact folded text for each option, folded parsed back
 * sums to the total, a stack with an inlined frame and a C++ template name
 * round-trips through folded, speedscope (parsed with Jansson) and pprof
 * (gunzipped and unpacked with protobuf-c), and every format is byte-stable.
 *
 * The consumers' own verdicts (go tool pprof, the speedscope schema) are in
 * the end-to-end tests, tests/e2e/export_consumers.sh.
 */
#include "export.h"
#include "export_internal.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "profile.pb-c.h"
#include "profile_builder.h"

#define CHECK_STOP_AT_FIRST_FAILURE /* later steps use what earlier ones built */
#include "check.h"

#define TEMPLATE_NAME "std::vector<int, std::allocator<int> >::push_back(int const&)"
#define TEMPLATE_MANGLED "_ZNSt6vectorIiSaIiEE9push_backERKi"
#define INTERVAL_NS 1000000u

enum { F_START, F_MAIN, F_COMPUTE, F_SQUARE, F_PUSH, F_WEIRD, NFUNCTIONS };

/*
 * The program: main (app.c) calls compute, into which square is inlined
 * (one location, two lines), and push_back (a template); a function whose
 * name contains ';'; libc's __libc_start_call_main at the root. Two threads,
 * one sample that could not be unwound, weights above 1 (timer overruns).
 */
static struct profile *build_profile(void)
{
	struct profile *p = build_cpu_profile(INTERVAL_NS);
	struct profile_module app = { profile_intern(p, "/usr/bin/app"), profile_intern(p, "abcdef0123"),
				      0x400000, 0x401000, 0x1000, 0x3ff000,
				      PROFILE_MODULE_HAS_FUNCTIONS | PROFILE_MODULE_HAS_FILENAMES |
					      PROFILE_MODULE_HAS_LINE_NUMBERS |
					      PROFILE_MODULE_HAS_INLINE_FRAMES };
	struct profile_module libc = { profile_intern(p, "/lib/x86_64-linux-gnu/libc.so.6"), 0,
				       0x7f0000000000, 0x7f0000100000, 0x28000, 0x7effffd8000,
				       PROFILE_MODULE_HAS_FUNCTIONS | PROFILE_MODULE_SYSTEM |
					       PROFILE_MODULE_NO_DEBUG_INFO };
	CHECK(profile_add_module(p, &app) == 0);
	CHECK(profile_add_module(p, &libc) == 1);

	uint32_t app_c = profile_intern(p, "app.c");
	uint32_t vec_h = profile_intern(p, "/usr/include/c++/12/bits/stl_vector.h");
	uint32_t start = profile_intern(p, "__libc_start_call_main");
	uint32_t main_name = profile_intern(p, "main"), weird = profile_intern(p, "weird;name");
	struct profile_function fn[NFUNCTIONS] = {
		[F_START] = { start, start, 0, 0, 1, PROFILE_FUNCTION_SYSTEM },
		[F_MAIN] = { main_name, main_name, app_c, 30, 0, 0 },
		[F_COMPUTE] = { profile_intern(p, "compute(int)"), profile_intern(p, "_Z7computei"),
				app_c, 10, 0, 0 },
		[F_SQUARE] = { profile_intern(p, "square(int)"), profile_intern(p, "_Z6squarei"),
			       app_c, 5, 0, 0 },
		[F_PUSH] = { profile_intern(p, TEMPLATE_NAME), profile_intern(p, TEMPLATE_MANGLED),
			     vec_h, 1280, 0, 0 },
		[F_WEIRD] = { weird, weird, app_c, 40, 0, 0 },
	};
	for (int i = 0; i < NFUNCTIONS; i++)
		CHECK(profile_add_function(p, &fn[i]) == (uint32_t)i);

	/* locations: 0 start, 1 main->compute, 2 compute+square (inlined),
	 * 3 main->push_back call, 4 push_back, 5 main->weird call, 6 weird */
	struct profile_line lines[] = {
		{ F_START, 0, 0, 0 },
		{ F_MAIN, app_c, 33, 0 },
		{ F_SQUARE, app_c, 6, 1 }, { F_COMPUTE, app_c, 12, 0 },
		{ F_MAIN, app_c, 34, 0 },
		{ F_PUSH, vec_h, 1287, 0 },
		{ F_MAIN, app_c, 35, 0 },
		{ F_WEIRD, app_c, 41, 0 },
	};
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		CHECK(profile_add_line(p, &lines[i]) == i);
	struct profile_location locs[] = {
		{ 0x7f0000029d90, 1, 0, 1, 0 }, { 0x400110, 0, 1, 1, 0 }, { 0x400020, 0, 2, 2, 0 },
		{ 0x400120, 0, 4, 1, 0 },       { 0x400300, 0, 5, 1, 0 }, { 0x400130, 0, 6, 1, 0 },
		{ 0x400400, 0, 7, 1, 0 },
	};
	for (size_t i = 0; i < sizeof(locs) / sizeof(locs[0]); i++)
		CHECK(profile_add_location(p, &locs[i]) == i);

	const uint32_t compute_stack[] = { 2, 1, 0 }, push_stack[] = { 4, 3, 0 },
		       weird_stack[] = { 6, 5, 0 };
	CHECK(profile_add_stack(p, compute_stack, 3) == 0);
	CHECK(profile_add_stack(p, push_stack, 3) == 1);
	CHECK(profile_add_stack(p, weird_stack, 3) == 2);
	CHECK(profile_add_stack(p, NULL, 0) == 3);

	struct profile_thread main_thread = { 100, 100, profile_intern(p, "app"), 0, 0, 0};
	struct profile_thread worker = { 100, 101, profile_intern(p, "worker"), 0, 0, 0};
	CHECK(profile_add_thread(p, &main_thread) == 0);
	CHECK(profile_add_thread(p, &worker) == 1);

	/* time order; thread 1 ends up heavier (9 against 5) */
	const struct { uint32_t stack, thread; uint64_t time; int64_t weight; } samples[] = {
		{ 0, 0, 1000, 1 }, { 0, 0, 2000, 2 }, { 1, 1, 2500, 3 }, { 1, 1, 3000, 1 },
		{ 0, 1, 3500, 4 }, { 2, 0, 4000, 1 }, { 3, 0, 5000, 1 }, { 1, 1, 6000, 1 },
	};
	for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++)
		build_weighted_sample(p, samples[i].stack, samples[i].thread, samples[i].time, samples[i].weight);

	p->command = profile_intern(p, "./app --fast");
	p->start_realtime_ns = 1764400000123456789ull;
	p->duration_ns = 2500000000ull;
	p->ended = 1;
	return p;
}

/* Run an exporter into memory; returns the bytes (NUL-terminated). */
static char *export_to_memory(int (*exporter)(const struct profile *, const struct export_options *, FILE *),
			      const struct profile *p, const struct export_options *o, size_t *len)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	CHECK(f != NULL);
	CHECK(exporter(p, o, f) == 0);
	CHECK(fclose(f) == 0);
	if (len)
		*len = size;
	return buf;
}

static void expect_folded(const struct profile *p, const struct export_options *o, const char *want)
{
	char *got = export_to_memory(export_folded, p, o, NULL);
	CHECKF(!strcmp(got, want), "\n--- got:\n%s--- want:\n%s", got, want);
	free(got);
}

static void test_folded(const struct profile *p)
{
	struct export_options o = { 0 };
	expect_folded(p, &o,
		      "[unknown] 1\n"
		      "__libc_start_call_main;main;compute(int);square(int) 7\n"
		      "__libc_start_call_main;main;" TEMPLATE_NAME " 5\n"
		      "__libc_start_call_main;main;weird:name 1\n");
	o.annotate_inline = 1;
	expect_folded(p, &o,
		      "[unknown] 1\n"
		      "__libc_start_call_main;main;compute(int);square(int)_[i] 7\n"
		      "__libc_start_call_main;main;" TEMPLATE_NAME " 5\n"
		      "__libc_start_call_main;main;weird:name 1\n");
	o.lines = 1;
	expect_folded(p, &o,
		      "[unknown] 1\n"
		      "__libc_start_call_main;main:33;compute(int):12;square(int):6_[i] 7\n"
		      "__libc_start_call_main;main:34;" TEMPLATE_NAME ":1287 5\n"
		      "__libc_start_call_main;main:35;weird:name:41 1\n");
	o = (struct export_options){ .thread_roots = 1 };
	expect_folded(p, &o,
		      "100 (app) 1\n"
		      "100 (app);__libc_start_call_main;main;compute(int);square(int) 3\n"
		      "100 (app);__libc_start_call_main;main;weird:name 1\n"
		      "101 (worker);__libc_start_call_main;main;compute(int);square(int) 4\n"
		      "101 (worker);__libc_start_call_main;main;" TEMPLATE_NAME " 5\n");
}

/* Parse folded text back the way flamegraph.pl does (count after the last
 * space) and check the lines are sorted, unique and sum to the total. */
static void test_folded_sums_to_total(const struct profile *p)
{
	struct export_options variants[] = {
		{ .lines = 0 },
		{ .lines = 1, .annotate_inline = 1 },
		{ .thread_roots = 1 },
		{ .lines = 1, .annotate_inline = 1, .thread_roots = 1 },
	};
	for (size_t v = 0; v < sizeof(variants) / sizeof(variants[0]); v++) {
		char *text = export_to_memory(export_folded, p, &variants[v], NULL);
		uint64_t sum = 0;
		char *prev = NULL;
		for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
			char *space = strrchr(line, ' ');
			CHECK(space != NULL);
			char *end;
			unsigned long long count = strtoull(space + 1, &end, 10);
			CHECKF(*end == '\0' && count > 0, "bad count in '%s'", line);
			*space = '\0';
			CHECKF(!prev || strcmp(prev, line) < 0, "not sorted/unique: '%s' then '%s'", prev ? prev : "", line);
			prev = line;
			sum += count;
		}
		CHECKF((int64_t)sum == profile_value_total(p, 0, NULL), "sum %llu, total %lld",
		       (unsigned long long)sum, (long long)profile_value_total(p, 0, NULL));
		free(text);
	}
}

static const char *frame_name(json_t *frames, json_t *index)
{
	json_t *frame = json_array_get(frames, (size_t)json_integer_value(index));
	CHECK(frame != NULL);
	return json_string_value(json_object_get(frame, "name"));
}

static void test_speedscope(const struct profile *p)
{
	struct export_options o = { 0 };
	char *text = export_to_memory(export_speedscope, p, &o, NULL);
	json_error_t error;
	json_t *doc = json_loads(text, 0, &error);
	CHECKF(doc != NULL, "%s at %d", error.text, error.position);
	CHECK(!strcmp(json_string_value(json_object_get(doc, "$schema")),
		      "https://www.speedscope.app/file-format-schema.json"));
	CHECK(!strcmp(json_string_value(json_object_get(doc, "exporter")), "ipscope@" IPSCOPE_VERSION));
	CHECK(!strcmp(json_string_value(json_object_get(doc, "name")), "./app --fast"));
	CHECK(json_integer_value(json_object_get(doc, "activeProfileIndex")) == 0);
	json_t *frames = json_object_get(json_object_get(doc, "shared"), "frames");
	json_t *profiles = json_object_get(doc, "profiles");
	CHECK(json_array_size(profiles) == 2);

	/* heaviest thread first */
	const char *names[] = { "101 (worker)", "100 (app)" };
	const uint64_t weights[] = { 9, 5 };
	for (size_t i = 0; i < 2; i++) {
		json_t *prof = json_array_get(profiles, i);
		CHECK(!strcmp(json_string_value(json_object_get(prof, "type")), "sampled"));
		CHECK(!strcmp(json_string_value(json_object_get(prof, "unit")), "nanoseconds"));
		CHECKF(!strcmp(json_string_value(json_object_get(prof, "name")), names[i]), "%zu", i);
		json_t *w = json_object_get(prof, "weights");
		CHECK(json_array_size(w) == json_array_size(json_object_get(prof, "samples")));
		json_int_t sum = 0;
		for (size_t k = 0; k < json_array_size(w); k++)
			sum += json_integer_value(json_array_get(w, k));
		CHECK((uint64_t)sum == weights[i] * INTERVAL_NS);
		CHECK(json_integer_value(json_object_get(prof, "endValue")) == sum);
	}
	/* worker in time order: push(3), push(1) merged; compute(4); push(1) */
	json_t *worker = json_array_get(profiles, 0);
	json_t *samples = json_object_get(worker, "samples");
	CHECK(json_array_size(samples) == 3);
	CHECK(json_integer_value(json_array_get(json_object_get(worker, "weights"), 0)) == 4 * INTERVAL_NS);
	const char *push_names[] = { "__libc_start_call_main", "main", TEMPLATE_NAME };
	const char *compute_names[] = { "__libc_start_call_main", "main", "compute(int)", "square(int)" };
	json_t *push = json_array_get(samples, 0), *compute = json_array_get(samples, 1);
	CHECK(json_array_size(push) == 3 && json_array_size(compute) == 4);
	for (size_t k = 0; k < 3; k++)
		CHECK(!strcmp(frame_name(frames, json_array_get(push, k)), push_names[k]));
	for (size_t k = 0; k < 4; k++)
		CHECK(!strcmp(frame_name(frames, json_array_get(compute, k)), compute_names[k]));
	/* a frame is a function here: file and line of its definition */
	json_t *square = json_array_get(frames, (size_t)json_integer_value(json_array_get(compute, 3)));
	CHECK(!strcmp(json_string_value(json_object_get(square, "file")), "app.c"));
	CHECK(json_integer_value(json_object_get(square, "line")) == 5);
	/* the unwound-nothing sample is an empty stack, not dropped */
	json_t *app_samples = json_object_get(json_array_get(profiles, 1), "samples");
	CHECK(json_array_size(json_array_get(app_samples, json_array_size(app_samples) - 1)) == 0);
	json_decref(doc);
	free(text);

	/* with lines, main's three call sites are three frames */
	o.lines = 1;
	text = export_to_memory(export_speedscope, p, &o, NULL);
	doc = json_loads(text, 0, &error);
	CHECK(doc != NULL);
	frames = json_object_get(json_object_get(doc, "shared"), "frames");
	int mains = 0;
	for (size_t k = 0; k < json_array_size(frames); k++)
		mains += !strcmp(json_string_value(json_object_get(json_array_get(frames, k), "name")), "main");
	CHECK(mains == 3);
	json_decref(doc);
	free(text);
}

static uint8_t *gunzip(const char *data, size_t len, size_t *out_len)
{
	z_stream z = { 0 };
	CHECK(inflateInit2(&z, 15 + 16) == Z_OK);
	size_t cap = 1 << 16, used = 0;
	uint8_t *out = malloc(cap);
	z.next_in = (Bytef *)data;
	z.avail_in = (uInt)len;
	int rc;
	do {
		if (used == cap)
			out = realloc(out, cap *= 2);
		z.next_out = out + used;
		z.avail_out = (uInt)(cap - used);
		rc = inflate(&z, Z_NO_FLUSH);
		CHECKF(rc == Z_OK || rc == Z_STREAM_END, "inflate %d", rc);
		used = cap - z.avail_out;
	} while (rc != Z_STREAM_END);
	CHECK(z.avail_in == 0);
	inflateEnd(&z);
	*out_len = used;
	return out;
}

/* p exported as pprof, checked to be gzip and unpacked; free with
 * perftools__profiles__profile__free_unpacked. */
static Perftools__Profiles__Profile *pprof_of(const struct profile *p, const struct export_options *o)
{
	size_t len, raw_len;
	char *gz = export_to_memory(export_pprof, p, o, &len);
	CHECK(len > 18 && (uint8_t)gz[0] == 0x1f && (uint8_t)gz[1] == 0x8b);
	uint8_t *raw = gunzip(gz, len, &raw_len);
	/* unpacking copies every string and array out of raw */
	Perftools__Profiles__Profile *pr = perftools__profiles__profile__unpack(NULL, raw_len, raw);
	free(raw);
	free(gz);
	return pr;
}

static void test_pprof(const struct profile *p)
{
	struct export_options o = { 0 };
	Perftools__Profiles__Profile *pr = pprof_of(p, &o);
	CHECK(pr != NULL);
	char **s = pr->string_table;
#define STR(i) (CHECK((size_t)(i) < pr->n_string_table), s[i])
	CHECK(pr->n_string_table > 0 && !strcmp(s[0], ""));
	CHECK(pr->n_sample_type == 2);
	CHECK(!strcmp(STR(pr->sample_type[0]->type), "samples"));
	CHECK(!strcmp(STR(pr->sample_type[0]->unit), "count"));
	CHECK(!strcmp(STR(pr->sample_type[1]->type), "cpu"));
	CHECK(!strcmp(STR(pr->sample_type[1]->unit), "nanoseconds"));
	CHECK(!strcmp(STR(pr->period_type->type), "cpu"));
	CHECK(!strcmp(STR(pr->period_type->unit), "nanoseconds"));
	CHECK(pr->period == INTERVAL_NS);
	CHECK(pr->time_nanos == (int64_t)p->start_realtime_ns);
	CHECK(pr->duration_nanos == (int64_t)p->duration_ns);

	CHECK(pr->n_mapping == 2);
	CHECK(pr->mapping[0]->id == 1 && !strcmp(STR(pr->mapping[0]->filename), "/usr/bin/app"));
	CHECK(!strcmp(STR(pr->mapping[0]->build_id), "abcdef0123"));
	CHECK(pr->mapping[0]->memory_start == 0x400000 && pr->mapping[0]->memory_limit == 0x401000);
	CHECK(pr->mapping[0]->file_offset == 0x1000);
	CHECK(pr->mapping[0]->has_functions && pr->mapping[0]->has_filenames &&
	      pr->mapping[0]->has_line_numbers && pr->mapping[0]->has_inline_frames);
	CHECK(pr->mapping[1]->has_functions && !pr->mapping[1]->has_filenames &&
	      !pr->mapping[1]->has_line_numbers && !pr->mapping[1]->has_inline_frames);

	/* ids are table index + 1, so look-ups are direct */
	for (size_t i = 0; i < pr->n_function; i++)
		CHECK(pr->function[i]->id == i + 1);
	for (size_t i = 0; i < pr->n_location; i++)
		CHECK(pr->location[i]->id == i + 1);
	Perftools__Profiles__Function *push = pr->function[F_PUSH];
	CHECK(!strcmp(STR(push->name), TEMPLATE_NAME) && !strcmp(STR(push->system_name), TEMPLATE_MANGLED));
	CHECK(!strcmp(STR(push->filename), "/usr/include/c++/12/bits/stl_vector.h") && push->start_line == 1280);
	Perftools__Profiles__Location *inl = pr->location[2];
	CHECK(inl->address == 0x400020 && inl->mapping_id == 1 && inl->n_line == 2);
	CHECK(inl->line[0]->function_id == F_SQUARE + 1 && inl->line[0]->line == 6);
	CHECK(inl->line[1]->function_id == F_COMPUTE + 1 && inl->line[1]->line == 12);
	CHECK(pr->location[0]->mapping_id == 2);

	/* one sample per (stack, thread); values sum to the totals; labels */
	CHECK(pr->n_sample == 5);
	int64_t count = 0, ns = 0;
	int saw_worker_push = 0;
	for (size_t i = 0; i < pr->n_sample; i++) {
		Perftools__Profiles__Sample *sm = pr->sample[i];
		CHECK(sm->n_value == 2 && sm->value[1] == sm->value[0] * (int64_t)INTERVAL_NS);
		count += sm->value[0];
		ns += sm->value[1];
		CHECK(sm->n_label == 2);
		CHECK(!strcmp(STR(sm->label[0]->key), "thread") && !strcmp(STR(sm->label[1]->key), "tid"));
		const char *thread = STR(sm->label[0]->str);
		int64_t tid = sm->label[1]->num;
		CHECK((!strcmp(thread, "app") && tid == 100) || (!strcmp(thread, "worker") && tid == 101));
		if (tid == 101 && sm->n_location_id == 3 && sm->location_id[0] == 5) {
			/* leaf first: push_back, main's call, libc */
			CHECK(sm->location_id[1] == 4 && sm->location_id[2] == 1 && sm->value[0] == 5);
			saw_worker_push = 1;
		}
	}
	CHECK(saw_worker_push);
	CHECK(count == profile_value_total(p, 0, NULL) && ns == profile_value_total(p, 0, NULL) * INTERVAL_NS);
	/* A CPU profile opens on cpu, as Go's do. */
	CHECK(!strcmp(STR(pr->default_sample_type), "cpu"));
#undef STR
	perftools__profiles__profile__free_unpacked(pr, NULL);
}

/* Same profile, same options: same bytes, for every format and option set. */
static void test_deterministic(void)
{
	int (*exporters[])(const struct profile *, const struct export_options *, FILE *) = {
		export_folded, export_speedscope, export_pprof
	};
	struct export_options o = { .lines = 1, .annotate_inline = 1, .thread_roots = 1, .mincount = 2 };
	for (size_t e = 0; e < 3; e++) {
		struct profile *a = build_profile(), *b = build_profile();
		size_t la, lb;
		char *x = export_to_memory(exporters[e], a, &o, &la);
		char *y = export_to_memory(exporters[e], b, &o, &lb);
		char *z = export_to_memory(exporters[e], a, &o, NULL);
		CHECKF(la == lb && !memcmp(x, y, la) && !memcmp(x, z, la), "exporter %zu", e);
		free(x);
		free(y);
		free(z);
		profile_free(a);
		profile_free(b);
	}
}

/* --mincount leaves out each format's unit of aggregation below it. */
static void test_mincount(const struct profile *p)
{
	struct export_options o = { .mincount = 5 };
	expect_folded(p, &o,
		      "__libc_start_call_main;main;compute(int);square(int) 7\n"
		      "__libc_start_call_main;main;" TEMPLATE_NAME " 5\n");

	/* speedscope: per thread and stack; every stack of app weighs < 4 */
	o.mincount = 4;
	char *text = export_to_memory(export_speedscope, p, &o, NULL);
	json_t *doc = json_loads(text, 0, NULL);
	CHECK(doc != NULL);
	json_t *profiles = json_object_get(doc, "profiles");
	CHECK(json_array_size(profiles) == 1);
	CHECK(json_integer_value(json_object_get(json_array_get(profiles, 0), "endValue")) ==
	      9 * INTERVAL_NS);
	json_decref(doc);
	free(text);

	/* pprof: per (stack, thread) sample: worker's compute (4) and push (5) */
	Perftools__Profiles__Profile *pr = pprof_of(p, &o);
	CHECK(pr && pr->n_sample == 2);
	CHECK(pr->sample[0]->value[0] == 4 && pr->sample[1]->value[0] == 5);
	perftools__profiles__profile__free_unpacked(pr, NULL);
}

/* A profile whose one function, name, has one location (0x10, in no
 * module); each of its nstacks stacks holds just that location. */
static struct profile *one_function_profile(const char *name, uint32_t nstacks)
{
	struct profile *p = build_cpu_profile(1);
	struct profile_function f = { profile_intern(p, name), profile_intern(p, "f"), 0, 0, 0, 0 };
	profile_add_function(p, &f);
	struct profile_line l = { 0, 0, 0, 0 };
	profile_add_line(p, &l);
	struct profile_location loc = { 0x10, UINT32_MAX, 0, 1, 0 };
	profile_add_location(p, &loc);
	uint32_t location = 0;
	for (uint32_t i = 0; i < nstacks; i++)
		profile_add_stack(p, &location, 1);
	return p;
}

/* export_sum_stacks sums with a dense array when stacks x threads is
 * small and with a hash of the pairs otherwise: both must give the sums a
 * plain count gives, in (stack, thread) order. */
static void test_stack_weights(void)
{
	for (int many = 0; many < 2; many++) {
		/* 2000 x 600 pairs exceed the dense limit (2^20); 20 x 6 do not */
		uint32_t nstacks = many ? 2000 : 20, nthreads = many ? 600 : 6;
		struct profile *p = one_function_profile("f", nstacks);
		for (uint32_t i = 0; i < nthreads; i++) {
			struct profile_thread t = { 1, 100 + i, 0, 0, 0, 0};
			profile_add_thread(p, &t);
		}
		uint64_t *want = calloc((size_t)nstacks * nthreads, sizeof(*want));
		uint64_t *want_stack = calloc(nstacks, sizeof(*want_stack));
		uint64_t seed = 12345;
		for (int i = 0; i < 20000; i++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			uint32_t stack = (uint32_t)(seed >> 33) % nstacks, thread = (uint32_t)(seed >> 17) % nthreads;
			int64_t weight = 1 + (int64_t)((seed >> 60) % 3);
			build_weighted_sample(p, stack, thread, (uint64_t)i, weight);
			want[(size_t)stack * nthreads + thread] += (uint64_t)weight;
			want_stack[stack] += (uint64_t)weight;
		}
		for (int by_thread = 0; by_thread < 2; by_thread++) {
			uint64_t k = 0;
			struct export_stacks sums;
			CHECK(export_sum_stacks(p, by_thread, &sums) == 0);
			uint64_t n = sums.n;
			const struct export_stack *w = sums.stacks;
			uint32_t width = by_thread ? nthreads : 1;
			for (size_t slot = 0; slot < (size_t)nstacks * width; slot++) {
				uint64_t expect = by_thread ? want[slot] : want_stack[slot];
				if (!expect)
					continue;
				CHECKF(k < n && w[k].stack == slot / width &&
					       w[k].thread == (by_thread ? slot % width : 0) &&
					       export_stack_value(p, &sums, k, 0) == (int64_t)expect &&
					       export_stack_value(p, &sums, k, 1) == (int64_t)expect,
				       "many %d by_thread %d entry %llu", many, by_thread,
				       (unsigned long long)k);
				k++;
			}
			CHECK(k == n);
			export_stacks_free(&sums);
		}
		free(want);
		free(want_stack);
		profile_free(p);
	}
}

/* Names need not be UTF-8 (Latin-1 sources, arbitrary comm bytes); the JSON
 * must still be written, and valid. */
static void test_invalid_utf8(void)
{
	struct profile *p = build_cpu_profile(1000);
	struct profile_module m = { profile_intern(p, "/opt/caf\xe9/app"), 0, 0x1000, 0x2000, 0, 0,
				    PROFILE_MODULE_HAS_FUNCTIONS };
	profile_add_module(p, &m);
	struct profile_function f = { profile_intern(p, "caf\xe9_\xff"), profile_intern(p, "caf\xe9_\xff"),
				      profile_intern(p, "caf\xe9.c"), 1, 0, 0 };
	profile_add_function(p, &f);
	struct profile_line l = { 0, profile_intern(p, "caf\xe9.c"), 2, 0 };
	profile_add_line(p, &l);
	struct profile_location loc = { 0x1010, 0, 0, 1, 0 };
	profile_add_location(p, &loc);
	uint32_t location = 0;
	profile_add_stack(p, &location, 1);
	struct profile_thread t = { 7, 7, profile_intern(p, "w\xc3"), 0, 0, 0};
	profile_add_thread(p, &t);
	build_weighted_sample(p, 0, 0, 1, 1);

	struct export_options o = { 0 };
	char *text = export_to_memory(export_speedscope, p, &o, NULL);
	json_error_t error;
	json_t *doc = json_loads(text, 0, &error);
	CHECKF(doc != NULL, "%s", error.text);
	json_t *frame = json_array_get(json_object_get(json_object_get(doc, "shared"), "frames"), 0);
	CHECK(!strcmp(json_string_value(json_object_get(frame, "name")), "caf?_?"));
	json_t *prof = json_array_get(json_object_get(doc, "profiles"), 0);
	CHECK(!strcmp(json_string_value(json_object_get(prof, "name")), "7 (w?)"));
	json_decref(doc);
	free(text);
	profile_free(p);
}

/* A string longer than the pprof writer's 64 KiB staging buffer goes to
 * deflate in one piece; it must come back whole. */
static void test_pprof_long_name(void)
{
	size_t n = 200000;
	char *name = malloc(n + 1);
	for (size_t i = 0; i < n; i++)
		name[i] = (char)('a' + i % 26);
	name[n] = '\0';
	struct profile *p = one_function_profile(name, 1);
	struct profile_thread t = { 1, 1, 0, 0, 0, 0};
	profile_add_thread(p, &t);
	build_weighted_sample(p, 0, 0, 1, 3);

	struct export_options o = { 0 };
	Perftools__Profiles__Profile *pr = pprof_of(p, &o);
	CHECK(pr && pr->n_function == 1 && pr->n_sample == 1 && pr->sample[0]->value[0] == 3);
	CHECK(!strcmp(pr->string_table[pr->function[0]->name], name));
	perftools__profiles__profile__free_unpacked(pr, NULL);
	profile_free(p);
	free(name);
}

/* A profile with no samples still gives well-formed output. */
static void test_empty(void)
{
	struct profile *p = profile_new();
	struct export_options o = { 0 };
	char *text = export_to_memory(export_folded, p, &o, NULL);
	CHECK(!strcmp(text, ""));
	free(text);
	text = export_to_memory(export_speedscope, p, &o, NULL);
	json_t *doc = json_loads(text, 0, NULL);
	CHECK(doc && json_array_size(json_object_get(doc, "profiles")) == 0);
	json_decref(doc);
	free(text);
	Perftools__Profiles__Profile *pr = pprof_of(p, &o);
	CHECK(pr && pr->n_sample == 0);
	perftools__profiles__profile__free_unpacked(pr, NULL);
	profile_free(p);
}

int main(void)
{
	struct profile *p = build_profile();
	test_folded(p);
	test_folded_sums_to_total(p);
	test_speedscope(p);
	test_pprof(p);
	test_mincount(p);
	profile_free(p);
	test_deterministic();
	test_stack_weights();
	test_invalid_utf8();
	test_pprof_long_name();
	test_empty();
	puts("unit_export: all passed");
	return 0;
}
