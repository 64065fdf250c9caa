/*
 * render_tree.c - the call tree as Julia's Profile.print(format=:tree) shows
 * it (tree_report in report.h; the command is builtin-tree.c).
 *
 * One line per node: self count ("overhead"), the inclusive count's share of
 * the tree's total, a "╎" rail, indentation by depth (a "╎" guide every 5
 * levels), the inclusive count, "file:line; function". Children are sorted
 * by |count|, largest first. Options as Julia's:
 *   noisefloor X  a child is hidden with its subtree when |count| is below
 *                 floor(X * sqrt(|parent count|)); top level never;
 *   mincount N    nodes with |count| below N are hidden with their subtree;
 *   maxdepth N    at most N levels are printed (the top level is level 1);
 * and as pprof's:
 *   nodefraction F  nodes with |count| below F of the tree's total are
 *                 hidden with their subtree (the command's default, 0.5%,
 *                 unless noisefloor or mincount ask for Julia's filters),
 *                 and a line before the footer says how many nodes and how
 *                 much cost that hid, and how to see everything.
 * When the indentation would take more than half the width, it is cut and
 * the cut levels shown as "+n", as Julia does. Without a width (not a
 * terminal) the indentation stops at MAX_INDENT columns the same way, so a
 * 100000-deep recursion prints lines of bounded length: output is linear in
 * the number of nodes, not quadratic.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "arith.h"
#include "calltree.h"
#include "report.h"
#include "terminal.h"

/* Columns of indentation at most when the width is unlimited. */
#define MAX_INDENT 128

struct tree_printer {
	const struct report *r;
	const struct calltree *t;
	const struct tree_options *to;
	int wself, wcount;
	uint64_t hidden_nodes, hidden_abs; /* hidden by nodefraction: nodes (subtrees whole), |count| */
};

static uint64_t add_capped(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Columns of the share column: " 100.0% ". */
#define SHARE_COLUMNS 8

/* Julia's indent(): a "╎" every fifth column, spaces elsewhere. */
static void put_indent(FILE *out, int columns)
{
	for (int i = 0; i < columns; i++)
		fputs(i % 5 == 4 ? "╎" : " ", out);
}

void tree_print_line_end(const struct report *r, const struct calltree *t, uint32_t id, int lead,
			 const char *count, int wcount, int maxline_digits)
{
	const struct profile *p = t->profile;
	const struct calltree_node *n = &t->nodes[id];
	const struct calltree_frame *f = &t->frames[n->frame];
	const struct palette *pal = &r->pal;
	const struct analyze_options *o = r->o;
	FILE *out = r->out;
	int cols = o->width;
	int level = (int)n->depth - 1;
	int limit = cols ? cols / 2 : MAX_INDENT;
	int nindent = limit < level ? limit : level;
	int nextra = 0;
	if (level > nindent) {
		nextra = level - nindent;
		nindent -= decimal_digits((uint64_t)nextra) + 2;
	}

	fputs("╎", out);
	if (nindent > 0) {
		put_indent(out, nindent - 1);
		fputc(' ', out);
	}
	if (nextra)
		fprintf(out, "%s+%d%s ", pal->extra, nextra, pal->reset);
	if (count)
		fprintf(out, "%s%-*s%s ", pal->count, wcount, count, pal->reset);

	int wfile = 0, wfunc = 0;
	if (cols) {
		int ntext = cols - lead - (nindent > 0 ? nindent : 0) - wcount - (maxline_digits + 6);
		if (ntext < 30)
			ntext = 30;
		wfile = o->full_paths ? 0 : 2 * ntext / 5;
		wfunc = 3 * ntext / 5;
	}
	char ebuf[4096], fbuf[4096], nbuf[4096], lbuf[16], abuf[4096];
	const char *file = fit_text(escape_text(report_file(p, f->file, o->full_paths), ebuf, sizeof(ebuf)),
				    wfile, 1, fbuf, sizeof(fbuf));
	const char *name = escape_text(profile_string(p, p->functions[f->function].name), abuf, sizeof(abuf));
	char addressed[4200];
	if (!t->combine) {
		snprintf(addressed, sizeof(addressed), "0x%016llx %s", (unsigned long long)f->address, name);
		name = addressed;
	}
	name = fit_text(name, wfunc, 0, nbuf, sizeof(nbuf));
	fprintf(out, "%s%s:%s;%s %s%s%s", pal->dim, file, report_line(f->line, lbuf, sizeof(lbuf)), pal->reset,
		pal->bold, name, pal->reset);
	if (f->inlined)
		fprintf(out, " %s[inlined]%s", pal->inlined, pal->reset);
	fputc('\n', out);
}

static void print_node(struct tree_printer *tp, uint32_t id, int maxline_digits)
{
	const struct calltree_node *n = &tp->t->nodes[id];
	const struct palette *pal = &tp->r->pal;
	FILE *out = tp->r->out;
	char self[32], count[32];
	if (n->self)
		fprintf(out, "%s%*s%s", pal->self, tp->wself, report_row_value(tp->r, n->self, self, sizeof(self)),
			pal->reset);
	else
		fprintf(out, "%*s", tp->wself, "");
	fprintf(out, " %5.1f%% ", report_percent(n->count, tp->t->total_abs));
	report_row_value(tp->r, n->count, count, sizeof(count));
	tree_print_line_end(tp->r, tp->t, id, tp->wself + SHARE_COLUMNS, count, tp->wcount, maxline_digits);
}

int tree_children_line_digits(const struct calltree *t, const uint32_t *children, uint32_t n)
{
	uint32_t maxline = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t line = t->frames[t->nodes[children[i]].frame].line;
		if (line > maxline)
			maxline = line;
	}
	return decimal_digits(maxline);
}

struct work {
	uint32_t node;
	int line_digits;
};

/* Depth-first, with an explicit stack: recursion can be thousands deep. */
static void print_tree(struct tree_printer *tp)
{
	const struct calltree *t = tp->t;
	FILE *out = tp->r->out;
	uint64_t mincount = tp->r->o->mincount;
	/* Columns as wide as the widest figure: the largest's digits, or with units (where the
	 * largest is not always the widest) every figure formatted. */
	int64_t maxself = 0, maxcount = 0;
	int units = report_row_units(tp->r);
	tp->wself = tp->wcount = 1;
	for (uint32_t i = 1; i < t->nnodes; i++) {
		if (units) {
			char buf[32];
			int w = (int)strlen(report_row_value(tp->r, t->nodes[i].self, buf, sizeof(buf)));
			tp->wself = w > tp->wself ? w : tp->wself;
			w = (int)strlen(report_row_value(tp->r, t->nodes[i].count, buf, sizeof(buf)));
			tp->wcount = w > tp->wcount ? w : tp->wcount;
			continue;
		}
		if (abs_i64(t->nodes[i].self) > abs_i64(maxself))
			maxself = t->nodes[i].self;
		if (abs_i64(t->nodes[i].count) > abs_i64(maxcount))
			maxcount = t->nodes[i].count;
	}
	if (!units) {
		tp->wself = report_digits(maxself);
		tp->wcount = report_digits(maxcount);
	}
	fprintf(out, "Overhead  Total ╎ [+additional indent] Count File:Line; Function\n");
	fprintf(out, "================================================================\n");
	/* Nodes below the fraction go with their subtrees: how many nodes that is, once,
	 * from each node's subtree size (a parent's index is below its children's). */
	uint64_t fraction_floor = 0;
	uint32_t *subtree = NULL;
	if (tp->to->nodefraction > 0) {
		fraction_floor = (uint64_t)ceil(tp->to->nodefraction * (double)t->total_abs);
		subtree = calloc_or_abort(t->nnodes, sizeof(*subtree));
		for (uint32_t i = t->nnodes; i-- > 1;) {
			subtree[i] += 1;
			subtree[t->nodes[i].parent] += subtree[i];
		}
	}

	struct work *stack = calloc_or_abort((size_t)t->nnodes + 1, sizeof(*stack));
	uint32_t top = 0;
	stack[top++] = (struct work){0, 1};
	while (top) {
		struct work w = stack[--top];
		const struct calltree_node *n = &t->nodes[w.node];
		if (w.node != 0)
			print_node(tp, w.node, w.line_digits);
		if (tp->to->maxdepth && n->depth >= tp->to->maxdepth)
			continue;
		uint64_t floor_count = 0;
		if (tp->to->noisefloor > 0 && w.node != 0)
			floor_count = (uint64_t)floor(tp->to->noisefloor * sqrt((double)abs_i64(n->count)));
		uint32_t *children;
		uint32_t nc = calltree_sorted_children(t, w.node, &children);
		uint32_t kept = 0;
		for (uint32_t i = 0; i < nc; i++) {
			uint64_t c = abs_i64(t->nodes[children[i]].count);
			if (c >= mincount && c >= floor_count && c >= fraction_floor)
				children[kept++] = children[i];
			else if (c >= mincount && c >= floor_count) {
				tp->hidden_nodes += subtree[children[i]];
				tp->hidden_abs = add_capped(tp->hidden_abs, c);
			}
		}
		int digits = tree_children_line_digits(t, children, kept);
		for (uint32_t i = kept; i-- > 0;)
			stack[top++] = (struct work){children[i], digits};
		free(children);
	}
	free(stack);
	free(subtree);
}

/* What the node fraction hid, before the footer: nothing when it hid nothing. */
static void print_hidden(const struct report *r, const struct tree_options *to, uint64_t nodes, uint64_t hidden_abs,
			 uint64_t total_abs)
{
	if (!nodes)
		return;
	fprintf(r->out, "Hidden: %llu nodes below %g%% of the total each, %.1f%% of it together (--nodefraction 0 shows every node)\n",
		(unsigned long long)nodes, 100 * to->nodefraction,
		total_abs ? 100.0 * (double)hidden_abs / (double)total_abs : 0.0);
}

/* One tree: of all threads (with the footer) or of one (with its heading); adds to *hidden_nodes and *hidden_abs. */
static void print_one(const struct report *r, const struct tree_options *to, struct calltree *t, uint32_t thread,
		      uint64_t *hidden_nodes, uint64_t *hidden_abs)
{
	const struct profile *p = r->p;
	calltree_build_nodes(t);
	struct tree_printer tp = {.r = r, .t = t, .to = to};
	if (thread != CALLTREE_ALL_THREADS) {
		char name[300], safe[1300], totals[512];
		const char *title = escape_text(profile_thread_title(p, thread, name, sizeof(name)), safe, sizeof(safe));
		char cpu[64];
		/* A wall profile's weights are wall time, on CPU or off. */
		if (profile_period_count(p) != PROFILE_NO_VALUE)
			snprintf(totals, sizeof(totals), "%s of %s",
				 format_value(t->totals[p->period_type], "nanoseconds", cpu, sizeof(cpu)),
				 strcmp(profile_string(p, p->value_types[p->period_type].type), "wall") ? "CPU" : "wall time");
		else
			report_totals(p, t->totals, t->saturated, totals, sizeof(totals));
		fprintf(r->out, "%sThread %s%s: %llu samples, %s\n", r->pal.bold, title, r->pal.reset,
			(unsigned long long)t->total_samples, totals);
	}
	if (t->total_abs == 0)
		fputs("No samples.\n", r->out);
	else
		print_tree(&tp);
	*hidden_nodes += tp.hidden_nodes;
	*hidden_abs = add_capped(*hidden_abs, tp.hidden_abs);
	if (thread == CALLTREE_ALL_THREADS) {
		print_hidden(r, to, *hidden_nodes, *hidden_abs, t->total_abs);
		report_footer(r, t);
	} else {
		fputc('\n', r->out);
	}
}

void tree_report(const struct report *r, const struct tree_options *to)
{
	const struct profile *p = r->p;
	/* The tree of all samples carries the totals the header and footer print. */
	struct calltree *all = calltree_new(p, r->o->combine, CALLTREE_ALL_THREADS, r->value);
	report_header(r, all);
	uint64_t hidden_nodes = 0, hidden_abs = 0;
	if (!to->threads) {
		print_one(r, to, all, CALLTREE_ALL_THREADS, &hidden_nodes, &hidden_abs);
		calltree_free(all);
		return;
	}
	int64_t *totals = calloc_or_abort(p->nthreads, sizeof(*totals));
	uint64_t *rows = calloc_or_abort(p->nthreads, sizeof(*rows));
	profile_thread_totals(p, r->value, totals, rows);
	for (uint32_t i = 0; i < p->nthreads; i++) {
		if (!rows[i])
			continue;
		struct calltree *t = calltree_new(p, r->o->combine, i, r->value);
		print_one(r, to, t, i, &hidden_nodes, &hidden_abs);
		calltree_free(t);
	}
	free(totals);
	free(rows);
	print_hidden(r, to, hidden_nodes, hidden_abs, all->total_abs);
	report_footer(r, all);
	calltree_free(all);
}
