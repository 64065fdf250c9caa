/*
 * profile_builder.h - the one way the unit tests build profiles by hand
 * (report_test.c, export_test.c, values_test.c, remap_test.c, view_test.c,
 * source_test.c...): functions, locations with inline chains, stacks given
 * root first, samples with values, on a profile that has CPU value types or
 * types of the test's own; and one allocation run with known answers.
 */
#ifndef IPSCOPE_TESTS_PROFILE_BUILDER_H
#define IPSCOPE_TESTS_PROFILE_BUILDER_H

#include <stdint.h>

#include "profile.h"

/* An empty profile with samples/count and cpu/nanoseconds (x interval_ns),
 * mode "cpu", ended. */
struct profile *build_cpu_profile(int64_t interval_ns);

/* A function named name (its own linkage name), defined at file:line in module. */
uint32_t build_function(struct profile *p, const char *name, const char *file, uint32_t line,
			uint32_t module, uint32_t flags);

/* A location at address in module whose inline chain is fns[0..n) at
 * lines[0..n), innermost first (each line in its function's file). */
uint32_t build_location(struct profile *p, uint64_t address, uint32_t module, const uint32_t *fns,
			const uint32_t *lines, int n);

/* A stack of locations given root first, -1 terminated (stored leaf first). */
uint32_t build_stack(struct profile *p, const int *root_first);

/* A sample of stack in thread at time_ns with one value per stored column. */
void build_sample(struct profile *p, uint32_t stack, uint32_t thread, uint64_t time_ns,
		  const int64_t *values);

/* The common case of a CPU profile: a sample of weight timer periods. */
void build_weighted_sample(struct profile *p, uint32_t stack, uint32_t thread, uint64_t time_ns,
			   int64_t weight);

/*
 * An allocation run as the loader makes its profile (analyze/load/load_allocs.c:
 * value types alloc_, inuse_, peak_ and temporary_ objects and space,
 * default alloc_space, exact, alloc_scheme ALL; one row per (stack, thread,
 * what was allocated), the leaves flagged PROFILE_FUNCTION_ALLOC_LEAF), all
 * in app.c:
 *   main:5 make_small:11 [malloc 32 B]    100 x 32 B, 60 of them freed at the end
 *   main:6 make_big:21 [calloc 1.0 MiB]    3 x 1 MiB, 2 freed
 * In time: the 100 small, the 3 big (the peak: 3 MiB + 3200 B, 103 blocks),
 * then the frees; none is temporary. Leaks: 40 small (1280 B) and 1 big:
 * 1 MiB + 1280 B in 41 blocks.
 */
struct profile *build_alloc_workload(void);

#endif
