/*
 * view_draw.c - the viewer's screen (view_draw in view.h): two header lines
 * (the run and the totals of every unit ranked), the main area (the tree,
 * the flat self-cost rows or the source panel), the flame graph strip of
 * the selection along the bottom, the status line, and pop-ups over it all
 * (keys, threads, loading warnings). Any size works: below 16 lines the
 * flame strip goes, below 6 the screen only says it is too small.
 *
 * A row of the tree: cost, percentage of the total, a bar, then the frame
 * indented by depth (cut at a third of the name column, "+N" saying how
 * many levels more), its expansion marker, its name (view_short_name) and
 * file:line. Names and paths come from the trace: all of them go through
 * escape_text (view_short_name, report_file) and view_put.
 */
#include "view_internal.h"

#include <stdio.h>
#include <string.h>

#include "arith.h"
#include "terminal.h"

#define COST_WIDTH 10

static const char *type_name(const struct profile *p, uint32_t t)
{
	return profile_string(p, p->value_types[t].type);
}

static const char *cost_text(const struct view *v, const struct profile *p, int64_t value, char *buf, size_t len)
{
	return format_value(value, profile_string(p, p->value_types[view_value(v)].unit), buf, len);
}

static double share(int64_t part, uint64_t whole)
{
	return whole ? (double)abs_i64(part) / (double)whole : 0.0;
}

/* The header: the run on the title line, the totals of every ranked type below it. */
static void draw_header(struct view *v, struct view_screen *s)
{
	const struct view_data *d = view_cur(v);
	const struct profile *p = d->p;
	char right[512], left[4096], title[300], safe[1300];
	view_fill(s, 0, 0, s->cols, ' ', VA_TITLE);
	view_choice_title(v, &v->thread_choice, 0, title, sizeof(title));
	snprintf(right, sizeof(right), " %s%s%s | %s ", v->ndata > 1 ? d->name : "", v->ndata > 1 ? " | " : "",
		 escape_text(title, safe, sizeof(safe)),
		 v->mode == VIEW_FLAT ? "flat" : v->mode == VIEW_SOURCE ? "source" : "tree");
	int wr = view_text_width(s, right);
	snprintf(left, sizeof(left), " ipscope view: %s", v->command);
	view_put(s, 0, 0, s->cols - wr, left, VA_TITLE);
	view_put_right(s, 0, 0, s->cols, right, VA_TITLE);

	char totals[1024];
	size_t used = 0;
	if (profile_period_count(p) != PROFILE_NO_VALUE && !view_is_alloc(p)) {
		report_totals(p, d->totals, d->saturated, totals, sizeof(totals));
		used = strlen(totals);
	} else {
		totals[0] = '\0';
		for (uint32_t i = 0; i < v->nranked && used + 1 < sizeof(totals); i++) {
			char text[64];
			uint32_t t = d->type_map[v->ranked[i]];
			int n = snprintf(totals + used, sizeof(totals) - used, "%s%s %s", i ? ", " : "", type_name(p, t),
					 format_value(d->totals[t], profile_string(p, p->value_types[t].unit), text,
						      sizeof(text)));
			used += n > 0 ? (size_t)n : 0;
		}
	}
	snprintf(left, sizeof(left), "%s%s%s  by %s", d->about[0] && v->ndata > 1 ? d->about : "",
		 d->about[0] && v->ndata > 1 ? ": " : "", totals, type_name(p, view_value(v)));
	int w = view_put(s, 1, 0, -1, left, VA_BOLD);
	char filters[128] = "";
	if (v->noisefloor > 0 && v->mincount)
		snprintf(filters, sizeof(filters), "  (noisefloor %g, min %llu)", v->noisefloor,
			 (unsigned long long)v->mincount);
	else if (v->noisefloor > 0)
		snprintf(filters, sizeof(filters), "  (noisefloor %g)", v->noisefloor);
	else if (v->mincount)
		snprintf(filters, sizeof(filters), "  (min %llu)", (unsigned long long)v->mincount);
	view_put(s, 1, w, -1, filters, VA_DIM);
}

/* "file:line" of frame as shown beside names. */
static const char *where(const struct view *v, const struct view_data *d, uint32_t file, uint32_t line, char *buf,
			 size_t len)
{
	char safe[4096];
	const char *f = escape_text(report_file(d->p, file, v->o.full_paths), safe, sizeof(safe));
	if (!file)
		snprintf(buf, len, "%s", "");
	else if (line)
		snprintf(buf, len, "%s:%u", f, line);
	else
		snprintf(buf, len, "%s", f);
	return buf;
}

/* The figure columns of a row: cost, percentage, bar; returns the column after them. */
static int draw_figures(struct view *v, struct view_screen *s, int y, int64_t value, uint64_t whole, int wbar)
{
	const struct profile *p = view_cur(v)->p;
	char cost[64], pct[16];
	view_put_right(s, y, 0, COST_WIDTH, cost_text(v, p, value, cost, sizeof(cost)), VA_NORMAL);
	snprintf(pct, sizeof(pct), "%5.1f%%", 100.0 * share(value, whole));
	view_put_right(s, y, COST_WIDTH + 1, 6, pct, VA_NORMAL);
	view_bar(s, y, COST_WIDTH + 8, wbar, share(value, whole), VA_BAR);
	return COST_WIDTH + 8 + wbar + 1;
}

/* Name and file:line from column x: the name's role, the location dim after it. */
static void draw_name(struct view *v, struct view_screen *s, int y, int x, uint32_t frame, uint8_t attr)
{
	const struct view_data *d = view_cur(v);
	const struct calltree_frame *f = &d->t->frames[frame];
	char name[4096], loc[4200];
	view_short_name(profile_string(d->p, d->p->functions[f->function].name), s->utf8, name, sizeof(name));
	int w = view_put(s, y, x, -1, name, attr);
	if (!d->t->combine) {
		char address[32];
		snprintf(address, sizeof(address), " 0x%llx", (unsigned long long)f->address);
		w += view_put(s, y, x + w, -1, address, VA_DIM);
	}
	where(v, d, f->file, f->line, loc, sizeof(loc));
	if (loc[0])
		w += 2 + view_put(s, y, x + w + 2, -1, loc, VA_DIM);
	if (f->inlined)
		view_put(s, y, x + w, -1, " [inlined]", VA_INLINED);
}

static uint8_t name_attr(struct view *v, const struct view_data *d, uint32_t frame)
{
	if (v->query[0] && v->match_data == v->cur && v->frame_match[frame])
		return VA_MATCH;
	return view_frame_is_leaf(d, frame) ? VA_LEAF : VA_BOLD;
}

/* Keep cursor within [top, top + rows). */
static void scroll_to(uint32_t *top, uint32_t cursor, int rows)
{
	if (rows <= 0)
		return;
	if (cursor < *top)
		*top = cursor;
	else if (cursor >= *top + (uint32_t)rows)
		*top = cursor - (uint32_t)rows + 1;
}

static void draw_tree(struct view *v, struct view_screen *s, int y0, int rows, int wbar)
{
	struct view_data *d = view_cur(v);
	struct view_rank *r = view_rank(v);
	view_rows_update(v);
	int x0 = COST_WIDTH + 8 + wbar + 1;
	view_put_right(s, y0, 0, COST_WIDTH, "Cost", VA_DIM);
	view_put_right(s, y0, COST_WIDTH + 1, 6, "%", VA_DIM);
	view_put(s, y0, x0, -1, "Function  File:Line", VA_DIM);
	if (v->nrows == 0) {
		view_put(s, y0 + 1, 1, -1, r->total_abs ? "Nothing above the filters (f changes them)." : "No samples.",
			 VA_NORMAL);
		return;
	}
	scroll_to(&v->top, v->cursor, rows);
	if (v->top + (uint32_t)rows > v->nrows)
		v->top = v->nrows > (uint32_t)rows ? v->nrows - (uint32_t)rows : 0;
	int max_indent = (s->cols - x0) / 3;
	for (int i = 0; i < rows && v->top + (uint32_t)i < v->nrows; i++) {
		int y = y0 + 1 + i;
		uint32_t row = v->top + (uint32_t)i, node = v->rows[row];
		const struct calltree_node *n = &d->t->nodes[node];
		draw_figures(v, s, y, r->incl[node], r->total_abs, wbar);
		int levels = (int)n->depth - 1, x = x0;
		if (2 * levels > max_indent) {
			char extra[16];
			int cut = levels - max_indent / 2 + 2;
			snprintf(extra, sizeof(extra), "+%d", cut);
			x += 2 * (levels - cut);
			view_put(s, y, x, -1, extra, VA_DIM);
			x += (int)strlen(extra) + 1;
		} else {
			x += 2 * levels;
		}
		uint32_t nk;
		const uint32_t *kids = view_children(v, node, &nk);
		int has = 0;
		for (uint32_t k = 0; k < nk && !has; k++)
			has = view_child_shown(v, node, kids[k]);
		const char *marker = !has ? (s->utf8 ? "\xc2\xb7" : " ")
				     : d->expanded[node] ? (s->utf8 ? "\xe2\x96\xbe" : "-")
							 : (s->utf8 ? "\xe2\x96\xb8" : "+");
		view_put(s, y, x, 1, marker, VA_DIM);
		draw_name(v, s, y, x + 2, n->frame, name_attr(v, d, n->frame));
		if (row == v->cursor)
			view_paint(s, y, 0, s->cols, VA_SELECTED);
	}
}

static void draw_flat(struct view *v, struct view_screen *s, int y0, int rows, int wbar)
{
	struct view_data *d = view_cur(v);
	struct view_rank *r = view_flat(v);
	const struct profile *p = d->p;
	if (d->flat_selected != UINT32_MAX)
		for (uint32_t i = 0; i < r->nflat; i++)
			if (r->flat_order[i] == d->flat_selected)
				v->flat_cursor = i;
	if (v->flat_cursor >= r->nflat)
		v->flat_cursor = r->nflat ? r->nflat - 1 : 0;
	int x0 = COST_WIDTH + 8 + wbar + 1;
	view_put_right(s, y0, 0, COST_WIDTH, "Self", VA_DIM);
	view_put_right(s, y0, COST_WIDTH + 1, 6, "%", VA_DIM);
	view_put_right(s, y0, x0, COST_WIDTH, "Total", VA_DIM);
	view_put(s, y0, x0 + COST_WIDTH + 2, -1, v->flat_by_line ? "Function  File:Line (self: b by function)"
								 : "Function  File:Line (self: b by line)", VA_DIM);
	if (r->nflat == 0) {
		view_put(s, y0 + 1, 1, -1, "No self costs.", VA_NORMAL);
		return;
	}
	scroll_to(&v->flat_top, v->flat_cursor, rows);
	for (int i = 0; i < rows && v->flat_top + (uint32_t)i < r->nflat; i++) {
		int y = y0 + 1 + i;
		uint32_t k = v->flat_top + (uint32_t)i;
		const struct flat_row *row = &r->flat.rows[r->flat_order[k]];
		draw_figures(v, s, y, row->self, r->total_abs, wbar);
		char cost[64], name[4096], loc[4200];
		view_put_right(s, y, x0, COST_WIDTH, cost_text(v, p, row->count, cost, sizeof(cost)), VA_NORMAL);
		int match = v->query[0] && strcasestr(profile_string(p, p->functions[row->key.function].name), v->query);
		view_short_name(profile_string(p, p->functions[row->key.function].name), s->utf8, name, sizeof(name));
		int w = view_put(s, y, x0 + COST_WIDTH + 2, -1, name, match ? VA_MATCH : VA_BOLD);
		where(v, d, row->key.file, row->key.line, loc, sizeof(loc));
		view_put(s, y, x0 + COST_WIDTH + 4 + w, -1, loc, VA_DIM);
		if (k == v->flat_cursor)
			view_paint(s, y, 0, s->cols, VA_SELECTED);
	}
}

static void draw_source(struct view *v, struct view_screen *s, int y0, int rows)
{
	struct view_data *d = view_cur(v);
	struct view_rank *r = view_source_costs(v);
	const struct profile *p = d->p;
	uint32_t fi = source_file_index(&r->source, v->src_file);
	const struct source_file *f = fi != UINT32_MAX ? &r->source.files[fi] : NULL;
	char head[4400], safe[4096], cost[64];
	snprintf(head, sizeof(head), "%s: %s (%.1f%%)", escape_text(profile_string(p, v->src_file), safe, sizeof(safe)),
		 cost_text(v, p, f ? f->totals[0] : 0, cost, sizeof(cost)),
		 100.0 * share(f ? f->totals[0] : 0, r->total_abs));
	int wline = decimal_digits(v->src_lines) > 4 ? decimal_digits(v->src_lines) : 4, li = 0;
	view_put(s, y0, 0, -1, head, VA_BOLD);
	rows--; /* a line of column headings */
	y0++;
	view_put_right(s, y0, 0, wline, "Line", VA_DIM);
	view_put_right(s, y0, wline + 1, COST_WIDTH, "Cost", VA_DIM);
	view_put_right(s, y0, wline + COST_WIDTH + 2, 6, "%", VA_DIM);
	view_put(s, y0, wline + COST_WIDTH + 11, -1, v->src_text.path ? "Source" : "Source (not found: costs by line)",
		 VA_DIM);
	if (v->src_top == UINT32_MAX) /* just opened: the line a third down */
		v->src_top = v->src_cursor > (uint32_t)rows / 3 ? v->src_cursor - (uint32_t)rows / 3 : 1;
	scroll_to(&v->src_top, v->src_cursor, rows);
	if (rows > 0 && v->src_top + (uint32_t)rows > v->src_lines + 1) /* no blank page below the end */
		v->src_top = v->src_lines + 1 > (uint32_t)rows ? v->src_lines + 1 - (uint32_t)rows : 1;
	if (v->src_top < 1)
		v->src_top = 1;
	uint64_t hottest = 0;
	for (uint32_t i = 0; f && i < f->nlines; i++) {
		uint64_t a = abs_i64(source_line_value(&r->source, &f->lines[i], 0));
		hottest = a > hottest ? a : hottest;
	}
	for (int i = 0; i < rows; i++) {
		uint32_t line = v->src_top + (uint32_t)i;
		if (line > v->src_lines)
			break;
		int y = y0 + 1 + i;
		while (f && li < (int)f->nlines && f->lines[li].line < line)
			li++;
		int64_t value = f && li < (int)f->nlines && f->lines[li].line == line
					? source_line_value(&r->source, &f->lines[li], 0)
					: 0;
		char num[16], pct[16], code[4 * 4096 + 1];
		snprintf(num, sizeof(num), "%u", line);
		view_put_right(s, y, 0, wline, num, VA_DIM);
		if (value) {
			uint8_t heat = (uint8_t)(VA_HEAT1 - 1 + heat_level(abs_i64(value), hottest));
			view_put_right(s, y, wline + 1, COST_WIDTH, cost_text(v, p, value, cost, sizeof(cost)), heat);
			snprintf(pct, sizeof(pct), "%5.1f%%", 100.0 * share(value, r->total_abs));
			view_put_right(s, y, wline + COST_WIDTH + 2, 6, pct, heat);
		}
		view_put(s, y, wline + COST_WIDTH + 9, 1, s->utf8 ? "\xe2\x94\x82" : "|", VA_DIM);
		size_t n;
		const char *text = source_text_line(&v->src_text, line, &n);
		if (text)
			view_put(s, y, wline + COST_WIDTH + 11, -1, source_printable(text, n, code, sizeof(code)), VA_NORMAL);
		else if (v->src_text.path)
			view_put(s, y, wline + COST_WIDTH + 11, -1, "(past the end of the file)", VA_DIM);
		if (line == v->src_cursor)
			view_paint(s, y, 0, s->cols, VA_SELECTED);
	}
}

static void draw_box(struct view_screen *s, int y, int x, int h, int w, const char *title)
{
	uint32_t hz = s->utf8 ? 0x2500 : '-', vt = s->utf8 ? 0x2502 : '|';
	for (int i = 0; i < h; i++)
		view_fill(s, y + i, x, w, ' ', VA_POPUP);
	view_fill(s, y, x, w, hz, VA_POPUP);
	view_fill(s, y + h - 1, x, w, hz, VA_POPUP);
	for (int i = 0; i < h; i++) {
		view_fill(s, y + i, x, 1, vt, VA_POPUP);
		view_fill(s, y + i, x + w - 1, 1, vt, VA_POPUP);
	}
	view_fill(s, y, x, 1, s->utf8 ? 0x250c : '+', VA_POPUP);
	view_fill(s, y, x + w - 1, 1, s->utf8 ? 0x2510 : '+', VA_POPUP);
	view_fill(s, y + h - 1, x, 1, s->utf8 ? 0x2514 : '+', VA_POPUP);
	view_fill(s, y + h - 1, x + w - 1, 1, s->utf8 ? 0x2518 : '+', VA_POPUP);
	view_put(s, y, x + 2, w - 4, title, VA_POPUP);
}

static const char *const help_lines[] = {
	"Up/Down j/k  move      PgUp/PgDn  page      Home/End g/G  first/last",
	"Right/Left   expand/collapse (and step in/out)      e  expand all below",
	"Enter        expand/collapse; on the deepest frame: its source",
	"o            source panel of the frame, at its line      c  collapse all",
	"u            rank by the other unit (time/samples, bytes/counts)",
	"s            flat self cost per line (b: per function) and back",
	"/  n         search function names, next match",
	"t            pick a thread or process        f  noisefloor / min count",
	"L            leaks / peak / temporary views (allocation traces)",
	"w            loading warnings     ?  this help     q  quit (panel: back)",
};

static void draw_popup(struct view *v, struct view_screen *s)
{
	const struct profile *p = view_cur(v)->p;
	int w = s->cols > 76 ? 76 : s->cols, x = (s->cols - w) / 2;
	if (v->popup == POPUP_HELP) {
		int n = (int)(sizeof(help_lines) / sizeof(help_lines[0])), h = n + 2 < s->rows ? n + 2 : s->rows;
		int y = (s->rows - h) / 2;
		draw_box(s, y, x, h, w, " keys (any key closes) ");
		for (int i = 0; i < n && i < h - 2; i++)
			view_put(s, y + 1 + i, x + 2, w - 4, help_lines[i], VA_POPUP);
		return;
	}
	uint32_t n = v->popup == POPUP_THREADS ? v->nchoices : (uint32_t)v->nmessages;
	int h = (int)n + 2 < s->rows - 2 ? (int)n + 2 : s->rows - 2, y = (s->rows - h) / 2;
	if (h < 3)
		return;
	draw_box(s, y, x, h, w, v->popup == POPUP_THREADS ? " threads (Enter picks, Esc closes) " : " loading warnings ");
	scroll_to(&v->popup_top, v->popup_cursor, h - 2);
	int64_t whole = v->nchoices ? v->choices[0].value : 0;
	for (int i = 0; i < h - 2 && v->popup_top + (uint32_t)i < n; i++) {
		uint32_t k = v->popup_top + (uint32_t)i;
		char line[4096], safe[2048], cost[64];
		if (v->popup == POPUP_THREADS) {
			const struct view_choice *c = &v->choices[k];
			const char *label = escape_text(view_choice_title(v, c, 1, safe, 300), safe + 300,
							sizeof(safe) - 300);
			snprintf(line, sizeof(line), "%10s %5.1f%%  %s", cost_text(v, p, c->value, cost, sizeof(cost)),
				 100.0 * share(c->value, abs_i64(whole)), label);
		} else {
			snprintf(line, sizeof(line), "%s", escape_text(v->messages[k], safe, sizeof(safe)));
		}
		view_put(s, y + 1 + i, x + 2, w - 4, line, VA_POPUP);
		if (v->popup == POPUP_THREADS && k == v->popup_cursor)
			view_paint(s, y + 1 + i, x + 1, w - 2, VA_SELECTED);
	}
}

/* The status line: the input being typed, a message, or the selection's full name. */
static void draw_status(struct view *v, struct view_screen *s, int y)
{
	view_fill(s, y, 0, s->cols, ' ', VA_STATUS);
	if (v->prompt) {
		char line[600];
		v->input[v->input_len] = '\0';
		snprintf(line, sizeof(line), "%s%s", v->prompt == PROMPT_SEARCH ? "/" : "f (noisefloor X | min N | off): ",
			 v->input);
		int w = view_put(s, y, 0, -1, line, VA_STATUS);
		s->cursor_y = y;
		s->cursor_x = w < s->cols ? w : s->cols - 1;
		return;
	}
	if (v->status[0]) {
		/* Too wide: the message's end stays (the keys it names come last,
		 * after a path as long as where the sources live), its start goes. */
		const char *text = v->status;
		int over = view_text_width(s, text) - s->cols;
		int x = 0;
		if (over > 0 && s->cols > 3) {
			over += 3;
			while (*text && over > 0) {
				char one[8];
				size_t n = 1;
				while (text[n] && ((unsigned char)text[n] & 0xc0) == 0x80 && n < sizeof(one) - 1)
					n++;
				memcpy(one, text, n);
				one[n] = '\0';
				over -= view_text_width(s, one);
				text += n;
			}
			x = view_put(s, y, 0, 3, "...", v->status_error ? VA_ERROR : VA_STATUS);
		}
		view_put(s, y, x, -1, text, v->status_error ? VA_ERROR : VA_STATUS);
		return;
	}
	const struct view_data *d = view_cur(v);
	uint32_t frame = UINT32_MAX;
	if (v->mode == VIEW_TREE && v->nrows)
		frame = d->t->nodes[v->rows[v->cursor]].frame;
	char text[8400], safe[4096], loc[4200];
	if (frame != UINT32_MAX) {
		const struct calltree_frame *f = &d->t->frames[frame];
		snprintf(text, sizeof(text), "%s  %s",
			 escape_text(profile_string(d->p, d->p->functions[f->function].name), safe, sizeof(safe)),
			 where(v, d, f->file, f->line, loc, sizeof(loc)));
	} else {
		snprintf(text, sizeof(text), "? keys  q quit");
	}
	int hint = view_text_width(s, "  ? keys  q quit");
	view_put(s, y, 0, s->cols > hint + 20 ? s->cols - hint : -1, text, VA_STATUS);
	if (s->cols > hint + 20 && frame != UINT32_MAX)
		view_put_right(s, y, 0, s->cols, "  ? keys  q quit", VA_STATUS);
}

void view_draw(struct view *v, struct view_screen *s)
{
	v->utf8 = s->utf8;
	for (size_t i = 0; i < (size_t)s->rows * (size_t)s->cols; i++)
		s->cells[i] = (struct view_cell){' ', VA_NORMAL};
	s->cursor_y = s->cursor_x = -1;
	if (s->rows < 6 || s->cols < 30) {
		view_put(s, 0, 0, -1, "analyze view: the terminal is too small", VA_ERROR);
		return;
	}
	draw_header(v, s);
	/* The source panel takes the flame strip's rows too. */
	int levels = s->rows >= 16 && s->cols >= 40 && v->mode != VIEW_SOURCE ? s->rows / 5 : 0;
	levels = levels > 12 ? 12 : levels;
	int status = s->rows - 1, flame_top = levels ? status - levels : status;
	int rows = (levels ? flame_top - 1 : status) - 3; /* below the column heading */
	v->page_rows = rows > 1 ? rows : 1;
	int wbar = s->cols >= 120 ? 16 : s->cols >= 100 ? 12 : 8;
	if (v->mode == VIEW_TREE)
		draw_tree(v, s, 2, rows, wbar);
	else if (v->mode == VIEW_FLAT)
		draw_flat(v, s, 2, rows, wbar);
	else
		draw_source(v, s, 2, rows);
	if (levels) {
		const struct view_data *d = view_cur(v);
		uint32_t node = v->mode != VIEW_FLAT && v->nrows ? v->rows[v->cursor] : 0;
		char title[4200], name[4096];
		if (node)
			view_short_name(profile_string(d->p, d->p->functions[d->t->frames[d->t->nodes[node].frame].function].name),
					s->utf8, name, sizeof(name));
		snprintf(title, sizeof(title), " flame graph: %s ", node ? name : "everything");
		view_fill(s, flame_top - 1, 0, s->cols, s->utf8 ? 0x2500 : '-', VA_DIM);
		view_put(s, flame_top - 1, 2, s->cols - 4, title, VA_DIM);
		view_flame_draw(v, s, flame_top, levels, node);
	}
	draw_status(v, s, status);
	if (v->popup)
		draw_popup(v, s);
}
