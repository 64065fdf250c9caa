/*
 * render_diff.c - the diff report (diff_report in report.h; the command is
 * builtin-diff.c): the call tree or the flat rows of a diff (diff.h), each
 * node or row with base's value, new's (scaled), the change, the change as
 * a share of base's total, and whether it is beyond sampling noise.
 *
 * Rows come from the one call tree (calltree.h) and flat table of the diff
 * profile: their DIFF_VALUE is the change, and sums over the base run's
 * threads and the new run's give each run's figures. Children and rows are
 * sorted by the size of the change, largest first.
 *
 * The display filters work as tree's do, on each run's own values, before
 * comparing: a node or row is shown when either run would show it (at least
 * --mincount, above the --noisefloor of its parent, within --maxdepth).
 * The rows shown are the ones tested together (diff_adjust); --significant
 * then hides the others (in the tree, it keeps the callers of a significant
 * node, marked as they are).
 *
 * Marks: '*' beyond sampling noise, '~' within it, '=' unchanged.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "arith.h"
#include "calltree.h"
#include "diff.h"
#include "report.h"
#include "terminal.h"

/* Each run's figures per node or row, from per-stack sums by run. */
struct run_sums {
	int64_t *base, *new, *base_count, *new_count; /* per stack */
	int64_t **runs; /* replicates: per run of d (diff.h), per stack */
};

static void stack_sums(const struct calltree *t, const struct diff *d, struct run_sums *s)
{
	uint32_t n = t->profile->nstacks ? t->profile->nstacks : 1;
	s->base = calloc_or_abort(n, sizeof(int64_t));
	s->new = calloc_or_abort(n, sizeof(int64_t));
	s->base_count = calloc_or_abort(n, sizeof(int64_t));
	s->new_count = calloc_or_abort(n, sizeof(int64_t));
	calltree_stack_sums(t, DIFF_VALUE, d->base_threads, s->base);
	calltree_stack_sums(t, DIFF_VALUE, d->new_threads, s->new);
	calltree_stack_sums(t, DIFF_COUNT, d->base_threads, s->base_count);
	calltree_stack_sums(t, DIFF_COUNT, d->new_threads, s->new_count);
	s->runs = NULL;
	if (!d->replicates)
		return;
	s->runs = calloc_or_abort(d->nruns + 1, sizeof(*s->runs)); /* NULL-ended, for free_sums */
	for (uint32_t k = 0; k < d->nruns; k++) {
		s->runs[k] = calloc_or_abort(n, sizeof(int64_t));
		calltree_stack_sums(t, DIFF_VALUE, d->run_threads[k], s->runs[k]);
	}
}

static void free_sums(struct run_sums *s)
{
	free(s->base);
	free(s->new);
	free(s->base_count);
	free(s->new_count);
	for (uint32_t k = 0; s->runs && s->runs[k]; k++)
		free(s->runs[k]);
	free(s->runs);
}

/* Base's value is stored negated (diff.h). */
/* The row's test: over the runs with replicates (per_run), else on its counts. */
static void test_row(const struct diff *d, struct diff_row *r, const int64_t *per_run)
{
	if (per_run)
		diff_row_test_runs(d, r, per_run);
	else
		diff_row_test(d, r);
}

static struct diff_row make_row(const struct diff *d, int64_t base, int64_t new, int64_t base_count,
				int64_t new_count, const int64_t *per_run)
{
	struct diff_row r = {.base = sat_neg_i64(base), .new = new, .base_count = sat_neg_i64(base_count),
			     .new_count = new_count};
	test_row(d, &r, per_run);
	return r;
}

/* Row i's value in each run, from per-run sums by row (NULL without replicates). */
static const int64_t *row_runs(const struct diff *d, int64_t *const *by_run, uint32_t i, int64_t *buf)
{
	if (!by_run)
		return NULL;
	for (uint32_t k = 0; k < d->nruns; k++)
		buf[k] = by_run[k][i];
	return buf;
}

/* Would run side (value v, its parent's pv) show it? (tree's own rules) */
static int side_shows(int64_t v, int64_t pv, int top, const struct analyze_options *o, double noisefloor)
{
	uint64_t a = abs_i64(v);
	if (!a || a < o->mincount)
		return 0;
	return top || noisefloor <= 0 || a >= (uint64_t)floor(noisefloor * sqrt((double)abs_i64(pv)));
}

/* New's value as recorded, for the filters: they judge each run on its own. */
static int64_t raw_new(const struct diff *d, int64_t v)
{
	return d->scale == 1.0 ? v : (int64_t)llround((double)v / d->scale);
}

struct columns {
	int wbase, wnew, wdelta;
};

static void widen(struct columns *c, const struct diff_row *r)
{
	int b = report_digits(r->base), n = report_digits(r->new), x = report_digits(diff_row_delta(r)) + 1;
	c->wbase = b > c->wbase ? b : c->wbase;
	c->wnew = n > c->wnew ? n : c->wnew;
	c->wdelta = x > c->wdelta ? x : c->wdelta;
}

static char mark(const struct diff_row *r)
{
	return !diff_row_delta(r) ? '=' : r->significant ? '*' : '~';
}

/* "+12", "-3", "0" and "+4.2%", "0.0%". */
static const char *signed_text(int64_t v, char *buf, size_t len)
{
	snprintf(buf, len, v > 0 ? "+%" PRId64 : "%" PRId64, v);
	return buf;
}

static const char *percent_text(double pct, char *buf, size_t len)
{
	if (fabs(pct) < 0.05)
		snprintf(buf, len, "%.1f%%", 0.0);
	else
		snprintf(buf, len, "%+.1f%%", pct);
	return buf;
}

/* The figures of a line; returns the columns they took. */
static int print_figures(const struct report *r, const struct diff *d, const struct columns *c,
			 const struct diff_row *row)
{
	const struct palette *pal = &r->pal;
	char delta[32], pct[32];
	/* No share of an empty base: "-", not a made-up 0.0%. */
	const char *share = d->base.total ? percent_text(diff_row_percent(d, row), pct, sizeof(pct)) : "-";
	fprintf(r->out, "%*" PRId64 " %*" PRId64 " %s%*s %7s%s %c ", c->wbase, row->base, c->wnew, row->new,
		row->significant ? pal->bold : "", c->wdelta, signed_text(diff_row_delta(row), delta, sizeof(delta)),
		share, row->significant ? pal->reset : "", mark(row));
	return c->wbase + c->wnew + c->wdelta + 7 + 6;
}

static void print_column_heads(const struct report *r, const struct columns *c, const char *rest)
{
	fprintf(r->out, "%s%*s %*s %*s %7s %c %s%s\n", r->pal.bold, c->wbase, "Base", c->wnew, "New", c->wdelta,
		"Delta", "Delta%", ' ', rest, r->pal.reset);
}

/* Both runs and what was compared, how, and what the marks mean. */
static void print_header(const struct report *r, const struct diff *d, size_t tested, size_t significant)
{
	const struct palette *pal = &r->pal;
	const struct diff_run *runs[2] = {&d->base, &d->new};
	const char *labels[2] = {"Base:", "New: "};
	for (int i = 0; i < 2; i++) {
		const struct profile *p = runs[i]->p;
		char safe[4096], path[4096], duration[32], more[64] = "";
		int64_t totals[PROFILE_MAX_VALUE_TYPES] = {0};
		int saturated = 0;
		profile_totals(p, totals, &saturated);
		if (runs[i]->nruns > 1) /* a set: its first trace, how many more, their summed time */
			snprintf(more, sizeof(more), " and %u more trace%s", runs[i]->nruns - 1, runs[i]->nruns > 2 ? "s" : "");
		fprintf(r->out, "%s%s%s %s (%s%s, %s%s)\n", pal->bold, labels[i], pal->reset,
			p->command ? escape_text(profile_string(p, p->command), safe, sizeof(safe)) : "(unknown)",
			escape_text(runs[i]->path, path, sizeof(path)), more, runs[i]->nruns > 1 ? "in all " : "",
			p->duration_ns ? format_duration(p->duration_ns, duration, sizeof(duration)) : "duration unknown");
		report_samples_line(r, "      ", p, totals, saturated);
	}
	const struct profile *b = d->base.p;
	uint32_t v = d->base.value;
	fprintf(r->out, "%sValues:%s %s (%s)", pal->bold, pal->reset, profile_string(b, b->value_types[v].type),
		profile_string(b, b->value_types[v].unit));
	if (d->ncommon > 1)
		fprintf(r->out, ", of the types both runs have: %s (--value chooses)", d->common);
	fputc('\n', r->out);
	char tb[64], tn[64];
	const char *unit = profile_string(b, b->value_types[v].unit);
	format_value(d->base.total, unit, tb, sizeof(tb));
	format_value(d->new.total, unit, tn, sizeof(tn));
	if (d->normalized)
		fprintf(r->out, "%sScaled:%s new values x %.6g (base total %s / new total %s): both runs weigh the same;\n"
			"        --no-normalize compares raw values\n", pal->bold, pal->reset, d->scale, tb, tn);
	else
		fprintf(r->out, "%sRaw:%s    values as recorded (base total %s, new total %s)\n", pal->bold, pal->reset, tb, tn);
	if (d->exact)
		fprintf(r->out, "%sNoise:%s  none: both runs are exact counts, not samples, so every change is real:\n"
			"        %zu of %zu rows changed (*)\n", pal->bold, pal->reset, significant, tested);
	else if (d->replicates)
		fprintf(r->out, "%sNoise:%s  %s (%u base runs, %u new), Holm-Bonferroni over %zu rows,\n"
			"        %g%% confidence: %zu beyond the runs' noise (*), the others within it (~) or unchanged (=)\n",
			pal->bold, pal->reset, diff_test_name(d), d->base.nruns, d->new.nruns, tested, 100 * d->confidence,
			significant);
	else
		fprintf(r->out, "%sNoise:%s  %s on the %s behind each row, Holm-Bonferroni over %zu rows,\n"
			"        %g%% confidence: %zu beyond sampling noise (*), the others within it (~) or unchanged (=)\n",
			pal->bold, pal->reset, diff_test_name(d), diff_count_name(d), tested, 100 * d->confidence,
			significant);
	fputc('\n', r->out);
}

static void print_footer(const struct report *r, size_t shown, size_t significant)
{
	fprintf(r->out, "Rows: %zu shown, %zu beyond sampling noise.", shown, significant);
	if (!r->o->filter.show_system)
		fputs(" System frames hidden (-C shows them).", r->out);
	fputc('\n', r->out);
}

/* ---- tree ---- */

struct tree_state {
	const struct report *r;
	const struct diff *d;
	const struct diff_view *v;
	struct calltree *t;
	struct diff_row *rows; /* per node */
	uint8_t *shown, *kept; /* per node: passes the filters; printed */
	struct columns c;
};

/* Mark the nodes the filters show (depth first, explicit stack). */
static size_t mark_shown(struct tree_state *st)
{
	const struct calltree *t = st->t;
	const struct analyze_options *o = st->r->o;
	uint32_t *stack = calloc_or_abort(t->nnodes + 1, sizeof(*stack));
	uint32_t top = 0;
	size_t n = 0;
	stack[top++] = 0;
	while (top) {
		uint32_t id = stack[--top];
		const struct calltree_node *node = &t->nodes[id];
		if (st->v->maxdepth && node->depth >= st->v->maxdepth)
			continue;
		const struct diff_row *pr = &st->rows[id];
		for (uint32_t c = node->first_child; c != CALLTREE_NONE; c = t->nodes[c].next_sibling) {
			const struct diff_row *cr = &st->rows[c];
			int topl = id == 0;
			if (side_shows(cr->base, pr->base, topl, o, st->v->noisefloor) ||
			    side_shows(raw_new(st->d, cr->new), raw_new(st->d, pr->new), topl, o, st->v->noisefloor)) {
				st->shown[c] = 1;
				n++;
				stack[top++] = c;
			}
		}
	}
	free(stack);
	return n;
}

/* kept: shown and, with --significant, significant or above one that is. */
static void mark_kept(struct tree_state *st)
{
	const struct calltree *t = st->t;
	/* Children always come after their parent (nodes are added root
	 * first), so one backwards pass sees every child before its parent. */
	for (uint32_t i = t->nnodes; i-- > 1;) {
		if (!st->shown[i])
			continue;
		if (!st->v->significant_only || st->rows[i].significant)
			st->kept[i] = 1;
		if (st->kept[i] && t->nodes[i].parent != CALLTREE_NONE)
			st->kept[t->nodes[i].parent] = 1;
	}
}

static void print_tree_nodes(struct tree_state *st)
{
	const struct calltree *t = st->t;
	struct work {
		uint32_t node;
		int line_digits;
	} *stack = calloc_or_abort((size_t)t->nnodes + 1, sizeof(*stack));
	uint32_t top = 0;
	stack[top++] = (struct work){0, 1};
	while (top) {
		struct work w = stack[--top];
		if (w.node) {
			int lead = print_figures(st->r, st->d, &st->c, &st->rows[w.node]);
			tree_print_line_end(st->r, t, w.node, lead, NULL, 0, w.line_digits);
		}
		uint32_t *children;
		uint32_t nc = calltree_sorted_children(t, w.node, &children), kept = 0;
		for (uint32_t i = 0; i < nc; i++)
			if (st->kept[children[i]])
				children[kept++] = children[i];
		int digits = tree_children_line_digits(t, children, kept);
		for (uint32_t i = kept; i-- > 0;)
			stack[top++] = (struct work){children[i], digits};
		free(children);
	}
	free(stack);
}

static void diff_tree(const struct report *r, const struct diff *d, const struct diff_view *v)
{
	struct tree_state st = {.r = r, .d = d, .v = v};
	st.t = calltree_new(d->p, r->o->combine, CALLTREE_ALL_THREADS, DIFF_VALUE);
	calltree_build_all_nodes(st.t);
	uint32_t nn = st.t->nnodes;
	struct run_sums s;
	stack_sums(st.t, d, &s);
	/* Each run's node sums straight into the rows, through one array: a
	 * diff of 200,000 deep stacks has millions of nodes, and four arrays
	 * of them beside the rows were a fifth of the command's peak. */
	st.rows = calloc_or_abort(nn, sizeof(*st.rows));
	int64_t *sums = calloc_or_abort(nn, sizeof(*sums));
	calltree_node_sums(st.t, s.base, sums, NULL);
	for (uint32_t i = 0; i < nn; i++)
		st.rows[i].base = sat_neg_i64(sums[i]); /* stored negated (diff.h) */
	calltree_node_sums(st.t, s.new, sums, NULL);
	for (uint32_t i = 0; i < nn; i++)
		st.rows[i].new = sums[i];
	calltree_node_sums(st.t, s.base_count, sums, NULL);
	for (uint32_t i = 0; i < nn; i++)
		st.rows[i].base_count = sat_neg_i64(sums[i]);
	calltree_node_sums(st.t, s.new_count, sums, NULL);
	for (uint32_t i = 0; i < nn; i++)
		st.rows[i].new_count = sums[i];
	free(sums);
	int64_t **node_runs = NULL, *buf = calloc_or_abort(d->nruns + 1, sizeof(*buf));
	if (s.runs) {
		node_runs = calloc_or_abort(d->nruns + 1, sizeof(*node_runs));
		for (uint32_t k = 0; k < d->nruns; k++) {
			node_runs[k] = calloc_or_abort(nn, sizeof(int64_t));
			calltree_node_sums(st.t, s.runs[k], node_runs[k], NULL);
		}
	}
	free_sums(&s);
	for (uint32_t i = 0; i < nn; i++)
		test_row(d, &st.rows[i], row_runs(d, node_runs, i, buf));
	for (uint32_t k = 0; node_runs && k < d->nruns; k++)
		free(node_runs[k]);
	free(node_runs);
	free(buf);
	st.shown = calloc_or_abort(nn, 1);
	st.kept = calloc_or_abort(nn, 1);
	size_t tested = mark_shown(&st), significant = 0, k = 0;
	uint32_t *family = calloc_or_abort(tested + 1, sizeof(*family));
	for (uint32_t i = 1; i < nn; i++)
		if (st.shown[i])
			family[k++] = i;
	diff_adjust(d, st.rows, family, tested);
	mark_kept(&st);
	st.c = (struct columns){4, 3, 5};
	size_t printed = 0;
	for (uint32_t i = 1; i < nn; i++) {
		significant += st.shown[i] && st.rows[i].significant;
		if (st.kept[i]) {
			widen(&st.c, &st.rows[i]);
			printed++;
		}
	}
	print_header(r, d, tested, significant);
	if (!printed) {
		fputs(tested ? "No significant changes.\n" : "No samples.\n", r->out);
	} else {
		print_column_heads(r, &st.c, "╎ File:Line; Function");
		print_tree_nodes(&st);
	}
	print_footer(r, printed, significant);
	free(family);
	free(st.shown);
	free(st.kept);
	free(st.rows);
	calltree_free(st.t);
}

/* ---- flat ---- */

struct flat_state {
	const struct diff *d;
	const struct flat_table *ft;
	const struct diff_row *rows;
};

static int flat_order(const void *a, const void *b, void *ctx)
{
	const struct flat_state *fs = ctx;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct diff_row *x = &fs->rows[i], *y = &fs->rows[j];
	uint64_t dx = abs_i64(diff_row_delta(x)), dy = abs_i64(diff_row_delta(y));
	if (dx != dy)
		return dx > dy ? -1 : 1;
	uint64_t sx = abs_i64(x->base) > abs_i64(x->new) ? abs_i64(x->base) : abs_i64(x->new);
	uint64_t sy = abs_i64(y->base) > abs_i64(y->new) ? abs_i64(y->base) : abs_i64(y->new);
	if (sx != sy)
		return sx > sy ? -1 : 1;
	return flat_row_compare(fs->d->p, &fs->ft->rows[i], &fs->ft->rows[j]);
}

static void print_tsv_row(FILE *out, const struct diff *d, const struct flat_row *fr, const struct diff_row *row,
			  int combine)
{
	const struct profile *p = d->p;
	fprintf(out, "%" PRId64 "\t%" PRId64 "\t%" PRId64 "\t%.4f\t%.6g\t%.6g\t%d\t%" PRId64 "\t%" PRId64 "\t",
		row->base, row->new, diff_row_delta(row), diff_row_percent(d, row), row->p, row->p_adjusted,
		row->significant, row->base_count, row->new_count);
	report_tsv_field(out, profile_string(p, fr->key.file));
	fprintf(out, "\t%u\t", fr->key.line);
	report_tsv_field(out, profile_string(p, p->functions[fr->key.function].name));
	if (combine)
		fputc('\t', out);
	else
		fprintf(out, "\t0x%llx", (unsigned long long)fr->key.address);
	fprintf(out, "\t%d\n", !fr->seen_outlined);
}

static void print_flat_row(const struct report *r, const struct diff *d, const struct columns *c,
			   const struct flat_row *fr, const struct diff_row *row, int wfile, int wline, int wfunc)
{
	const struct profile *p = d->p;
	const struct analyze_options *o = r->o;
	const struct palette *pal = &r->pal;
	print_figures(r, d, c, row);
	char ebuf[4096], fbuf[4096], nbuf[4096], lbuf[16], abuf[4096], addressed[4200];
	const char *file = fit_text(escape_text(report_file(p, fr->key.file, o->full_paths), ebuf, sizeof(ebuf)),
				    o->full_paths ? 0 : wfile, 1, fbuf, sizeof(fbuf));
	const char *name = escape_text(profile_string(p, p->functions[fr->key.function].name), abuf, sizeof(abuf));
	if (!o->combine) {
		snprintf(addressed, sizeof(addressed), "0x%016llx %s", (unsigned long long)fr->key.address, name);
		name = addressed;
	}
	name = fit_text(name, wfunc, 0, nbuf, sizeof(nbuf));
	fprintf(r->out, "%-*s %*s %s%s%s%s\n", wfile, file, wline, report_line(fr->key.line, lbuf, sizeof(lbuf)),
		pal->bold, name, pal->reset, fr->seen_outlined ? "" : " [inlined]");
}

void diff_table_build(struct diff_table *dt, const struct diff *d, const struct analyze_options *o)
{
	memset(dt, 0, sizeof(*dt));
	dt->t = calltree_new(d->p, o->combine, CALLTREE_ALL_THREADS, DIFF_VALUE);
	struct run_sums s;
	stack_sums(dt->t, d, &s);
	struct flat_table fn, fcb, fcn;
	flat_table_build(&dt->ft, dt->t, o->lines, s.base);
	flat_table_build(&fn, dt->t, o->lines, s.new);
	flat_table_build(&fcb, dt->t, o->lines, s.base_count);
	flat_table_build(&fcn, dt->t, o->lines, s.new_count);
	uint32_t nrows = dt->ft.nrows;
	dt->rows = calloc_or_abort(nrows + 1, sizeof(*dt->rows));
	dt->order = calloc_or_abort(nrows + 1, sizeof(*dt->order));
	struct flat_table *runs = s.runs ? calloc_or_abort(d->nruns, sizeof(*runs)) : NULL;
	for (uint32_t k = 0; runs && k < d->nruns; k++)
		flat_table_build(&runs[k], dt->t, o->lines, s.runs[k]);
	int64_t *per_run = calloc_or_abort(d->nruns + 1, sizeof(*per_run));
	for (uint32_t i = 0; i < nrows; i++) {
		for (uint32_t k = 0; runs && k < d->nruns; k++)
			per_run[k] = runs[k].rows[i].count;
		dt->rows[i] = make_row(d, dt->ft.rows[i].count, fn.rows[i].count, fcb.rows[i].count, fcn.rows[i].count,
				       runs ? per_run : NULL);
		if (side_shows(dt->rows[i].base, 0, 1, o, 0) || side_shows(raw_new(d, dt->rows[i].new), 0, 1, o, 0))
			dt->order[dt->n++] = i;
	}
	/* diff_adjust reorders its ids: a copy, so that rows equal in the
	 * order below stay in the table's order. */
	uint32_t *family = calloc_or_abort(dt->n + 1, sizeof(*family));
	if (dt->n)
		memcpy(family, dt->order, dt->n * sizeof(*family));
	diff_adjust(d, dt->rows, family, dt->n);
	free(family);
	for (uint32_t k = 0; k < dt->n; k++)
		dt->significant += dt->rows[dt->order[k]].significant;
	struct flat_state fs = {d, &dt->ft, dt->rows};
	qsort_r(dt->order, dt->n, sizeof(*dt->order), flat_order, &fs);
	for (uint32_t k = 0; runs && k < d->nruns; k++)
		flat_table_free(&runs[k]);
	free(runs);
	free(per_run);
	flat_table_free(&fn);
	flat_table_free(&fcb);
	flat_table_free(&fcn);
	free_sums(&s);
}

void diff_table_free(struct diff_table *dt)
{
	free(dt->rows);
	free(dt->order);
	flat_table_free(&dt->ft);
	calltree_free(dt->t);
	memset(dt, 0, sizeof(*dt));
}

static void diff_flat(const struct report *r, const struct diff *d, const struct diff_view *v)
{
	const struct analyze_options *o = r->o;
	struct diff_table dt;
	diff_table_build(&dt, d, o);
	const struct flat_table *ft = &dt.ft;
	const struct diff_row *rows = dt.rows;
	uint32_t *order = calloc_or_abort(dt.n + 1, sizeof(*order));
	size_t tested = dt.n, significant = dt.significant, n = 0;
	for (uint32_t k = 0; k < dt.n; k++)
		if (!v->significant_only || rows[dt.order[k]].significant)
			order[n++] = dt.order[k];
	if (v->limit && n > v->limit)
		n = v->limit;
	if (v->tsv) {
		fputs("base\tnew\tdelta\tdelta_percent\tp\tp_adjusted\tsignificant\tbase_count\tnew_count\t"
		      "file\tline\tfunction\taddress\tinlined\n", r->out);
		for (size_t i = 0; i < n; i++)
			print_tsv_row(r->out, d, &ft->rows[order[i]], &rows[order[i]], o->combine);
	} else {
		print_header(r, d, tested, significant);
		struct columns c = {4, 3, 5};
		int wfile = 4, wline = 4, wfunc = 0;
		for (size_t i = 0; i < n; i++) {
			widen(&c, &rows[order[i]]);
			char ebuf[4096];
			int len = (int)strlen(escape_text(report_file(d->p, ft->rows[order[i]].key.file, o->full_paths),
							  ebuf, sizeof(ebuf)));
			wfile = len > wfile ? len : wfile;
			int dl = decimal_digits(ft->rows[order[i]].key.line);
			wline = dl > wline ? dl : wline;
		}
		if (o->width) {
			int ntext = o->width - c.wbase - c.wnew - c.wdelta - 7 - 6 - wline - 2;
			ntext = ntext < 20 ? 20 : ntext;
			if (!o->full_paths && wfile > 2 * ntext / 5)
				wfile = 2 * ntext / 5;
			wfunc = ntext - wfile;
		}
		if (!n) {
			fputs(tested ? "No significant changes.\n" : "No samples.\n", r->out);
		} else {
			char rest[128];
			snprintf(rest, sizeof(rest), "%-*s %*s Function", wfile, "File", wline, "Line");
			print_column_heads(r, &c, rest);
			for (size_t i = 0; i < n; i++)
				print_flat_row(r, d, &c, &ft->rows[order[i]], &rows[order[i]], wfile, wline, wfunc);
		}
		print_footer(r, n, significant);
	}
	free(order);
	diff_table_free(&dt);
}

void diff_report(const struct report *r, const struct diff *d, const struct diff_view *v)
{
	if (v->flat || v->tsv)
		diff_flat(r, d, v);
	else
		diff_tree(r, d, v);
}
