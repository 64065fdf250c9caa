/*
 * filter.c - hide system frames, select threads and fold inlined frames,
 * building a new profile (see filter.h for what the filters mean).
 *
 * Strings, modules, functions and lines are copied with their ids, so the
 * result shares every name with the input. Locations lose their system lines
 * (a location with some hidden lines becomes a new location holding only the
 * shown ones); stacks are rebuilt lazily, only for samples that survive, and
 * merged when hiding frames made two of them equal.
 */
#include "filter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "hashmap.h"

#define UNMAPPED UINT32_MAX
#define HIDDEN (UINT32_MAX - 1)

struct filter_state {
	const struct profile *in;
	struct profile *out;
	const struct filter_options *f;
	uint32_t *location_map; /* in location -> out location, HIDDEN or UNMAPPED */
	uint32_t *whole_map;    /* in location -> out copy with all its lines */
	uint32_t *stack_map;    /* in stack -> out stack, or UNMAPPED */
	uint32_t *thread_map;   /* in thread -> out thread, or UNMAPPED (dropped) */
	struct idmap stacks;    /* out stacks by content, to merge equal ones */
	uint32_t *scratch;      /* one stack's out locations */
	const uint32_t *seek;   /* key of the stack being looked up */
	uint32_t seek_depth;
};

static void *filled(size_t n, uint32_t value)
{
	uint32_t *a = calloc_or_abort(n, sizeof(*a));
	for (size_t i = 0; i < n; i++)
		a[i] = value;
	return a;
}

int filter_is_identity(const struct filter_options *f)
{
	return f->show_system && f->ntids == 0 && !f->no_inline;
}

/* The first line of l the filter keeps: with no_inline only the outermost. */
static uint32_t first_kept(const struct filter_state *st, const struct profile_location *l)
{
	return st->f->no_inline && l->nlines > 0 ? l->nlines - 1 : 0;
}

static int line_hidden(const struct filter_state *st, const struct profile_line *l)
{
	return !st->f->show_system &&
	       (st->in->functions[l->function].flags & PROFILE_FUNCTION_SYSTEM);
}

/* Copy location loc, keeping only its lines for which keep is set (all when whole). */
static uint32_t copy_location(struct filter_state *st, uint32_t loc, int whole)
{
	const struct profile_location *l = &st->in->locations[loc];
	struct profile_location nl = *l;
	nl.first_line = st->out->nlines;
	nl.nlines = 0;
	for (uint32_t i = first_kept(st, l); i < l->nlines; i++) {
		const struct profile_line *line = &st->in->lines[l->first_line + i];
		if (!whole && line_hidden(st, line))
			continue;
		profile_add_line(st->out, line);
		nl.nlines++;
	}
	return profile_add_location(st->out, &nl);
}

static uint32_t map_location(struct filter_state *st, uint32_t loc)
{
	if (st->location_map[loc] != UNMAPPED)
		return st->location_map[loc];
	const struct profile_location *l = &st->in->locations[loc];
	uint32_t shown = 0, first = first_kept(st, l);
	for (uint32_t i = first; i < l->nlines; i++)
		shown += !line_hidden(st, &st->in->lines[l->first_line + i]);
	uint32_t out;
	if (shown == 0)
		out = HIDDEN;
	else if (shown == l->nlines - first)
		out = st->whole_map[loc] = copy_location(st, loc, 1);
	else
		out = copy_location(st, loc, 0);
	return st->location_map[loc] = out;
}

static uint32_t map_whole_location(struct filter_state *st, uint32_t loc)
{
	if (st->whole_map[loc] == UNMAPPED)
		st->whole_map[loc] = copy_location(st, loc, 1);
	return st->whole_map[loc];
}

static uint64_t hash_locations(const uint32_t *locs, uint32_t depth)
{
	uint64_t h = depth;
	for (uint32_t i = 0; i < depth; i++)
		h = hash_combine(h, locs[i]);
	return h;
}

static int stack_equal(const void *ctx, uint32_t id)
{
	const struct filter_state *st = ctx;
	const struct profile_stack *s = &st->out->stacks[id];
	return s->depth == st->seek_depth &&
	       (!s->depth || !memcmp(st->out->stack_locations + s->first, st->seek,
				     st->seek_depth * sizeof(*st->seek)));
}

static uint32_t map_stack(struct filter_state *st, uint32_t stack)
{
	if (st->stack_map[stack] != UNMAPPED)
		return st->stack_map[stack];
	const struct profile_stack *s = &st->in->stacks[stack];
	const uint32_t *locs = st->in->stack_locations + s->first;
	uint32_t depth = 0;
	for (uint32_t i = 0; i < s->depth; i++) {
		uint32_t m = map_location(st, locs[i]);
		if (m != HIDDEN)
			st->scratch[depth++] = m;
	}
	/* Every frame hidden: keep the innermost location whole (filter.h). */
	if (depth == 0 && s->depth > 0)
		st->scratch[depth++] = map_whole_location(st, locs[0]);

	uint64_t h = hash_locations(st->scratch, depth);
	st->seek = st->scratch;
	st->seek_depth = depth;
	uint32_t id = idmap_find(&st->stacks, h, stack_equal, st);
	if (id == HASHMAP_NONE) {
		id = profile_add_stack(st->out, st->scratch, depth);
		idmap_insert(&st->stacks, h, id);
	}
	return st->stack_map[stack] = id;
}

static int tid_selected(const struct filter_options *f, uint32_t tid)
{
	if (f->ntids == 0)
		return 1;
	for (int i = 0; i < f->ntids; i++)
		if (f->tids[i] == tid)
			return 1;
	return 0;
}

/* Everything but locations, stacks and samples. */
static void copy_tables(struct filter_state *st)
{
	const struct profile *in = st->in;
	struct profile *out = st->out;
	for (uint32_t i = 1; i < in->nstrings; i++) {
		if (profile_intern(out, in->strings[i]) != i) {
			fputs("ipscope: filter: string table is not canonical\n", stderr);
			abort();
		}
	}
	for (uint32_t i = 0; i < in->nmodules; i++)
		profile_add_module(out, &in->modules[i]);
	for (uint32_t i = 0; i < in->nfunctions; i++)
		profile_add_function(out, &in->functions[i]);
	/* Lines are copied per location, so locations keep contiguous chains. */
	for (uint32_t i = 0; i < in->nthreads; i++) {
		if (!tid_selected(st->f, in->threads[i].tid))
			continue;
		struct profile_thread t = in->threads[i];
		t.samples = 0;
		t.weight = 0;
		st->thread_map[i] = profile_add_thread(out, &t);
	}
	out->command = in->command;
	out->mode = in->mode;
	out->source = in->source;
	out->interval_ns = in->interval_ns;
	out->start_realtime_ns = in->start_realtime_ns;
	out->start_ns = in->start_ns;
	out->duration_ns = in->duration_ns;
	out->lost_samples = in->lost_samples;
	out->wait_status = in->wait_status;
	out->ended = in->ended;
}

/*
 * Filter in->samples into dst (which may be in->samples itself: the write
 * index never passes the read index) and make dst the output's sample array.
 */
static void filter_samples(struct filter_state *st, struct profile_sample *dst, uint64_t dst_cap)
{
	const struct profile *in = st->in;
	struct profile *out = st->out;
	uint64_t n = 0;
	uint32_t depth_max = 1;
	for (uint32_t i = 0; i < in->nstacks; i++)
		if (in->stacks[i].depth > depth_max)
			depth_max = in->stacks[i].depth;
	st->scratch = calloc_or_abort(depth_max, sizeof(*st->scratch));
	for (uint64_t i = 0; i < in->nsamples; i++) {
		struct profile_sample s = in->samples[i];
		uint32_t t = s.thread < in->nthreads ? st->thread_map[s.thread] : UNMAPPED;
		if (t == UNMAPPED)
			continue;
		s.thread = t;
		uint32_t stack = st->stack_map[s.stack];
		s.stack = stack != UNMAPPED ? stack : map_stack(st, s.stack);
		out->threads[t].samples++;
		out->threads[t].weight += s.weight;
		out->total_weight += s.weight;
		dst[n++] = s;
	}
	free(st->scratch);
	free(out->samples);
	out->samples = dst;
	out->nsamples = n;
	out->samples_cap = dst_cap;
}

static struct profile *filter_run(const struct profile *in, const struct filter_options *f,
				  struct profile_sample *dst, uint64_t dst_cap)
{
	struct filter_state st = {.in = in, .f = f};
	st.out = profile_new();
	if (!st.out)
		abort_out_of_memory();
	st.location_map = filled(in->nlocations, UNMAPPED);
	st.whole_map = filled(in->nlocations, UNMAPPED);
	st.stack_map = filled(in->nstacks, UNMAPPED);
	st.thread_map = filled(in->nthreads, UNMAPPED);
	idmap_init(&st.stacks, in->nstacks);
	copy_tables(&st);
	filter_samples(&st, dst, dst_cap);
	idmap_free(&st.stacks);
	free(st.location_map);
	free(st.whole_map);
	free(st.stack_map);
	free(st.thread_map);
	return st.out;
}

struct profile *filter_profile(const struct profile *p, const struct filter_options *f)
{
	uint64_t cap = p->nsamples ? p->nsamples : 1;
	struct profile_sample *dst = calloc_or_abort(cap, sizeof(*dst));
	return filter_run(p, f, dst, cap);
}

struct profile *filter_profile_consume(struct profile *p, const struct filter_options *f)
{
	if (filter_is_identity(f))
		return p;
	struct profile_sample *dst = p->samples;
	uint64_t cap = p->samples_cap;
	if (!dst) {
		cap = 1;
		dst = calloc_or_abort(cap, sizeof(*dst));
	}
	struct profile *out = filter_run(p, f, dst, cap);
	p->samples = NULL; /* now out's */
	p->nsamples = 0;
	profile_free(p);
	return out;
}
