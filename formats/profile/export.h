/*
 * export.h - write a profile (profile.h) in the formats other tools read:
 * folded stacks (flamegraph.pl, inferno), speedscope JSON and pprof.
 *
 * Exporters are views over the one data model: every frame, name, inline
 * chain and value comes from the profile as loaded and filtered; an exporter
 * only walks stacks and encodes. Output depends on nothing but the profile
 * and the options (no clock, no hash or pointer order), so the same input
 * gives the same bytes.
 */
#ifndef IPSCOPE_EXPORT_H
#define IPSCOPE_EXPORT_H

#include <stdint.h>
#include <stdio.h>

#include "profile.h"

struct export_options {
	uint32_t value;      /* the value type exported (an index of p->value_types):
				folded counts and --mincount are in it; speedscope and
				pprof's default show profile_display_value(p, value) */
	int lines;           /* folded, speedscope: one frame per source line ("f:12") */
	int annotate_inline; /* folded: suffix inlined frames with "_[i]" */
	int thread_roots;    /* folded: each stack starts with its thread's frame */
	uint64_t mincount;   /* leave out what weighs less (in absolute value): folded
				lines, pprof samples, a thread's samples of one stack in
				speedscope */
};

/* "root;...;leaf count" lines, sorted, one per distinct rendered stack;
 * count is the value of type o->value (signed). 0, or -1 with errno set. */
int export_folded(const struct profile *p, const struct export_options *o, FILE *out);

/* speedscope file-format JSON, one sampled profile per thread, heaviest
 * first, samples in time order, weights of profile_display_value(p, o->value)
 * in its unit. 0, or -1 with errno set. */
int export_speedscope(const struct profile *p, const struct export_options *o, FILE *out);

/* gzip-compressed pprof perftools.profiles.Profile: every value type of p
 * as sample_type, default_sample_type profile_display_value(p, o->value),
 * period_type and period from p (an allocation type's: a heap profile's
 * space/bytes); one Sample per distinct (stack, thread)
 * with labels "thread" (name) and "tid"; o->lines and o->thread_roots do
 * not apply. 0, or -1 with errno set. */
int export_pprof(const struct profile *p, const struct export_options *o, FILE *out);

#endif
