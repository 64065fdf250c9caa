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
