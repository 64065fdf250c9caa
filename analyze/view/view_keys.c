/*
 * view_keys.c - what each key of the viewer does (view_key in view.h; the
 * keys are listed in the help pop-up, view_draw.c).
 *
 * In the tree, right expands (and steps into an expanded node), left
 * collapses (and steps out to the parent), Enter toggles a node with
 * callees and opens the source panel on one without (the deepest frame,
 * an allocation leaf), o opens the source panel on any. A key changes the
 * model and at most marks the rows to rebuild; the next draw does the
 * rest, so no key does more than the aggregated model needs.
 */
#include "view_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "options.h"
#include "terminal.h"

static int is_char(int key, int c)
{
	return key == c;
}

static void move_cursor(uint32_t *cursor, uint32_t n, int64_t delta)
{
	if (n == 0) {
		*cursor = 0;
		return;
	}
	int64_t c = (int64_t)*cursor + delta;
	*cursor = c < 0 ? 0 : c >= (int64_t)n ? n - 1 : (uint32_t)c;
}

/* The common moves of a list: 1 when key was one. */
static int list_key(struct view *v, int key, uint32_t *cursor, uint32_t n)
{
	int64_t page = v->page_rows > 1 ? v->page_rows - 1 : 1;
	if (key == VIEW_KEY_UP || is_char(key, 'k'))
		move_cursor(cursor, n, -1);
	else if (key == VIEW_KEY_DOWN || is_char(key, 'j'))
		move_cursor(cursor, n, 1);
	else if (key == VIEW_KEY_PGUP)
		move_cursor(cursor, n, -page);
	else if (key == VIEW_KEY_PGDN || is_char(key, ' '))
		move_cursor(cursor, n, page);
	else if (key == VIEW_KEY_HOME || is_char(key, 'g'))
		move_cursor(cursor, n, -(int64_t)n);
	else if (key == VIEW_KEY_END || is_char(key, 'G'))
		move_cursor(cursor, n, (int64_t)n);
	else
		return 0;
	return 1;
}

static const char *frame_name(const struct view_data *d, uint32_t frame)
{
	return profile_string(d->p, d->p->functions[d->t->frames[frame].function].name);
}

void view_open_source(struct view *v, uint32_t file, uint32_t line)
{
	v->src_file = file;
	struct view_rank *r = view_source_costs(v);
	const struct profile *p = view_cur(v)->p;
	uint32_t fi = source_file_index(&r->source, file);
	const struct source_file *f = fi != UINT32_MAX ? &r->source.files[fi] : NULL;
	const char *binary = f && f->module < p->nmodules ? profile_string(p, p->modules[f->module].path) : NULL;
	source_text_free(&v->src_text);
	source_text_load(&v->src_text, profile_string(p, file), binary, v->o.search_dirs, v->o.nsearch_dirs,
			 f ? f->max_line : line);
	v->src_line = line;
	v->src_lines = v->src_text.nlines > (f ? f->max_line : 0) ? v->src_text.nlines : f ? f->max_line : 0;
	v->src_cursor = line ? line : 1;
	v->src_top = UINT32_MAX; /* the draw centres the line */
	if (v->mode != VIEW_SOURCE)
		v->source_back = v->mode;
	v->mode = VIEW_SOURCE;
	char safe[4096];
	if (v->src_text.note[0]) /* escaped by source_text_load */
		view_say(v, 1, "%s", v->src_text.note);
	else
		view_say(v, 0, "%s   n next costly line  q back", escape_text(v->src_text.path, safe, sizeof(safe)));
}

/* The source of the tree row's frame (an allocation leaf's: its allocating frame's). */
static void open_node_source(struct view *v, uint32_t node)
{
	const struct view_data *d = view_cur(v);
	uint32_t frame = d->t->nodes[node].frame;
	if (view_frame_is_leaf(d, frame) && d->t->nodes[node].parent)
		frame = d->t->nodes[d->t->nodes[node].parent].frame;
	const struct calltree_frame *f = &d->t->frames[frame];
	char name[1024];
	if (!f->file) {
		view_say(v, 1, "no source file for %s (no debug info with lines?)",
			 view_short_name(frame_name(d, frame), v->utf8, name, sizeof(name)));
		return;
	}
	view_open_source(v, f->file, f->line);
}

static int has_shown_children(struct view *v, uint32_t node)
{
	uint32_t n;
	const uint32_t *kids = view_children(v, node, &n);
	for (uint32_t i = 0; i < n; i++)
		if (view_child_shown(v, node, kids[i]))
			return 1;
	return 0;
}

/* Expand everything shown below node (at most limit nodes, a huge tree stays usable). */
static void expand_subtree(struct view *v, uint32_t node, uint32_t limit)
{
	struct view_data *d = view_cur(v);
	uint32_t *stack = NULL, top = 0, cap = 0, n, done = 0;
	ALLOC_GROW(stack, 1, cap);
	stack[top++] = node;
	while (top && done++ < limit) {
		uint32_t x = stack[--top];
		d->expanded[x] = 1;
		const uint32_t *kids = view_children(v, x, &n);
		for (uint32_t i = 0; i < n; i++) {
			if (!view_child_shown(v, x, kids[i]))
				continue;
			ALLOC_GROW(stack, (uint64_t)top + 1, cap);
			stack[top++] = kids[i];
		}
	}
	free(stack);
	v->rows_dirty = 1;
}

static void tree_key(struct view *v, int key)
{
	struct view_data *d = view_cur(v);
	view_rows_update(v);
	if (v->nrows == 0)
		return;
	uint32_t node = v->rows[v->cursor];
	if (list_key(v, key, &v->cursor, v->nrows)) {
		d->selected = v->rows[v->cursor];
	} else if (key == VIEW_KEY_RIGHT || is_char(key, 'l') || is_char(key, '+')) {
		if (!has_shown_children(v, node))
			view_say(v, 0, "the deepest frame of this branch: Enter or o opens its source");
		else if (!d->expanded[node])
			d->expanded[node] = 1, v->rows_dirty = 1;
		else if (v->cursor + 1 < v->nrows)
			d->selected = v->rows[++v->cursor];
	} else if (key == VIEW_KEY_LEFT || is_char(key, 'h') || is_char(key, '-')) {
		if (d->expanded[node] && has_shown_children(v, node))
			d->expanded[node] = 0, v->rows_dirty = 1;
		else if (d->t->nodes[node].parent)
			d->selected = d->t->nodes[node].parent, v->rows_dirty = 1;
	} else if (key == VIEW_KEY_ENTER) {
		if (has_shown_children(v, node))
			d->expanded[node] = !d->expanded[node], v->rows_dirty = 1;
		else
			open_node_source(v, node);
	} else if (is_char(key, 'o')) {
		open_node_source(v, node);
	} else if (is_char(key, 'e')) {
		expand_subtree(v, node, 100000);
	} else if (is_char(key, 'c')) {
		memset(d->expanded, 0, d->t->nnodes);
		while (d->t->nodes[d->selected].depth > 1)
			d->selected = d->t->nodes[d->selected].parent;
		v->rows_dirty = 1;
	}
}

static void flat_key(struct view *v, int key)
{
	struct view_data *d = view_cur(v);
	struct view_rank *r = view_flat(v);
	if (list_key(v, key, &v->flat_cursor, r->nflat)) {
		d->flat_selected = r->nflat ? r->flat_order[v->flat_cursor] : UINT32_MAX;
	} else if ((key == VIEW_KEY_ENTER || is_char(key, 'o')) && r->nflat) {
		const struct flat_row *row = &r->flat.rows[r->flat_order[v->flat_cursor]];
		char name[1024];
		if (row->key.file)
			view_open_source(v, row->key.file, row->key.line);
		else
			view_say(v, 1, "no source file for %s",
				 view_short_name(profile_string(d->p, d->p->functions[row->key.function].name), v->utf8,
						 name, sizeof(name)));
	} else if (is_char(key, 'b')) {
		v->flat_by_line = !v->flat_by_line;
		d->flat_selected = UINT32_MAX; /* rows of the other table */
		v->flat_cursor = 0;
		view_say(v, 0, "self cost by %s", v->flat_by_line ? "line (call site)" : "function");
	}
}

static void source_key(struct view *v, int key)
{
	if (list_key(v, key, &v->src_cursor, v->src_lines + 1)) {
		if (v->src_cursor == 0)
			v->src_cursor = 1;
	} else if (is_char(key, 'n')) {
		/* The next line with a cost, wrapping. */
		struct view_rank *r = view_source_costs(v);
		uint32_t fi = source_file_index(&r->source, v->src_file);
		if (fi == UINT32_MAX)
			return;
		const struct source_file *f = &r->source.files[fi];
		for (uint32_t pass = 0; pass < 2; pass++)
			for (uint32_t i = 0; i < f->nlines; i++)
				if (f->lines[i].line && (pass || f->lines[i].line > v->src_cursor) &&
				    source_line_value(&r->source, &f->lines[i], 0)) {
					v->src_cursor = f->lines[i].line;
					return;
				}
	} else if (is_char(key, 'q') || key == VIEW_KEY_ESC || key == VIEW_KEY_LEFT || key == VIEW_KEY_ENTER ||
		   is_char(key, 'h')) {
		v->mode = v->source_back;
	}
}

/* Frames matching the query, for the dataset shown. */
static void make_matches(struct view *v)
{
	const struct view_data *d = view_cur(v);
	if (v->match_data == v->cur)
		return;
	free(v->frame_match);
	free(v->subtree_match);
	v->frame_match = calloc_or_abort(d->t->nframes ? d->t->nframes : 1, 1);
	for (uint32_t f = 0; f < d->t->nframes; f++)
		v->frame_match[f] = v->query[0] && strcasestr(frame_name(d, f), v->query) != NULL;
	/* Where the matches are, so the walk enters no subtree without one
	 * (children come after their parents: one backward pass). */
	const struct calltree *t = d->t;
	v->subtree_match = calloc_or_abort(t->nnodes ? t->nnodes : 1, 1);
	for (uint32_t n = t->nnodes; n-- > 1;) {
		v->subtree_match[n] |= v->frame_match[t->nodes[n].frame];
		v->subtree_match[t->nodes[n].parent] |= v->subtree_match[n];
	}
	v->match_data = v->cur;
}

/* Go to the next match after the selection (wrapping); 0 when there is none. */
static int next_match(struct view *v)
{
	struct view_data *d = view_cur(v);
	make_matches(v);
	char name[1024];
	if (v->mode == VIEW_FLAT) {
		struct view_rank *r = view_flat(v);
		for (uint32_t k = 1; k <= r->nflat; k++) {
			uint32_t i = (v->flat_cursor + k) % r->nflat;
			const struct flat_row *row = &r->flat.rows[r->flat_order[i]];
			if (strcasestr(profile_string(d->p, d->p->functions[row->key.function].name), v->query)) {
				v->flat_cursor = i;
				d->flat_selected = r->flat_order[i];
				return 1;
			}
		}
		return 0;
	}
	view_rows_update(v);
	uint32_t start = v->nrows ? v->rows[v->cursor] : 0, node = start;
	for (uint64_t steps = 0; steps <= d->t->nnodes; steps++) {
		node = view_preorder_next(v, node, v->subtree_match);
		if (node == 0 && (node = view_preorder_next(v, 0, v->subtree_match)) == 0)
			return 0;
		if (v->frame_match[d->t->nodes[node].frame]) {
			for (uint32_t a = d->t->nodes[node].parent; a; a = d->t->nodes[a].parent)
				d->expanded[a] = 1;
			d->selected = node;
			v->rows_dirty = 1;
			view_say(v, 0, "/%s: %s", v->query, view_short_name(frame_name(d, d->t->nodes[node].frame),
									       v->utf8, name, sizeof(name)));
			return 1;
		}
		if (node == start)
			break;
	}
	return 0;
}

static void search(struct view *v)
{
	if (!v->query[0]) {
		view_say(v, 0, "/ searches function names, n goes to the next match");
		return;
	}
	if (!next_match(v))
		view_say(v, 1, "no function shown matches '%s'", v->query);
}

/* f's input: "2" (a noisefloor), "min 100" (a mincount), "off". */
static void set_filter(struct view *v, const char *text)
{
	while (*text == ' ')
		text++;
	double nf;
	uint64_t min;
	if (!*text || !strcmp(text, "off") || !strcmp(text, "0")) {
		v->noisefloor = 0;
		v->mincount = 0;
		view_say(v, 0, "filters off");
	} else if (!strncmp(text, "min", 3) || !strncmp(text, "m ", 2)) {
		const char *n = text + (text[1] == 'i' ? 3 : 1);
		while (*n == ' ')
			n++;
		if (parse_u64(n, &min)) {
			view_say(v, 1, "min wants a count, as in 'min 100', not '%s'", n);
			return;
		}
		v->mincount = min;
		view_say(v, 0, "hiding entries below %llu", (unsigned long long)min);
	} else if (!parse_double(text, &nf) && nf >= 0) {
		v->noisefloor = nf;
		view_say(v, 0, "noisefloor %g", nf);
	} else {
		view_say(v, 1, "f wants a noisefloor (2), 'min N' or 'off', not '%s'", text);
		return;
	}
	v->rows_dirty = 1;
}

static void prompt_key(struct view *v, int key)
{
	if (key == VIEW_KEY_ESC) {
		v->prompt = PROMPT_NONE;
	} else if (key == VIEW_KEY_ENTER) {
		enum view_prompt which = v->prompt;
		v->prompt = PROMPT_NONE;
		v->input[v->input_len] = '\0';
		if (which == PROMPT_SEARCH) {
			snprintf(v->query, sizeof(v->query), "%s", v->input);
			v->match_data = UINT32_MAX;
			search(v);
		} else {
			set_filter(v, v->input);
		}
	} else if (key == VIEW_KEY_BACKSPACE) {
		while (v->input_len > 0 && ((unsigned char)v->input[--v->input_len] & 0xc0) == 0x80)
			;
	} else if (key >= 0x20 && key < 0x110000 && key != 0x7f && v->input_len + 5 < sizeof(v->input)) {
		uint32_t c = (uint32_t)key;
		char *o = v->input + v->input_len;
		if (c < 0x80)
			*o = (char)c, v->input_len += 1;
		else if (c < 0x800)
			o[0] = (char)(0xc0 | c >> 6), o[1] = (char)(0x80 | (c & 0x3f)), v->input_len += 2;
		else if (c < 0x10000)
			o[0] = (char)(0xe0 | c >> 12), o[1] = (char)(0x80 | ((c >> 6) & 0x3f)),
			o[2] = (char)(0x80 | (c & 0x3f)), v->input_len += 3;
	}
}

static void popup_key(struct view *v, int key)
{
	if (v->popup == POPUP_HELP) {
		v->popup = POPUP_NONE;
		return;
	}
	uint32_t n = v->popup == POPUP_THREADS ? v->nchoices : (uint32_t)v->nmessages;
	if (list_key(v, key, &v->popup_cursor, n))
		return;
	if (v->popup == POPUP_THREADS && key == VIEW_KEY_ENTER && n) {
		view_select_threads(v, &v->choices[v->popup_cursor]);
		view_say(v, 0, "values of the selected threads only; t picks others");
		v->popup = POPUP_NONE;
	} else if (key == VIEW_KEY_ESC || key == VIEW_KEY_ENTER || is_char(key, 'q') || is_char(key, 't') ||
		   is_char(key, 'w')) {
		v->popup = POPUP_NONE;
	}
}

static void start_prompt(struct view *v, enum view_prompt which)
{
	v->prompt = which;
	v->input_len = 0;
	v->input[0] = '\0';
}

int view_key(struct view *v, int key)
{
	if (v->prompt) {
		prompt_key(v, key);
		return 0;
	}
	if (v->popup) {
		popup_key(v, key);
		return 0;
	}
	v->status[0] = '\0';
	v->status_error = 0;
	const struct profile *p = view_cur(v)->p;
	if (v->mode == VIEW_SOURCE && (is_char(key, 'q') || key == VIEW_KEY_ESC)) {
		source_key(v, key);
	} else if (is_char(key, 'q')) {
		return 1;
	} else if (is_char(key, '?')) {
		v->popup = POPUP_HELP;
	} else if (is_char(key, 'u')) {
		if (v->nranked < 2) {
			view_say(v, 0, "u: this trace has one value type to rank by");
			return 0;
		}
		v->rank_index = (v->rank_index + 1) % v->nranked;
		view_ranking_changed(v);
		view_say(v, 0, "ranked by %s (%s)", profile_string(p, p->value_types[view_value(v)].type),
			 profile_string(p, p->value_types[view_value(v)].unit));
	} else if (is_char(key, 's') && v->mode != VIEW_SOURCE) {
		v->mode = v->mode == VIEW_FLAT ? VIEW_TREE : VIEW_FLAT;
		if (v->mode == VIEW_FLAT)
			view_say(v, 0, "self cost per %s, over the whole tree; s goes back", v->flat_by_line ? "line" : "function");
	} else if (is_char(key, 't')) {
		view_make_choices(v);
		v->popup = POPUP_THREADS;
		v->popup_cursor = 0;
		for (uint32_t i = 0; i < v->nchoices; i++)
			if (v->choices[i].kind == v->thread_choice.kind && v->choices[i].id == v->thread_choice.id)
				v->popup_cursor = i;
	} else if (is_char(key, 'w')) {
		if (v->nmessages)
			v->popup = POPUP_MESSAGES, v->popup_cursor = 0;
		else
			view_say(v, 0, "no warnings while loading");
	} else if (is_char(key, 'L')) {
		if (v->ndata < 2) {
			view_say(v, 0, "L: %s", !view_is_alloc(p) ? "leaks and peak are views of allocation traces"
						: view_is_alloc_type(p, view_value(v)) ? "this trace has no leaks, peak or temporary types"
						: "leaks and peak are views of allocations, not of CPU samples (--value alloc_space)");
			return 0;
		}
		view_switch_data(v, (v->cur + 1) % v->ndata);
		view_say(v, 0, "view: %s%s%s", view_cur(v)->name, view_cur(v)->about[0] ? ", " : "", view_cur(v)->about);
	} else if (is_char(key, '/') && v->mode != VIEW_SOURCE) {
		start_prompt(v, PROMPT_SEARCH);
	} else if (is_char(key, 'f')) {
		start_prompt(v, PROMPT_FILTER);
	} else if (is_char(key, 'n') && v->mode != VIEW_SOURCE) {
		search(v);
	} else if (v->mode == VIEW_TREE) {
		tree_key(v, key);
	} else if (v->mode == VIEW_FLAT) {
		flat_key(v, key);
	} else {
		source_key(v, key);
	}
	return 0;
}
