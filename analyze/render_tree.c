/*
 * render_tree.c - the call tree as Julia's Profile.print(format=:tree) shows
 * it (tree_report in report.h; the command is builtin-tree.c).
 *
 * One line per node: self count ("overhead"), a "╎" rail, indentation by
 * depth (a "╎" guide every 5 levels), the inclusive count, "file:line;
 * function". Children are sorted by |count|, largest first. Options as
 * Julia's:
 *   noisefloor X  a child is hidden with its subtree when |count| is below
 *                 floor(X * sqrt(|parent count|)); top level never;
 *   mincount N    nodes with |count| below N are hidden with their subtree;
 *   maxdepth N    at most N levels are printed (the top level is level 1).
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
};

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
	if (n->self)
		fprintf(out, "%s%*lld%s", pal->self, tp->wself, (long long)n->self, pal->reset);
	else
		fprintf(out, "%*s", tp->wself, "");
	char count[24];
	snprintf(count, sizeof(count), "%lld", (long long)n->count);
	tree_print_line_end(tp->r, tp->t, id, tp->wself, count, tp->wcount, maxline_digits);
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
	int64_t maxself = 0, maxcount = 0;
	for (uint32_t i = 1; i < t->nnodes; i++) {
		if (abs_i64(t->nodes[i].self) > abs_i64(maxself))
			maxself = t->nodes[i].self;
		if (abs_i64(t->nodes[i].count) > abs_i64(maxcount))
			maxcount = t->nodes[i].count;
	}
	tp->wself = report_digits(maxself);
	tp->wcount = report_digits(maxcount);
	fprintf(out, "Overhead ╎ [+additional indent] Count File:Line; Function\n");
	fprintf(out, "=========================================================\n");

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
			if (c >= mincount && c >= floor_count)
				children[kept++] = children[i];
		}
		int digits = tree_children_line_digits(t, children, kept);
		for (uint32_t i = kept; i-- > 0;)
			stack[top++] = (struct work){children[i], digits};
		free(children);
	}
	free(stack);
}

/* One tree: of all threads (with the footer) or of one (with its heading). */
static void print_one(const struct report *r, const struct tree_options *to, struct calltree *t, uint32_t thread)
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
	if (thread == CALLTREE_ALL_THREADS)
		report_footer(r, t);
	else
		fputc('\n', r->out);
}

void tree_report(const struct report *r, const struct tree_options *to)
{
	const struct profile *p = r->p;
	/* The tree of all samples carries the totals the header and footer print. */
	struct calltree *all = calltree_new(p, r->o->combine, CALLTREE_ALL_THREADS, r->value);
	report_header(r, all);
	if (!to->threads) {
		print_one(r, to, all, CALLTREE_ALL_THREADS);
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
		print_one(r, to, t, i);
		calltree_free(t);
	}
	free(totals);
	free(rows);
	report_footer(r, all);
	calltree_free(all);
}
