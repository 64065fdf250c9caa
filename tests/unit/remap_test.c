/*
 * remap_test.c - the remapping of one profile's tables into another
 * (formats/profile/remap.h): a copy keeps every entry and, after
 * profile_remap_tables, the ids and order of strings, modules and
 * functions; by name, two runs of a rebuilt program (different addresses,
 * different string tables, functions in another order) land on the same
 * functions, locations and stacks, with file:line only when asked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile_builder.h"
#include "remap.h"

#include "check.h"

/*
 * A run of "app": main -> work -> helper (helper inlined into work in the
 * second build), main -> other. bias shifts every address, as ASLR or a
 * rebuild does; names_first interns unrelated strings first so the string
 * ids differ; reversed adds the functions in the other order.
 */
static struct profile *run(uint64_t bias, int names_first, int reversed, int inlined, uint32_t work_line)
{
	struct profile *p = build_cpu_profile(1000000);
	if (names_first) {
		profile_intern(p, "unrelated");
		profile_intern(p, "/usr/src/other.c");
	}
	struct profile_module m = {.path = profile_intern(p, reversed ? "/opt/v2/app" : "/opt/v1/app"),
				   .start = bias, .limit = bias + 0x10000, .load_bias = bias};
	profile_add_module(p, &m);
	struct profile_thread t = {7, 7, profile_intern(p, "app"), 0, 0, 0};
	profile_add_thread(p, &t);
	uint32_t f_main, f_work, f_helper, f_other;
	if (!reversed) {
		f_main = build_function(p, "main", "app.c", 1, 0, 0);
		f_work = build_function(p, "work", "app.c", 10, 0, 0);
		f_helper = build_function(p, "helper", "util.c", 3, 0, 0);
		f_other = build_function(p, "other", "app.c", 30, 0, 0);
	} else {
		f_other = build_function(p, "other", "app.c", 31, 0, 0);
		f_helper = build_function(p, "helper", "util.c", 4, 0, 0);
		f_work = build_function(p, "work", "app.c", 11, 0, 0);
		f_main = build_function(p, "main", "app.c", 1, 0, 0);
	}
	uint32_t l2 = 2, l3 = 3, l5 = 5, l31 = 31;
	int main2 = (int)build_location(p, bias + 0x100, 0, &f_main, &l2, 1);
	int main3 = (int)build_location(p, bias + 0x104, 0, &f_main, &l3, 1);
	int other = (int)build_location(p, bias + 0x300, 0, &f_other, &l31, 1);
	uint32_t stack_work;
	if (inlined) {
		uint32_t chain_fns[] = {f_helper, f_work}, chain_lines[] = {l5, work_line};
		int chain = (int)build_location(p, bias + 0x200, 0, chain_fns, chain_lines, 2);
		stack_work = build_stack(p, (int[]){main2, chain, -1});
	} else {
		int work = (int)build_location(p, bias + 0x200, 0, &f_work, &work_line, 1);
		int helper = (int)build_location(p, bias + 0x400, 0, &f_helper, &l5, 1);
		stack_work = build_stack(p, (int[]){main2, work, helper, -1});
	}
	uint32_t stack_other = build_stack(p, (int[]){main3, other, -1});
	build_weighted_sample(p, stack_work, 0, 1, 5);
	build_weighted_sample(p, stack_other, 0, 2, 3);
	return p;
}

static const char *function_name(const struct profile *p, uint32_t f)
{
	return profile_string(p, p->functions[f].name);
}

static void test_copy(void)
{
	struct profile *src = run(0x400000, 1, 0, 0, 12);
	struct profile *dst = profile_new();
	struct profile_remap *m = profile_remap_new(dst, src, 0);
	profile_remap_tables(m);
	profile_remap_run(m);
	/* Tables in order: every id the same. */
	CHECK(dst->nstrings == src->nstrings);
	for (uint32_t i = 0; i < src->nstrings; i++)
		CHECKF(!strcmp(profile_string(dst, i), profile_string(src, i)), "string %u", i);
	CHECK(dst->nfunctions == src->nfunctions && dst->nmodules == src->nmodules);
	for (uint32_t f = 0; f < src->nfunctions; f++)
		CHECK(profile_remap_function(m, f) == f);
	CHECK(dst->nvalue_types == 2 && dst->period == 1000000 && dst->default_value == 0);
	/* Lazy: nothing but what is asked for. */
	CHECK(dst->nlocations == 0 && dst->nstacks == 0);
	uint32_t s = profile_remap_stack(m, 1);
	CHECK(dst->nstacks == 1 && dst->nlocations == 2 && s == 0);
	CHECK(dst->locations[dst->stack_locations[dst->stacks[s].first]].address == 0x400300);
	CHECK(profile_remap_stack(m, 1) == s);
	profile_remap_free(m);
	profile_free(dst);
	profile_free(src);
}

/* The names a dst stack's frames have, root first, as "f:line;g:line". */
static void stack_text(const struct profile *p, uint32_t stack, char *buf, size_t len)
{
	uint32_t frames[64];
	uint32_t n = profile_stack_frames(p, stack, frames);
	size_t used = 0;
	buf[0] = '\0';
	for (uint32_t i = 0; i < n && used < len; i++) {
		const struct profile_line *l = &p->lines[frames[i]];
		used += (size_t)snprintf(buf + used, len - used, "%s%s:%u", i ? ";" : "", function_name(p, l->function),
					 l->line);
	}
}

static void test_by_name(void)
{
	/* Base and new: other addresses, other string ids, other function order. */
	struct profile *base = run(0x400000, 0, 0, 1, 12);
	struct profile *newer = run(0x7f0000000000, 1, 1, 1, 12);
	struct profile *dst = profile_new();
	profile_set_cpu_value_types(dst, 1000000);
	struct profile_remap *mb = profile_remap_new(dst, base, PROFILE_REMAP_BY_NAME);
	uint32_t b_work = profile_remap_stack(mb, 0), b_other = profile_remap_stack(mb, 1);
	profile_remap_free(mb);
	uint32_t nfunctions = dst->nfunctions, nlocations = dst->nlocations, nstacks = dst->nstacks;
	struct profile_remap *mn = profile_remap_new(dst, newer, PROFILE_REMAP_BY_NAME);
	uint32_t n_work = profile_remap_stack(mn, 0), n_other = profile_remap_stack(mn, 1);
	/* The same program, so the same frames: nothing new in dst. */
	CHECKF(n_work == b_work && n_other == b_other, "stacks %u %u vs %u %u", n_work, n_other, b_work, b_other);
	CHECK(dst->nfunctions == nfunctions && dst->nlocations == nlocations && dst->nstacks == nstacks);
	CHECK(dst->nmodules == 1 && !strcmp(profile_string(dst, dst->modules[0].path), "/opt/v1/app"));
	/* Never by address, and without PROFILE_REMAP_LINES no lines either. */
	for (uint32_t l = 0; l < dst->nlocations; l++)
		CHECK(dst->locations[l].address == 0);
	char text[256];
	stack_text(dst, n_work, text, sizeof(text));
	CHECKF(!strcmp(text, "main:0;work:0;helper:0"), "%s", text);
	CHECK(profile_remap_thread(mn, 0) == profile_remap_thread(mn, 0));
	profile_remap_free(mn);
	profile_free(dst);

	/* With lines: a call moved from work:12 to work:14 is another location
	 * (and stack), its functions still shared. */
	struct profile *moved = run(0x500000, 1, 0, 1, 14);
	dst = profile_new();
	profile_set_cpu_value_types(dst, 1000000);
	mb = profile_remap_new(dst, base, PROFILE_REMAP_BY_NAME | PROFILE_REMAP_LINES);
	b_work = profile_remap_stack(mb, 0);
	b_other = profile_remap_stack(mb, 1);
	profile_remap_free(mb);
	nfunctions = dst->nfunctions;
	mn = profile_remap_new(dst, moved, PROFILE_REMAP_BY_NAME | PROFILE_REMAP_LINES);
	n_work = profile_remap_stack(mn, 0);
	n_other = profile_remap_stack(mn, 1);
	CHECK(n_other == b_other && n_work != b_work && dst->nfunctions == nfunctions);
	stack_text(dst, n_work, text, sizeof(text));
	CHECKF(!strcmp(text, "main:2;work:14;helper:5"), "%s", text);
	stack_text(dst, b_work, text, sizeof(text));
	CHECKF(!strcmp(text, "main:2;work:12;helper:5"), "%s", text);
	profile_remap_free(mn);
	profile_free(dst);

	/* Not inlined in the new build: helper becomes a frame of its own
	 * (another stack), but main, work and helper are the same functions. */
	struct profile *outlined = run(0x600000, 0, 0, 0, 12);
	dst = profile_new();
	profile_set_cpu_value_types(dst, 1000000);
	mb = profile_remap_new(dst, base, PROFILE_REMAP_BY_NAME);
	b_work = profile_remap_stack(mb, 0);
	profile_remap_free(mb);
	nfunctions = dst->nfunctions;
	mn = profile_remap_new(dst, outlined, PROFILE_REMAP_BY_NAME);
	n_work = profile_remap_stack(mn, 0);
	CHECK(n_work != b_work && dst->nfunctions == nfunctions);
	profile_remap_free(mn);
	profile_free(dst);

	profile_free(base);
	profile_free(newer);
	profile_free(moved);
	profile_free(outlined);
}

int main(void)
{
	test_copy();
	test_by_name();
	if (check_failures)
		return check_exit_status();
	puts("remap tests passed");
	return 0;
}
