/*
 * filter.c - hide system frames, select threads and fold inlined frames,
 * building a new profile (see filter.h for what the filters mean; the
 * selections of many programs, --comm, --module, --focus and --ignore, are
 * judged in filter_select.c).
 *
 * The copy goes through the remapping of formats/profile/remap.h: strings,
 * modules and functions are mapped first and in order, so they keep their
 * ids; whole locations and threads are mapped as samples need them.
 * Locations lose their system lines (a location with some hidden lines
 * becomes a new location holding only the shown ones); stacks are rebuilt
 * lazily, only for samples that survive, and merged when hiding frames made
 * two of them equal. Samples keep their values (all columns), but for a
 * view of the allocations, whose types count only the view's blocks
 * (restrict_row).
 */
#include "filter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "arith.h"
#include "hashmap.h"
#include "remap.h"

#define UNMAPPED UINT32_MAX
#define HIDDEN (UINT32_MAX - 1)

struct filter_state {
	const struct profile *in;
	struct profile *out;
	const struct filter_options *f;
	struct profile_remap *remap;
	uint32_t *location_map; /* in location -> out location, HIDDEN or UNMAPPED */
	uint32_t *whole_map;    /* in location -> out copy with all its lines */
	uint32_t *stack_map;    /* in stack -> out stack, or UNMAPPED */
	uint32_t *off_stack_map; /* the same for off-CPU samples (their leaf kept), NULL until needed */
	uint32_t *thread_map;   /* in thread -> out thread, or UNMAPPED (dropped) */
	struct hashmap stacks;  /* out stacks by content, to merge equal ones */
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

const char *filter_view_type(enum filter_view view)
{
	return view == FILTER_VIEW_LEAKS ? "inuse_space" : view == FILTER_VIEW_PEAK ? "peak_space"
						       : view == FILTER_VIEW_TEMPORARY ? "temporary_space" : NULL;
}

const char *filter_view_option(enum filter_view view)
{
	return view == FILTER_VIEW_LEAKS ? "--leaks" : view == FILTER_VIEW_PEAK ? "--peak"
						 : view == FILTER_VIEW_TEMPORARY ? "--temporary" : NULL;
}

/* Per stack of in: whether the view keeps its rows (the view's objects or bytes summed not 0). */
static uint8_t *view_stacks(const struct profile *in, enum filter_view view, uint32_t *type)
{
	*type = view ? profile_find_value_type(in, filter_view_type(view)) : PROFILE_NO_VALUE;
	if (*type == PROFILE_NO_VALUE)
		return NULL;
	uint32_t objects = *type - 1; /* X_objects precedes X_space (load_allocs.c) */
	int64_t *sum_b = calloc_or_abort(in->nstacks ? in->nstacks : 1, sizeof(*sum_b));
	int64_t *sum_o = calloc_or_abort(in->nstacks ? in->nstacks : 1, sizeof(*sum_o));
	for (uint64_t i = 0; i < in->nsamples; i++) {
		sum_b[in->samples[i].stack] += profile_sample_value(in, i, *type);
		sum_o[in->samples[i].stack] += profile_sample_value(in, i, objects);
	}
	uint8_t *keep = calloc_or_abort(in->nstacks ? in->nstacks : 1, 1);
	for (uint32_t s = 0; s < in->nstacks; s++)
		keep[s] = sum_b[s] != 0 || sum_o[s] != 0;
	free(sum_b);
	free(sum_o);
	return keep;
}

/*
 * A view restricts every allocation type to its blocks. Per row (a key: one
 * stack, thread and size) the view's own objects and bytes are its blocks'
 * count and size, so they are what alloc_* becomes; inuse of temporaries
 * and temporary of leaked blocks are 0 (the one freed at once, the other
 * never freed). The loader does not keep which of a view's blocks are in
 * another view too (leaked and live at the peak, temporary and live at the
 * peak), so those types leave the profile (view_lacks) rather than show
 * the figures of every block of the kept stacks.
 */
static const char *const alloc_types[8] = {
	"alloc_objects", "alloc_space", "inuse_objects", "inuse_space",
	"peak_objects", "peak_space", "temporary_objects", "temporary_space",
};

/* Index in alloc_types of the view's objects type. */
static int view_pair(enum filter_view view)
{
	return view == FILTER_VIEW_LEAKS ? PROFILE_ALLOC_RUN_INUSE : view == FILTER_VIEW_PEAK ? PROFILE_ALLOC_RUN_PEAK
											     : PROFILE_ALLOC_RUN_TEMPORARY;
}

/* Pair (an index in alloc_types) under view: 'k' kept as it is, 'v' the view's
 * figures, '0' zero, '-' not known for the view's blocks. */
static char view_effect(enum filter_view view, int pair)
{
	int own = view_pair(view);
	if (pair == own)
		return 'k';
	if (pair == PROFILE_ALLOC_RUN_ALLOC)
		return 'v';
	if ((view == FILTER_VIEW_LEAKS && pair == PROFILE_ALLOC_RUN_TEMPORARY) ||
	    (view == FILTER_VIEW_TEMPORARY && pair == PROFILE_ALLOC_RUN_INUSE))
		return '0';
	return '-';
}

static const char *const pair_blocks[8] = {
	[PROFILE_ALLOC_RUN_INUSE] = "leaked", [PROFILE_ALLOC_RUN_PEAK] = "live at the peak",
	[PROFILE_ALLOC_RUN_TEMPORARY] = "temporary",
};

const char *filter_view_lacks(enum filter_view view, const char *type, char *buf, size_t len)
{
	for (int t = 0; view && t < 8; t++) {
		int pair = t & ~1;
		if (strcmp(type, alloc_types[t]) || view_effect(view, pair) != '-')
			continue;
		snprintf(buf, len, "which of the %s blocks were also %s is not recorded", pair_blocks[view_pair(view)],
			 pair_blocks[pair]);
		return buf;
	}
	return NULL;
}

/* The columns of in's allocation types, or 0 when in lacks one (no view applies). */
static int alloc_columns(const struct profile *in, uint32_t *columns)
{
	for (int t = 0; t < 8; t++) {
		uint32_t v = profile_find_value_type(in, alloc_types[t]);
		if (v == PROFILE_NO_VALUE || in->value_types[v].scale != 1)
			return 0;
		columns[t] = in->value_types[v].column;
	}
	return 1;
}

/* One row's values restricted to the view's blocks (see alloc_types). */
static void restrict_row(int64_t *values, enum filter_view view, const uint32_t *columns)
{
	int own = view_pair(view);
	for (int t = 0; t < 8; t++) {
		char e = view_effect(view, t & ~1);
		if (e == 'v')
			values[columns[t]] = values[columns[own + (t & 1)]];
		else if (e == '0')
			values[columns[t]] = 0;
	}
}

/* Remove from out the types the view does not know for its blocks. */
static void drop_unknown_types(struct profile *out, enum filter_view view)
{
	uint32_t n = 0, map[PROFILE_MAX_VALUE_TYPES];
	for (uint32_t v = 0; v < out->nvalue_types; v++) {
		const char *name = profile_string(out, out->value_types[v].type);
		int drop = 0;
		for (int t = 0; t < 8; t++)
			drop |= !strcmp(name, alloc_types[t]) && view_effect(view, t & ~1) == '-';
		map[v] = drop ? PROFILE_NO_VALUE : n;
		if (!drop)
			out->value_types[n++] = out->value_types[v];
	}
	out->nvalue_types = n;
	if (out->default_value < PROFILE_MAX_VALUE_TYPES)
		out->default_value = map[out->default_value];
	if (out->period_type != PROFILE_NO_VALUE)
		out->period_type = map[out->period_type];
}

int filter_is_identity(const struct filter_options *f)
{
	return f->show_system && f->ntids == 0 && f->npids == 0 && f->state == FILTER_STATE_ANY && !f->no_inline &&
	       !f->view && !f->ncomms && !f->nmodules && !f->nfocus && !f->nignore;
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

/* Copy location loc with only its shown lines (whole ones: the remapping's). */
static uint32_t copy_location(struct filter_state *st, uint32_t loc, int whole)
{
	const struct profile_location *l = &st->in->locations[loc];
	if (whole && first_kept(st, l) == 0)
		return profile_remap_location(st->remap, loc);
	struct profile_location nl = *l;
	nl.module = profile_remap_module(st->remap, l->module);
	nl.first_line = st->out->nlines;
	nl.nlines = 0;
	for (uint32_t i = first_kept(st, l); i < l->nlines; i++) {
		struct profile_line line = st->in->lines[l->first_line + i];
		if (!whole && line_hidden(st, &line))
			continue;
		line.function = profile_remap_function(st->remap, line.function);
		line.file = profile_remap_string(st->remap, line.file);
		profile_add_line(st->out, &line);
		nl.nlines++;
	}
	return profile_add_location(st->out, &nl);
}

/* Whether loc is what was allocated (an allocation profile's leaf), not a frame. */
static int is_alloc_leaf(const struct filter_state *st, uint32_t loc)
{
	const struct profile_location *l = &st->in->locations[loc];
	return l->nlines > 0 &&
	       (st->in->functions[st->in->lines[l->first_line].function].flags & PROFILE_FUNCTION_ALLOC_LEAF);
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

static int stack_equal(const void *ctx, uint32_t id)
{
	const struct filter_state *st = ctx;
	return profile_stack_is(st->out, id, st->seek, st->seek_depth);
}

/* A location of the outermost line of loc alone (the blocking call of an off-CPU stack). */
static uint32_t outermost_line_location(struct filter_state *st, uint32_t loc)
{
	const struct profile_location *l = &st->in->locations[loc];
	struct profile_location nl = *l;
	struct profile_line line = st->in->lines[l->first_line + l->nlines - 1];
	line.function = profile_remap_function(st->remap, line.function);
	line.file = profile_remap_string(st->remap, line.file);
	line.inlined = 0;
	nl.module = profile_remap_module(st->remap, l->module);
	nl.first_line = profile_add_line(st->out, &line);
	nl.nlines = 1;
	return profile_add_location(st->out, &nl);
}

static uint32_t map_stack(struct filter_state *st, uint32_t stack, int off_cpu)
{
	uint32_t *map = st->stack_map;
	if (off_cpu && !st->f->show_system) {
		if (!st->off_stack_map)
			st->off_stack_map = filled(st->in->nstacks, UNMAPPED);
		map = st->off_stack_map;
	}
	if (map[stack] != UNMAPPED)
		return map[stack];
	const struct profile_stack *s = &st->in->stacks[stack];
	const uint32_t *locs = st->in->stack_locations + s->first;
	uint32_t depth = 0, frames_shown = 0, innermost_hidden = UINT32_MAX;
	for (uint32_t i = 0; i < s->depth; i++) {
		uint32_t m = map_location(st, locs[i]);
		if (m == HIDDEN && innermost_hidden == UINT32_MAX)
			innermost_hidden = i;
		/* Off CPU: the last hidden location before the first shown one names the call it waits in. */
		if (m != HIDDEN && depth == 0 && i > 0 && map != st->stack_map)
			st->scratch[depth++] = outermost_line_location(st, locs[i - 1]);
		if (m != HIDDEN) {
			st->scratch[depth++] = m;
			frames_shown += !is_alloc_leaf(st, locs[i]);
		}
	}
	/* Every frame hidden (but what was allocated, a leaf no report shows as a frame: libstdc++'s
	 * exception pool, allocated in the loader's call of its constructor): keep the innermost hidden
	 * location whole (filter.h), so the cost has a frame to be charged to. */
	if (frames_shown == 0 && innermost_hidden != UINT32_MAX)
		st->scratch[depth++] = map_whole_location(st, locs[innermost_hidden]);

	uint64_t h = profile_locations_hash(st->scratch, depth);
	st->seek = st->scratch;
	st->seek_depth = depth;
	uint32_t id = hashmap_find(&st->stacks, h, stack_equal, st);
	if (id == HASHMAP_NONE) {
		id = profile_add_stack(st->out, st->scratch, depth);
		hashmap_insert(&st->stacks, h, id);
	}
	return map[stack] = id;
}

static int pid_selected(const struct filter_options *f, uint32_t pid)
{
	if (f->npids == 0)
		return 1;
	for (int i = 0; i < f->npids; i++)
		if (f->pids[i] == pid)
			return 1;
	return 0;
}

static int state_selected(const struct filter_options *f, uint32_t label)
{
	if (f->state == FILTER_STATE_ANY)
		return 1;
	return (f->state == FILTER_STATE_OFF_CPU) == (PROFILE_LABEL_OFF_CPU(label) != 0);
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

/* Everything but locations, stacks and samples: tables in order, the
 * selected threads, the value types and what the trace says of the run. */
static void copy_tables(struct filter_state *st)
{
	const struct profile *in = st->in;
	profile_remap_tables(st->remap);
	profile_remap_run(st->remap);
	for (uint32_t i = 0; i < in->nthreads; i++)
		if (tid_selected(st->f, in->threads[i].tid) && pid_selected(st->f, in->threads[i].pid) &&
		    filter_comm_selected(in, i, st->f))
			st->thread_map[i] = profile_remap_thread(st->remap, i);
}

/*
 * Filter in's samples and values into dst and dst_values (which may be in's
 * own arrays: the write index never passes the read index) and make them
 * the output's.
 */
static void filter_samples(struct filter_state *st, struct profile_sample *dst, uint64_t dst_cap,
			   int64_t *dst_values, uint64_t dst_values_cap)
{
	const struct profile *in = st->in;
	struct profile *out = st->out;
	uint32_t ncol = in->ncolumns;
	uint64_t n = 0;
	uint32_t depth_max = 1;
	for (uint32_t i = 0; i < in->nstacks; i++)
		if (in->stacks[i].depth > depth_max)
			depth_max = in->stacks[i].depth;
	st->scratch = calloc_or_abort(depth_max, sizeof(*st->scratch));
	uint32_t view_type;
	uint8_t *keep = view_stacks(in, st->f->view, &view_type);
	if (view_type != PROFILE_NO_VALUE)
		out->default_value = view_type;
	uint8_t *selected = filter_select_stacks(in, st->f); /* --module, --focus, --ignore */
	/* Rows binned in time (plots) keep their figures: a bin's net inuse
	 * change is not its leaked blocks' allocations. */
	uint32_t columns[8];
	int restrict_rows = keep && !in->time_resolution_ns && alloc_columns(in, columns);
	int64_t run[8] = {0}; /* the selected samples' figures before the view keeps its blocks */
	for (uint64_t i = 0; i < in->nsamples; i++) {
		struct profile_sample s = in->samples[i];
		uint32_t t = s.thread < in->nthreads ? st->thread_map[s.thread] : UNMAPPED;
		if (t == UNMAPPED || !state_selected(st->f, s.label) || (selected && !selected[s.stack]))
			continue;
		for (int k = 0; restrict_rows && k < 8; k++) /* before row n, which may be row i, changes */
			run[k] = sat_add_i64(run[k], in->values[i * ncol + columns[k]], NULL);
		if (keep && !keep[s.stack])
			continue;
		s.thread = t;
		int off = PROFILE_LABEL_OFF_CPU(s.label) != 0;
		uint32_t stack = off ? UNMAPPED : st->stack_map[s.stack];
		s.stack = stack != UNMAPPED ? stack : map_stack(st, s.stack, off);
		memmove(dst_values + n * ncol, in->values + i * ncol, ncol * sizeof(*dst_values));
		if (restrict_rows)
			restrict_row(dst_values + n * ncol, st->f->view, columns);
		dst[n++] = s;
	}
	if (restrict_rows) {
		out->alloc_view = profile_intern(out, filter_view_type(st->f->view));
		memcpy(out->alloc_run, run, sizeof(run));
		drop_unknown_types(out, st->f->view);
	}
	free(st->scratch);
	free(keep);
	free(selected);
	free(out->samples);
	free(out->values);
	out->samples = dst;
	out->nsamples = n;
	out->samples_cap = dst_cap;
	out->values = dst_values;
	out->values_cap = dst_values_cap;
}

static struct profile *filter_run(const struct profile *in, const struct filter_options *f,
				  struct profile_sample *dst, uint64_t dst_cap, int64_t *dst_values,
				  uint64_t dst_values_cap)
{
	struct filter_state st = {.in = in, .f = f};
	st.out = profile_new();
	if (!st.out)
		abort_out_of_memory();
	st.remap = profile_remap_new(st.out, in, 0);
	st.location_map = filled(in->nlocations, UNMAPPED);
	st.whole_map = filled(in->nlocations, UNMAPPED);
	st.stack_map = filled(in->nstacks, UNMAPPED);
	st.thread_map = filled(in->nthreads, UNMAPPED);
	hashmap_init(&st.stacks, in->nstacks);
	copy_tables(&st);
	filter_samples(&st, dst, dst_cap, dst_values, dst_values_cap);
	profile_remap_free(st.remap);
	hashmap_free(&st.stacks);
	free(st.location_map);
	free(st.whole_map);
	free(st.stack_map);
	free(st.off_stack_map);
	free(st.thread_map);
	return st.out;
}

struct profile *filter_profile(const struct profile *p, const struct filter_options *f)
{
	uint64_t cap = p->nsamples ? p->nsamples : 1;
	struct profile_sample *dst = calloc_or_abort(cap, sizeof(*dst));
	int64_t *values = calloc_or_abort(cap * (p->ncolumns ? p->ncolumns : 1), sizeof(*values));
	return filter_run(p, f, dst, cap, values, cap * (p->ncolumns ? p->ncolumns : 1));
}

struct profile *filter_profile_consume(struct profile *p, const struct filter_options *f)
{
	if (filter_is_identity(f))
		return p;
	struct profile_sample *dst = p->samples;
	int64_t *values = p->values;
	uint64_t cap = p->samples_cap, values_cap = p->values_cap;
	if (!dst || !values) {
		free(dst);
		free(values);
		cap = values_cap = 1;
		dst = calloc_or_abort(cap, sizeof(*dst));
		values = calloc_or_abort(values_cap, sizeof(*values));
		p->nsamples = 0;
	}
	p->samples = NULL; /* now out's: filter_run reads them through in */
	p->values = NULL;
	struct profile tmp = *p; /* in, with the arrays it is being filtered from */
	tmp.samples = dst;
	tmp.values = values;
	struct profile *out = filter_run(&tmp, f, dst, cap, values, values_cap);
	p->nsamples = 0;
	profile_free(p);
	return out;
}

struct profile *filter_sum_samples(struct profile *p)
{
	uint32_t ncol = p->ncolumns;
	int64_t *values = p->values;
	struct hashmap index; /* stack << 32 | thread -> pair */
	hashmap_init(&index, 1024);
	uint64_t n = 0, last = 0, last_key = UINT64_MAX;
	/* Pair n is written at row n, which is never past the row being read. */
	for (uint64_t i = 0; i < p->nsamples; i++) {
		const struct profile_sample s = p->samples[i];
		uint64_t key = (uint64_t)s.stack << 32 | s.thread;
		if (key != last_key) {
			uint32_t *slot = hashmap_slot(&index, key);
			last_key = key;
			if (*slot == HASHMAP_NONE) {
				if (n >= UINT32_MAX - 1)
					abort_with_message("too many (stack, thread) pairs");
				*slot = (uint32_t)n;
				p->samples[n] = (struct profile_sample){.stack = s.stack, .thread = s.thread};
				memmove(values + n * ncol, values + i * ncol, ncol * sizeof(*values));
				last = n++;
				continue;
			}
			last = *slot;
		}
		for (uint32_t c = 0; c < ncol; c++)
			values[last * ncol + c] = sat_add_i64(values[last * ncol + c], values[i * ncol + c], NULL);
	}
	hashmap_free(&index);
	p->nsamples = n;
	return p;
}
