/*
 * view_model.c - the viewer's model (view.h): datasets, values per type and
 * thread selection, sorted children, and the rows the expansion shows.
 *
 * Built once: the profile is summed per (stack, thread) (filter.h), so a
 * 10-million-sample trace becomes the few hundred thousand pairs it
 * really has; the call tree of every stack those name is built once
 * (calltree_build_all_nodes: a stack whose value is 0 in one type may not
 * be in another, as a malloc(0) has objects but no bytes), and its
 * children laid out in one array. Each value type then gets, lazily and
 * for the thread selection only, its per-stack and per-node sums
 * (calltree_stack_sums and calltree_node_sums over the pairs) and a
 * per-node sort of the children, made when a node is first expanded or
 * walked: a key never sorts the whole tree or reads a raw sample.
 */
#include "view_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "arith.h"
#include "filter.h"
#include "terminal.h"

/* Forget a rank's values (the thread selection changed); its arrays stay for the next. */
static void rank_reset(struct view_rank *r)
{
	if (r->flat_ready) {
		flat_table_free(&r->flat);
		free(r->flat_order);
		r->flat_order = NULL;
	}
	if (r->source_ready)
		source_table_free(&r->source);
	r->flat_ready = r->source_ready = r->ready = 0;
}

static void rank_free(struct view_rank *r)
{
	rank_reset(r);
	free(r->stack);
	free(r->incl);
	free(r->order);
	free(r->pos);
	free(r->sorted);
	memset(r, 0, sizeof(*r));
}

static void data_totals(struct view *v, struct view_data *d)
{
	const struct profile *p = d->p;
	int64_t columns[PROFILE_MAX_VALUE_TYPES] = {0};
	d->saturated = 0;
	for (uint64_t i = 0; i < p->nsamples; i++) {
		if (v->thread_mask && !v->thread_mask[p->samples[i].thread])
			continue;
		for (uint32_t c = 0; c < p->ncolumns; c++)
			columns[c] = sat_add_i64(columns[c], p->values[i * p->ncolumns + c], &d->saturated);
	}
	for (uint32_t t = 0; t < p->nvalue_types; t++)
		d->totals[t] = profile_scale_value(p, t, columns[p->value_types[t].column], &d->saturated);
}

static void data_build(struct view *v, struct view_data *d, struct profile *p, const char *name, const char *about)
{
	diag_progress(v->o.diag, "building the call tree (%s): %llu samples", name,
		      (unsigned long long)profile_samples_total(p));
	d->name = name;
	d->about = about;
	if (d->view == FILTER_VIEW_NONE)
		for (uint32_t t = 0; t < PROFILE_MAX_VALUE_TYPES; t++)
			d->type_map[t] = t;
	d->p = filter_sum_samples(p);
	d->t = calltree_new(d->p, v->o.combine, CALLTREE_ALL_THREADS, d->p->default_value < d->p->nvalue_types
									      ? d->p->default_value
									      : 0);
	calltree_build_all_nodes(d->t);
	uint32_t n = d->t->nnodes;
	d->child_start = calloc_or_abort((size_t)n + 1, sizeof(*d->child_start));
	d->child_list = calloc_or_abort(n, sizeof(*d->child_list));
	for (uint32_t i = 1; i < n; i++)
		d->child_start[d->t->nodes[i].parent + 1]++;
	for (uint32_t i = 0; i < n; i++)
		d->child_start[i + 1] += d->child_start[i];
	uint32_t *fill = calloc_or_abort(n, sizeof(*fill));
	for (uint32_t i = 1; i < n; i++) {
		uint32_t parent = d->t->nodes[i].parent;
		d->child_list[d->child_start[parent] + fill[parent]++] = i;
	}
	free(fill);
	d->expanded = calloc_or_abort(n, 1);
	d->flat_selected = UINT32_MAX;
	data_totals(v, d);
	diag_progress(v->o.diag, "%s", "");
}

static void data_free(struct view_data *d)
{
	for (uint32_t t = 0; t < PROFILE_MAX_VALUE_TYPES; t++)
		rank_free(&d->ranks[t]);
	calltree_free(d->t);
	profile_free(d->p);
	free(d->child_start);
	free(d->child_list);
	free(d->expanded);
	free(d->topmost[0]);
	free(d->topmost[1]);
}

struct view_rank *view_rank(struct view *v)
{
	return view_rank_of(v, view_value(v));
}

struct view_rank *view_rank_of(struct view *v, uint32_t type)
{
	struct view_data *d = view_cur(v);
	struct view_rank *r = &d->ranks[type];
	if (r->ready)
		return r;
	const struct calltree *t = d->t;
	uint32_t ns = d->p->nstacks ? d->p->nstacks : 1, nn = t->nnodes;
	/* The arrays of an earlier selection are reused: a new thread costs
	 * no page faults on a tree of millions of nodes. */
	if (!r->stack) {
		r->stack = calloc_or_abort(ns, sizeof(*r->stack));
		r->incl = calloc_or_abort(nn, sizeof(*r->incl));
		r->order = calloc_or_abort(nn, sizeof(*r->order));
		r->pos = calloc_or_abort(nn, sizeof(*r->pos));
		r->sorted = calloc_or_abort(nn, 1);
	}
	calltree_stack_sums(t, type, v->thread_mask, r->stack);
	calltree_node_sums(t, r->stack, r->incl, NULL);
	r->total_abs = 0;
	for (uint32_t s = 0; s < d->p->nstacks; s++) {
		uint64_t a = t->stack_node[s] == CALLTREE_NONE ? 0 : abs_i64(r->stack[s]);
		r->total_abs = r->total_abs > UINT64_MAX - a ? UINT64_MAX : r->total_abs + a;
	}
	memcpy(r->order, d->child_list, nn * sizeof(*r->order));
	memset(r->sorted, 0, nn);
	r->ready = 1;
	return r;
}

struct child_order {
	const struct view_rank *r;
	const struct calltree *t;
};

static int by_incl(const void *a, const void *b, void *ctx)
{
	const struct child_order *co = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t cx = abs_i64(co->r->incl[x]), cy = abs_i64(co->r->incl[y]);
	if (cx != cy)
		return cx > cy ? -1 : 1;
	return calltree_frame_compare(co->t, co->t->nodes[x].frame, co->t->nodes[y].frame);
}

const uint32_t *view_children(struct view *v, uint32_t node, uint32_t *n)
{
	struct view_data *d = view_cur(v);
	struct view_rank *r = view_rank(v);
	uint32_t start = d->child_start[node];
	*n = d->child_start[node + 1] - start;
	if (!r->sorted[node]) {
		struct child_order co = {r, d->t};
		qsort_r(r->order + start, *n, sizeof(*r->order), by_incl, &co);
		for (uint32_t i = 0; i < *n; i++)
			r->pos[r->order[start + i]] = i;
		r->sorted[node] = 1;
	}
	return r->order + start;
}

int view_child_shown(struct view *v, uint32_t parent, uint32_t child)
{
	const struct view_rank *r = view_rank(v);
	if (r->incl[child] == 0)
		return 0;
	if (!(v->noisefloor > 0) && !v->mincount)
		return 1;
	/* The filters judge sample counts (profile_count_type), whatever the
	 * unit shown: a noisefloor of nanoseconds would mean nothing. */
	uint32_t count = profile_count_type(view_cur(v)->p, view_value(v));
	if (count != PROFILE_NO_VALUE)
		r = view_rank_of(v, count);
	uint64_t c = abs_i64(r->incl[child]);
	if (c < v->mincount)
		return 0;
	/* As tree's noisefloor: never at the top level. */
	if (v->noisefloor > 0 && parent != 0 && (double)c < floor(v->noisefloor * sqrt((double)abs_i64(r->incl[parent]))))
		return 0;
	return 1;
}

void view_rows_update(struct view *v)
{
	if (!v->rows_dirty)
		return;
	struct view_data *d = view_cur(v);
	const struct calltree *t = d->t;
	uint32_t *stack = NULL, top = 0, cap = 0, n;
	v->nrows = 0;
	ALLOC_GROW(stack, 1, cap);
	stack[top++] = 0;
	while (top) {
		uint32_t node = stack[--top];
		if (node) {
			ALLOC_GROW(v->rows, (uint64_t)v->nrows + 1, v->rows_cap);
			v->rows[v->nrows++] = node;
		}
		if (node && !d->expanded[node])
			continue;
		const uint32_t *kids = view_children(v, node, &n);
		for (uint32_t i = n; i-- > 0;) {
			if (!view_child_shown(v, node, kids[i]))
				continue;
			ALLOC_GROW(stack, (uint64_t)top + 1, cap);
			stack[top++] = kids[i];
		}
	}
	free(stack);
	/* The cursor on the selected node, or on its nearest shown ancestor. */
	uint32_t want = d->selected, best_depth = 0;
	v->cursor = 0;
	if (want && want < t->nnodes) {
		uint8_t *ancestor = calloc_or_abort(t->nnodes, 1);
		for (uint32_t a = want; a && a != CALLTREE_NONE; a = t->nodes[a].parent)
			ancestor[a] = 1;
		for (uint32_t i = 0; i < v->nrows; i++) {
			uint32_t node = v->rows[i];
			if (ancestor[node] && t->nodes[node].depth > best_depth) {
				best_depth = t->nodes[node].depth;
				v->cursor = i;
			}
		}
		free(ancestor);
	}
	d->selected = v->nrows ? v->rows[v->cursor] : 0;
	v->rows_dirty = 0;
}

uint32_t view_preorder_next(struct view *v, uint32_t node, const uint8_t *within)
{
	const struct calltree *t = view_cur(v)->t;
	uint32_t n;
	const uint32_t *kids = view_children(v, node, &n);
	for (uint32_t i = 0; i < n; i++)
		if ((!within || within[kids[i]]) && view_child_shown(v, node, kids[i]))
			return kids[i];
	const struct view_rank *r = view_rank(v);
	while (node != 0) {
		uint32_t parent = t->nodes[node].parent;
		kids = view_children(v, parent, &n);
		for (uint32_t i = r->pos[node] + 1; i < n; i++)
			if ((!within || within[kids[i]]) && view_child_shown(v, parent, kids[i]))
				return kids[i];
		node = parent;
	}
	return 0;
}

void view_ranking_changed(struct view *v)
{
	v->rows_dirty = 1;
}

void view_select_threads(struct view *v, const struct view_choice *c)
{
	const struct profile *p = v->data[0].p;
	free(v->thread_mask);
	v->thread_mask = NULL;
	if (c->kind != CHOICE_ALL) {
		v->thread_mask = calloc_or_abort(p->nthreads ? p->nthreads : 1, 1);
		for (uint32_t i = 0; i < p->nthreads; i++)
			v->thread_mask[i] = c->kind == CHOICE_THREAD ? i == c->id : p->threads[i].pid == c->id;
	}
	v->thread_choice = *c;
	for (uint32_t k = 0; k < v->ndata; k++) {
		for (uint32_t t = 0; t < PROFILE_MAX_VALUE_TYPES; t++)
			rank_reset(&v->data[k].ranks[t]);
		data_totals(v, &v->data[k]);
	}
	v->rows_dirty = 1;
}

static int by_choice_value(const void *a, const void *b)
{
	const struct view_choice *x = a, *y = b;
	uint64_t cx = abs_i64(x->value), cy = abs_i64(y->value);
	if (cx != cy)
		return cx > cy ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

const char *view_choice_title(struct view *v, const struct view_choice *c, int indent, char *buf,
			      size_t len)
{
	const struct profile *p = view_cur(v)->p;
	char thread[300];
	if (c->kind == CHOICE_ALL) {
		snprintf(buf, len, "all threads");
	} else if (c->kind == CHOICE_PROCESS) {
		/* A build's processes are told apart by what they run (cc1, as), not by their pids. */
		uint32_t command = 0;
		for (uint32_t i = 0; i < p->nthreads && !command; i++)
			if (p->threads[i].pid == c->id)
				command = p->threads[i].command;
		if (command)
			snprintf(buf, len, "process %u (%s)", c->id, profile_string(p, command));
		else
			snprintf(buf, len, "process %u", c->id);
	} else {
		snprintf(buf, len, "%s%s", indent ? "  thread " : "",
			 profile_thread_title(p, c->id, thread, sizeof(thread)));
	}
	return buf;
}

void view_make_choices(struct view *v)
{
	const struct view_data *d = view_cur(v);
	const struct profile *p = d->p;
	int64_t *totals = calloc_or_abort(p->nthreads ? p->nthreads : 1, sizeof(*totals));
	uint64_t *rows = calloc_or_abort(p->nthreads ? p->nthreads : 1, sizeof(*rows));
	profile_thread_totals(p, view_value(v), totals, rows);
	free(v->choices);
	v->choices = calloc_or_abort((size_t)2 * p->nthreads + 1, sizeof(*v->choices));
	v->nchoices = 0;
	int64_t all = 0;
	for (uint32_t i = 0; i < p->nthreads; i++)
		all = sat_add_i64(all, totals[i], NULL);
	v->choices[v->nchoices++] = (struct view_choice){CHOICE_ALL, 0, all};
	/* Processes, when the threads are of more than one. */
	uint32_t first = v->nchoices;
	for (uint32_t i = 0; i < p->nthreads; i++) {
		if (!rows[i])
			continue;
		uint32_t k = first;
		while (k < v->nchoices && v->choices[k].id != p->threads[i].pid)
			k++;
		if (k == v->nchoices)
			v->choices[v->nchoices++] = (struct view_choice){CHOICE_PROCESS, p->threads[i].pid, 0};
		v->choices[k].value = sat_add_i64(v->choices[k].value, totals[i], NULL);
	}
	if (v->nchoices - first < 2)
		v->nchoices = first;
	qsort(v->choices + first, v->nchoices - first, sizeof(*v->choices), by_choice_value);
	first = v->nchoices;
	for (uint32_t i = 0; i < p->nthreads; i++)
		if (rows[i])
			v->choices[v->nchoices++] = (struct view_choice){CHOICE_THREAD, i, totals[i]};
	qsort(v->choices + first, v->nchoices - first, sizeof(*v->choices), by_choice_value);
	free(totals);
	free(rows);
}

int view_frame_is_leaf(const struct view_data *d, uint32_t frame)
{
	const struct profile *p = d->p;
	return (p->functions[d->t->frames[frame].function].flags & PROFILE_FUNCTION_ALLOC_LEAF) != 0;
}

struct flat_order_ctx {
	const struct flat_table *ft;
	const struct profile *p;
};

static int by_self(const void *a, const void *b, void *ctx)
{
	const struct flat_order_ctx *fo = ctx;
	const struct flat_row *x = &fo->ft->rows[*(const uint32_t *)a], *y = &fo->ft->rows[*(const uint32_t *)b];
	uint64_t sx = abs_i64(x->self), sy = abs_i64(y->self);
	if (sx != sy)
		return sx > sy ? -1 : 1;
	return flat_row_compare(fo->p, x, y);
}

struct view_rank *view_flat(struct view *v)
{
	struct view_data *d = view_cur(v);
	struct view_rank *r = view_rank(v);
	if (r->flat_ready && r->flat_by_line == v->flat_by_line && r->flat_mincount == v->mincount)
		return r;
	if (r->flat_ready) {
		flat_table_free(&r->flat);
		free(r->flat_order);
	}
	flat_table_build_nodes(&r->flat, d->t, v->flat_by_line, r->stack, r->incl, d->topmost[v->flat_by_line]);
	if (!d->topmost[v->flat_by_line]) /* the same for every value and thread: made once */
		d->topmost[v->flat_by_line] = flat_table_topmost(&r->flat);
	/* --mincount judges the count type's self, as the tree's filters do:
	 * its table has the same rows in the same order (flat_table_build). */
	struct flat_table counts = r->flat;
	uint32_t count = profile_count_type(d->p, view_value(v));
	if (v->mincount && count != PROFILE_NO_VALUE && count != view_value(v)) {
		struct view_rank *c = view_rank_of(v, count);
		flat_table_build_nodes(&counts, d->t, v->flat_by_line, c->stack, c->incl, d->topmost[v->flat_by_line]);
	}
	r->flat_order = calloc_or_abort(r->flat.nrows ? r->flat.nrows : 1, sizeof(*r->flat_order));
	r->nflat = 0;
	for (uint32_t i = 0; i < r->flat.nrows; i++) {
		const struct flat_row *row = &r->flat.rows[i];
		/* Leaves' costs are their allocating frame's self (flat_table_build). */
		if (row->self != 0 && abs_i64(counts.rows[i].self) >= v->mincount &&
		    !(d->p->functions[row->key.function].flags & PROFILE_FUNCTION_ALLOC_LEAF))
			r->flat_order[r->nflat++] = i;
	}
	if (counts.rows != r->flat.rows)
		flat_table_free(&counts);
	struct flat_order_ctx fo = {&r->flat, d->p};
	qsort_r(r->flat_order, r->nflat, sizeof(*r->flat_order), by_self, &fo);
	r->flat_ready = 1;
	r->flat_by_line = v->flat_by_line;
	r->flat_mincount = v->mincount;
	return r;
}

struct view_rank *view_source_costs(struct view *v)
{
	struct view_data *d = view_cur(v);
	struct view_rank *r = view_rank(v);
	if (r->source_ready && r->source_file != v->src_file) {
		source_table_free(&r->source);
		r->source_ready = 0;
	}
	if (!r->source_ready) {
		const int64_t *values[1] = {r->stack};
		source_table_build_file(&r->source, d->t, v->src_file, values, 1);
		r->source_file = v->src_file;
		r->source_ready = 1;
	}
	return r;
}

void view_say(struct view *v, int error, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(v->status, sizeof(v->status), fmt, ap);
	va_end(ap);
	v->status_error = error;
}

/* A hot path is followed while its next node holds at least this share of the total. */
#define HOT_PATH_SHARE 0.05

/*
 * Open on the answer: the hottest path expanded from the top, as far as its
 * hottest child holds HOT_PATH_SHARE of the total (below that a chain is
 * noise). The cursor stays on the top row: the path reads downwards from it.
 */
static void open_data(struct view *v)
{
	struct view_data *d = view_cur(v);
	if (d->opened)
		return;
	d->opened = 1;
	const struct view_rank *r = view_rank(v);
	uint64_t floor_abs = (uint64_t)((double)r->total_abs * HOT_PATH_SHARE);
	uint32_t node = 0, n;
	for (int steps = 0; steps < 256; steps++) {
		const uint32_t *kids = view_children(v, node, &n);
		uint32_t hottest = 0; /* children are sorted by |inclusive|: the first shown is the hottest */
		for (uint32_t i = 0; i < n && !hottest; i++)
			if (view_child_shown(v, node, kids[i]))
				hottest = kids[i];
		if (!hottest || (node && abs_i64(r->incl[hottest]) < floor_abs))
			break;
		if (node)
			d->expanded[node] = 1;
		node = hottest;
	}
	v->rows_dirty = 1;
}

void view_switch_data(struct view *v, uint32_t k)
{
	v->cur = k;
	v->match_data = UINT32_MAX;
	open_data(v);
	v->rows_dirty = 1;
}

struct view *view_new(struct profile *p, const struct view_options *o)
{
	struct view *v = calloc_or_abort(1, sizeof(*v));
	v->o = *o;
	v->trace = strdup_or_abort(o->trace ? o->trace : "");
	v->o.trace = v->trace;
	v->o.samples = o->samples ? o->samples : profile_samples_total(p);
	char safe[4096];
	v->command = strdup_or_abort(p->command ? escape_text(profile_string(p, p->command), safe, sizeof(safe))
						: "(unknown)");
	/* The types u cycles through: those of the unit family shown first, an
	 * allocation's bytes and counts (alloc_space, alloc_objects) or every
	 * type of CPU samples (samples, cpu): a trace with both shows
	 * allocations, and --value samples its CPU samples. */
	uint32_t first = o->value != PROFILE_NO_VALUE ? o->value : profile_display_value(p, p->default_value);
	if (first >= p->nvalue_types)
		first = 0;
	int alloc_first = p->nvalue_types && view_is_alloc_type(p, first);
	uint32_t first_count = alloc_first ? profile_count_type(p, first) : PROFILE_NO_VALUE;
	for (uint32_t t = 0; t < p->nvalue_types; t++)
		if (alloc_first ? t == first || t == first_count || profile_count_type(p, t) == first
				: !view_is_alloc_type(p, t))
			v->ranked[v->nranked++] = t;
	v->rank_index = 0;
	for (uint32_t i = 0; i < v->nranked; i++)
		if (v->ranked[i] == first)
			v->rank_index = i;
	/* The allocation views first: data_build sums p in place. */
	enum filter_view views[3];
	uint32_t nviews = alloc_first ? view_alloc_views(p, views) : 0; /* views of allocations */
	if (nviews)
		diag_progress(o->diag, "making the leaks, peak and temporary views");
	for (uint32_t k = 0; k < nviews; k++) {
		struct view_data *d = &v->data[1 + k];
		const char *name, *about;
		d->view = views[k];
		struct profile *q = view_alloc_profile(p, views[k], &name, &about, d->type_map);
		data_build(v, d, q, name, about);
	}
	data_build(v, &v->data[0], p, "all", alloc_first ? "allocated" : "");
	v->ndata = 1 + nviews;
	v->thread_choice = (struct view_choice){CHOICE_ALL, 0, 0};
	v->noisefloor = o->noisefloor;
	v->mincount = o->mincount;
	v->flat_by_line = 1;
	v->match_data = UINT32_MAX;
	v->page_rows = 10;
	v->utf8 = 1;
	view_switch_data(v, 0);
	for (uint32_t k = 1; k < v->ndata; k++) /* --leaks, --peak, --temporary */
		if (o->view != FILTER_VIEW_NONE && v->data[k].view == o->view)
			view_switch_data(v, k);
	/* Which node of a path counts in the flat rows depends on no value:
	 * found now, for both granularities, so s and b never walk the tree. */
	diag_progress(o->diag, "ranking the flat view");
	for (uint32_t i = 0; i < v->nranked; i++) /* u then has them ready too */
		view_rank_of(v, view_cur(v)->type_map[v->ranked[i]]);
	v->flat_by_line = 0;
	view_flat(v);
	v->flat_by_line = 1;
	view_flat(v);
	diag_progress(o->diag, "%s", "");
	return v;
}

void view_free(struct view *v)
{
	if (!v)
		return;
	for (uint32_t k = 0; k < v->ndata; k++)
		data_free(&v->data[k]);
	for (size_t i = 0; i < v->nmessages; i++)
		free(v->messages[i]);
	free(v->messages);
	free(v->rows);
	free(v->thread_mask);
	free(v->frame_match);
	free(v->subtree_match);
	free(v->choices);
	source_text_free(&v->src_text);
	free(v->trace);
	free(v->command);
	free(v);
}

void view_add_messages(struct view *v, char *const *texts, size_t n)
{
	v->messages = realloc_or_abort(v->messages, (v->nmessages + n + 1) * sizeof(*v->messages));
	for (size_t i = 0; i < n; i++)
		v->messages[v->nmessages++] = strdup_or_abort(texts[i]);
	if (v->nmessages)
		view_say(v, 0, "%zu warning%s while loading: w shows %s   ? keys  q quit", v->nmessages,
			 v->nmessages == 1 ? "" : "s", v->nmessages == 1 ? "it" : "them");
}

void view_stats(const struct view *v, uint64_t *pairs, uint32_t *stacks, uint32_t *nodes)
{
	*pairs = v->data[0].p->nsamples;
	*stacks = v->data[0].p->nstacks;
	*nodes = v->data[0].t->nnodes;
}
