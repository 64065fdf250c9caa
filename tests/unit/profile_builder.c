/*
 * profile_builder.c - building profiles by hand for the unit tests (see
 * profile_builder.h).
 */
#include "profile_builder.h"

#include <stdio.h>
#include <stdlib.h>

struct profile *build_cpu_profile(int64_t interval_ns)
{
	struct profile *p = profile_new();
	if (!p) {
		fputs("profile_new failed\n", stderr);
		exit(1);
	}
	profile_set_cpu_value_types(p, interval_ns);
	p->mode = profile_intern(p, "cpu");
	p->ended = 1;
	return p;
}

uint32_t build_function(struct profile *p, const char *name, const char *file, uint32_t line,
			uint32_t module, uint32_t flags)
{
	struct profile_function f = {
		.name = profile_intern(p, name),
		.system_name = profile_intern(p, name),
		.file = profile_intern(p, file),
		.start_line = line,
		.module = module,
		.flags = flags,
	};
	return profile_add_function(p, &f);
}

uint32_t build_location(struct profile *p, uint64_t address, uint32_t module, const uint32_t *fns,
			const uint32_t *lines, int n)
{
	struct profile_location loc = {.address = address, .module = module, .first_line = p->nlines,
				       .nlines = (uint32_t)n};
	for (int i = 0; i < n; i++) {
		struct profile_line l = {
			.function = fns[i],
			.file = p->functions[fns[i]].file,
			.line = lines[i],
			.inlined = i + 1 < n,
		};
		profile_add_line(p, &l);
	}
	return profile_add_location(p, &loc);
}

uint32_t build_stack(struct profile *p, const int *root_first)
{
	uint32_t leaf_first[256];
	int n = 0;
	while (root_first[n] >= 0 && n < 256)
		n++;
	for (int i = 0; i < n; i++)
		leaf_first[i] = (uint32_t)root_first[n - 1 - i];
	return profile_add_stack(p, leaf_first, (uint32_t)n);
}

void build_sample(struct profile *p, uint32_t stack, uint32_t thread, uint64_t time_ns,
		  const int64_t *values)
{
	struct profile_sample s = {.stack = stack, .thread = thread, .time_ns = time_ns};
	profile_add_sample(p, &s, values);
}

void build_weighted_sample(struct profile *p, uint32_t stack, uint32_t thread, uint64_t time_ns,
			   int64_t weight)
{
	build_sample(p, stack, thread, time_ns, &weight);
}

struct profile *build_alloc_workload(void)
{
	struct profile *p = profile_new();
	static const char *const types[] = {"alloc_objects",	 "alloc_space",	    "inuse_objects",
					    "inuse_space",	 "peak_objects",    "peak_space",
					    "temporary_objects", "temporary_space"};
	for (int i = 0; i < 8; i++)
		profile_add_value_type(p, types[i], i % 2 ? "bytes" : "count");
	p->default_value = 1;
	p->exact = 1;
	p->ended = 1;
	p->alloc_scheme = PROFILE_ALLOCS_ALL;
	p->alloc_parameter = 1.0;
	p->alloc_peak_ns = 202;
	p->command = profile_intern(p, "./allocs");
	struct profile_module m = {.path = profile_intern(p, "/nonexistent/allocs")};
	profile_add_module(p, &m);
	struct profile_thread t = {.pid = 9, .tid = 9, .name = profile_intern(p, "allocs")};
	profile_add_thread(p, &t);
	uint32_t f_main = build_function(p, "main", "app.c", 4, 0, 0);
	uint32_t f_small = build_function(p, "make_small", "app.c", 10, 0, 0);
	uint32_t f_big = build_function(p, "make_big", "app.c", 20, 0, 0);
	uint32_t f_malloc = build_function(p, "malloc 32 B", "", 0, 0, PROFILE_FUNCTION_ALLOC_LEAF);
	uint32_t f_calloc = build_function(p, "calloc 1.0 MiB", "", 0, 0, PROFILE_FUNCTION_ALLOC_LEAF);
	uint32_t l5 = 5, l6 = 6, l11 = 11, l21 = 21, l0 = 0;
	int m5 = (int)build_location(p, 0x5, 0, &f_main, &l5, 1), m6 = (int)build_location(p, 0x6, 0, &f_main, &l6, 1);
	int small = (int)build_location(p, 0x11, 0, &f_small, &l11, 1);
	int big = (int)build_location(p, 0x21, 0, &f_big, &l21, 1);
	int leaf_small = (int)build_location(p, 0, UINT32_MAX, &f_malloc, &l0, 1);
	int leaf_big = (int)build_location(p, 0, UINT32_MAX, &f_calloc, &l0, 1);
	uint32_t s_small = build_stack(p, (int[]){m5, small, leaf_small, -1});
	uint32_t s_big = build_stack(p, (int[]){m6, big, leaf_big, -1});
	/* One row per (stack, thread, what), as load_allocs.c makes them. */
	build_sample(p, s_small, 0, 0, (int64_t[]){100, 3200, 40, 1280, 100, 3200, 0, 0});
	build_sample(p, s_big, 0, 0, (int64_t[]){3, 3 << 20, 1, 1 << 20, 3, 3 << 20, 0, 0});
	return p;
}
