/*
 * calltree.c - report frames, stack weights and the call tree (see
 * calltree.h).
 *
 * Samples are first summed per stack (10 million samples usually share a
 * hundred thousand stacks), so the tree is built once per distinct stack,
 * never once per sample. Sums saturate rather than wrap (arith.h).
 */
#include "calltree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "arith.h"
#include "hashmap.h"

struct frame_lookup {
	const struct calltree *t;
	const struct calltree_frame *key;
};

static int frame_equal(const void *ctx, uint32_t id)
{
	const struct frame_lookup *fl = ctx;
	const struct calltree_frame *a = &fl->t->frames[id], *b = fl->key;
	return a->address == b->address && a->function == b->function && a->file == b->file &&
	       a->line == b->line && a->inlined == b->inlined;
}

static uint32_t intern_frame(struct calltree *t, struct hashmap *map, const struct calltree_frame *f)
{
	uint64_t h = hash_u64(f->address);
	h = hash_combine(h, ((uint64_t)f->function << 32) | f->file);
	h = hash_combine(h, ((uint64_t)f->line << 1) | f->inlined);
	struct frame_lookup fl = {t, f};
	uint32_t id = hashmap_find(map, h, frame_equal, &fl);
	if (id != HASHMAP_NONE)
		return id;
	ALLOC_GROW(t->frames, (uint64_t)t->nframes + 1, t->frames_cap);
	t->frames[t->nframes] = *f;
	hashmap_insert(map, h, t->nframes);
	return t->nframes++;
}

static void build_frames(struct calltree *t)
{
	const struct profile *p = t->profile;
	struct hashmap map;
	hashmap_init(&map, 1024);
	/* Every line row belongs to one location (profile.h), so its frame is
	 * known from the row alone. */
	t->line_frame = calloc_or_abort(p->nlines, sizeof(*t->line_frame));
	for (uint32_t l = 0; l < p->nlocations; l++) {
		const struct profile_location *loc = &p->locations[l];
		for (uint32_t i = 0; i < loc->nlines; i++) {
			const struct profile_line *line = &p->lines[loc->first_line + i];
			struct calltree_frame f = {
				.address = t->combine ? 0 : loc->address,
				.function = line->function,
				.file = line->file,
				.line = line->line,
				.inlined = line->inlined,
			};
			t->line_frame[loc->first_line + i] = intern_frame(t, &map, &f);
		}
	}
	hashmap_free(&map);
}

struct calltree *calltree_new(const struct profile *p, int combine, uint32_t thread, uint32_t value)
{
	struct calltree *t = calloc_or_abort(1, sizeof(*t));
	t->profile = p;
	t->combine = combine;
	t->value = value;
	t->thread = thread;
	build_frames(t);
	t->stack_value = calloc_or_abort(p->nstacks, sizeof(*t->stack_value));
	/* Sums of the counted column per stack; the other columns' sums only
	 * when there are others (a CPU trace has one, which serves both of its
	 * types). Everything is scaled once at the end. */
	int64_t columns[PROFILE_MAX_VALUE_TYPES] = { 0 };
	uint32_t ncol = p->ncolumns, col = p->value_types[value].column;
	for (uint64_t i = 0; i < p->nsamples; i++) {
		const struct profile_sample *s = &p->samples[i];
		if (thread != CALLTREE_ALL_THREADS && s->thread != thread)
			continue;
		const int64_t *v = &p->values[i * ncol];
		t->stack_value[s->stack] = sat_add_i64(t->stack_value[s->stack], v[col], &t->saturated);
		if (ncol > 1)
			for (uint32_t c = 0; c < ncol; c++)
				columns[c] = sat_add_i64(columns[c], v[c], &t->saturated);
		t->total_samples += profile_sample_count(s);
	}
	int64_t counted = 0;
	for (uint32_t s = 0; s < p->nstacks; s++) {
		if (!t->stack_value[s])
			continue; /* no samples, or a diff's zero: nothing to draw */
		counted = sat_add_i64(counted, t->stack_value[s], &t->saturated);
		t->stack_value[s] = profile_scale_value(p, value, t->stack_value[s], &t->saturated);
		uint64_t a = abs_i64(t->stack_value[s]);
		t->total_abs = t->total_abs > UINT64_MAX - a ? UINT64_MAX : t->total_abs + a;
		uint32_t n = profile_stack_nframes(p, s);
		if (n > t->max_frames)
			t->max_frames = n;
	}
	columns[col] = counted;
	for (uint32_t v = 0; v < p->nvalue_types; v++)
		t->totals[v] = profile_scale_value(p, v, columns[p->value_types[v].column], &t->saturated);
	t->total = t->totals[value];
	return t;
}

uint32_t calltree_stack_frames(const struct calltree *t, uint32_t stack, uint32_t *out)
{
	uint32_t n = profile_stack_frames(t->profile, stack, out);
	for (uint32_t i = 0; i < n; i++)
		out[i] = t->line_frame[out[i]];
	return n;
}

/* The prefix tree of the stacks with include[s] set (frames has room for
 * the deepest of them). */
static void build_nodes(struct calltree *t, const uint8_t *include, uint32_t max_frames)
{
	const struct profile *p = t->profile;
	uint32_t cap = 1024;
	t->nodes = calloc_or_abort(cap, sizeof(*t->nodes));
	t->nodes[0] = (struct calltree_node){.frame = CALLTREE_NONE, .parent = CALLTREE_NONE,
					     .first_child = CALLTREE_NONE,
					     .next_sibling = CALLTREE_NONE};
	t->nnodes = 1;
	struct hashmap edges; /* parent << 32 | frame -> child */
	hashmap_init(&edges, 4096);
	uint32_t *frames = calloc_or_abort(max_frames ? max_frames : 1, sizeof(*frames));
	t->stack_node = calloc_or_abort(p->nstacks ? p->nstacks : 1, sizeof(*t->stack_node));
	for (uint32_t s = 0; s < p->nstacks; s++) {
		int64_t w = t->stack_value[s];
		t->stack_node[s] = CALLTREE_NONE;
		if (!include[s])
			continue;
		uint32_t n = calltree_stack_frames(t, s, frames);
		uint32_t node = 0;
		t->nodes[0].count = sat_add_i64(t->nodes[0].count, w, NULL);
		for (uint32_t i = 0; i < n; i++) {
			uint32_t *child = hashmap_slot(&edges, (uint64_t)node << 32 | frames[i]);
			if (*child == HASHMAP_NONE) {
				ALLOC_GROW(t->nodes, (uint64_t)t->nnodes + 1, cap);
				struct calltree_node *parent = &t->nodes[node];
				t->nodes[t->nnodes] = (struct calltree_node){
					.frame = frames[i],
					.parent = node,
					.first_child = CALLTREE_NONE,
					.next_sibling = parent->first_child,
					.depth = parent->depth + 1,
				};
				parent->first_child = t->nnodes;
				*child = t->nnodes++;
			}
			node = *child;
			t->nodes[node].count = sat_add_i64(t->nodes[node].count, w, NULL);
		}
		t->nodes[node].self = sat_add_i64(t->nodes[node].self, w, NULL);
		t->stack_node[s] = node;
	}
	free(frames);
	hashmap_free(&edges);
	/* Give back what growth by doubling left over: a tree of every stack
	 * (a diff's) has millions of nodes and whatever the report adds per node. */
	t->nodes = realloc_or_abort(t->nodes, (size_t)t->nnodes * sizeof(*t->nodes));
	t->parents = calloc_or_abort(t->nnodes, sizeof(*t->parents));
	for (uint32_t n = 0; n < t->nnodes; n++)
		t->parents[n] = t->nodes[n].parent;
}

void calltree_build_nodes(struct calltree *t)
{
	const struct profile *p = t->profile;
	uint8_t *include = calloc_or_abort(p->nstacks ? p->nstacks : 1, 1);
	for (uint32_t s = 0; s < p->nstacks; s++)
		include[s] = t->stack_value[s] != 0;
	build_nodes(t, include, t->max_frames);
	free(include);
}

void calltree_build_all_nodes(struct calltree *t)
{
	const struct profile *p = t->profile;
	uint8_t *include = calloc_or_abort(p->nstacks ? p->nstacks : 1, 1);
	for (uint64_t i = 0; i < p->nsamples; i++)
		if (t->thread == CALLTREE_ALL_THREADS || p->samples[i].thread == t->thread)
			include[p->samples[i].stack] = 1;
	uint32_t max_frames = 0;
	for (uint32_t s = 0; s < p->nstacks; s++) {
		uint32_t n = include[s] ? profile_stack_nframes(p, s) : 0;
		max_frames = n > max_frames ? n : max_frames;
	}
	build_nodes(t, include, max_frames);
	free(include);
}

void calltree_stack_sums(const struct calltree *t, uint32_t v, const uint8_t *thread_mask, int64_t *out)
{
	const struct profile *p = t->profile;
	uint32_t col = p->value_types[v].column, ncol = p->ncolumns;
	memset(out, 0, p->nstacks * sizeof(*out));
	for (uint64_t i = 0; i < p->nsamples; i++) {
		const struct profile_sample *s = &p->samples[i];
		if ((t->thread != CALLTREE_ALL_THREADS && s->thread != t->thread) ||
		    (thread_mask && (s->thread >= p->nthreads || !thread_mask[s->thread])))
			continue;
		out[s->stack] = sat_add_i64(out[s->stack], p->values[i * ncol + col], NULL);
	}
	for (uint32_t s = 0; s < p->nstacks; s++)
		out[s] = profile_scale_value(p, v, out[s], NULL);
}

void calltree_node_sums(const struct calltree *t, const int64_t *stack_values, int64_t *inclusive,
			int64_t *self)
{
	memset(inclusive, 0, t->nnodes * sizeof(*inclusive));
	if (self)
		memset(self, 0, t->nnodes * sizeof(*self));
	for (uint32_t s = 0; s < t->profile->nstacks; s++) {
		uint32_t node = t->stack_node[s];
		if (node == CALLTREE_NONE || !stack_values[s])
			continue;
		if (self)
			self[node] = sat_add_i64(self[node], stack_values[s], NULL);
		inclusive[node] = sat_add_i64(inclusive[node], stack_values[s], NULL);
	}
	/* Every node of a path is its own (a prefix tree), so a recursive
	 * frame counts once per level; children come after their parents
	 * (calltree.h), so one backward pass adds each node into its parent:
	 * sequential, where walking every stack's parents chased pointers. */
	for (uint32_t n = t->nnodes; n-- > 1;)
		inclusive[t->parents[n]] = sat_add_i64(inclusive[t->parents[n]], inclusive[n], NULL);
}

void calltree_free(struct calltree *t)
{
	if (!t)
		return;
	free(t->frames);
	free(t->line_frame);
	free(t->stack_value);
	free(t->nodes);
	free(t->parents);
	free(t->stack_node);
	free(t);
}

int calltree_frame_compare(const struct calltree *t, uint32_t a, uint32_t b)
{
	const struct profile *p = t->profile;
	const struct calltree_frame *x = &t->frames[a], *y = &t->frames[b];
	if ((x->file == 0) != (y->file == 0))
		return x->file == 0 ? 1 : -1;
	int c = strcmp(profile_string(p, x->file), profile_string(p, y->file));
	if (c)
		return c;
	c = strcmp(profile_string(p, p->functions[x->function].name),
		   profile_string(p, p->functions[y->function].name));
	if (c)
		return c;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->address != y->address)
		return x->address < y->address ? -1 : 1;
	return (int)x->inlined - (int)y->inlined;
}

static int child_order(const void *a, const void *b, void *ctx)
{
	const struct calltree *t = ctx;
	const struct calltree_node *x = &t->nodes[*(const uint32_t *)a];
	const struct calltree_node *y = &t->nodes[*(const uint32_t *)b];
	uint64_t cx = abs_i64(x->count), cy = abs_i64(y->count);
	if (cx != cy)
		return cx > cy ? -1 : 1;
	return calltree_frame_compare(t, x->frame, y->frame);
}

uint32_t calltree_sorted_children(const struct calltree *t, uint32_t node, uint32_t **out)
{
	uint32_t n = 0;
	for (uint32_t c = t->nodes[node].first_child; c != CALLTREE_NONE; c = t->nodes[c].next_sibling)
		n++;
	uint32_t *children = calloc_or_abort(n, sizeof(*children));
	n = 0;
	for (uint32_t c = t->nodes[node].first_child; c != CALLTREE_NONE; c = t->nodes[c].next_sibling)
		children[n++] = c;
	qsort_r(children, n, sizeof(*children), child_order, (void *)t);
	*out = children;
	return n;
}
