/*
 * render_source.c - "analyze source": the code of a source file with a cost
 * column per line between the line number and the code (source_report in
 * report.h; the command is builtin-source.c). Which line a cost is charged
 * to, and how files are found and read, is source.h's.
 *
 * With FILE, the whole file; without, the costliest files and, for each,
 * its top lines with a few lines of context, the hottest first (windows
 * that touch are merged). Percentages are of the whole profile's value. On
 * a terminal the cost column is heat-coloured by heat_level against the
 * file's hottest line. A file that cannot be read, or may have changed
 * since the build, gets a note and its costs are still listed by line
 * number.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "arith.h"
#include "report.h"
#include "source.h"
#include "terminal.h"

struct source_printer {
	const struct report *r;
	const struct source_table *st;
	uint64_t whole; /* what percentages divide */
	const char *unit;
};

/* The value of line of file (k 0, the shown type), 0 when not charged. */
static int64_t value_at(const struct source_printer *sp, const struct source_file *f, uint32_t line)
{
	uint32_t lo = 0, hi = f->nlines;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (f->lines[mid].line < line)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < f->nlines && f->lines[lo].line == line ? source_line_value(sp->st, &f->lines[lo], 0) : 0;
}

static uint64_t hottest_line(const struct source_printer *sp, const struct source_file *f)
{
	uint64_t m = 0;
	for (uint32_t i = 0; i < f->nlines; i++) {
		uint64_t v = abs_i64(source_line_value(sp->st, &f->lines[i], 0));
		m = v > m ? v : m;
	}
	return m;
}

static int cost_width(const struct source_printer *sp, const struct source_file *f)
{
	int w = 4;
	char buf[64];
	for (uint32_t i = 0; i < f->nlines; i++) {
		int n = (int)strlen(format_value(source_line_value(sp->st, &f->lines[i], 0), sp->unit, buf, sizeof(buf)));
		w = n > w ? n : w;
	}
	return w;
}

struct layout {
	int wline, wcost;
	uint64_t hottest;
};

/* One row: line number ("?" for 0), cost and percentage (blank for none), the code or what stands for it. */
static void print_row(const struct source_printer *sp, const struct layout *lay, uint32_t line, int64_t v,
		      const char *code)
{
	const struct report *r = sp->r;
	const struct palette *pal = &r->pal;
	char num[16], cost[64] = "", pct[16] = "";
	snprintf(num, sizeof(num), line ? "%u" : "?", line);
	if (v) {
		format_value(v, sp->unit, cost, sizeof(cost));
		snprintf(pct, sizeof(pct), "%5.1f%%", report_percent(v, sp->whole));
	}
	const char *heat = pal->heat[heat_level(abs_i64(v), lay->hottest)];
	fprintf(r->out, "%s%*s%s %s%*s %6s%s │ %s\n", pal->dim, lay->wline, num, pal->reset, heat, lay->wcost, cost,
		pct, *heat ? pal->reset : "", code);
}

/* The code of line fitted to the width left after the columns. */
static const char *code_of(const struct source_printer *sp, const struct layout *lay, const struct source_text *tx,
			   uint32_t line, char *buf, size_t len)
{
	size_t n;
	const char *s = source_text_line(tx, line, &n);
	if (!s)
		return tx->nlines ? "(past the end of the file)" : "";
	char code[4 * 4096 + 1], fitted[4096];
	source_printable(s, n, code, sizeof(code));
	int width = sp->r->o->width ? sp->r->o->width - (lay->wline + lay->wcost + 12) : 0;
	snprintf(buf, len, "%s", fit_text(code, width > 20 ? width : sp->r->o->width ? 20 : 0, 0, fitted, sizeof(fitted)));
	return buf;
}

/* "PATH: COST (P% of TYPE)" and the file's note, if any. */
static void print_heading(const struct source_printer *sp, const struct source_file *f, const struct source_text *tx)
{
	const struct report *r = sp->r;
	const struct profile *p = r->p;
	char safe[4096], cost[64];
	fprintf(r->out, "%s%s%s: %s (%.1f%% of %s)\n", r->pal.bold,
		escape_text(profile_string(p, f->file), safe, sizeof(safe)), r->pal.reset,
		format_value(f->totals[0], sp->unit, cost, sizeof(cost)), report_percent(f->totals[0], sp->whole),
		profile_string(p, p->value_types[r->value].type));
	if (tx->note[0])
		fprintf(r->out, "Note: %s%s\n", tx->note, tx->path ? "" : "; costs by line number only");
	else if (tx->path && strcmp(tx->path, profile_string(p, f->file)))
		fprintf(r->out, "Read from %s\n", escape_text(tx->path, safe, sizeof(safe)));
}

static void load_text(const struct source_printer *sp, const struct source_file *f, struct source_text *tx)
{
	const struct profile *p = sp->r->p;
	const char *binary = f->module < p->nmodules ? profile_string(p, p->modules[f->module].path) : NULL;
	const struct load_options *lo = &sp->r->o->load;
	source_text_load(tx, profile_string(p, f->file), binary, lo->search_dirs, lo->nsearch_dirs, f->max_line);
}

static void print_columns(const struct source_printer *sp, const struct layout *lay)
{
	fprintf(sp->r->out, "%*s %*s %6s │ Source\n", lay->wline, "Line", lay->wcost, "Cost", "%");
}

static void print_whole_file(const struct source_printer *sp, const struct source_file *f)
{
	struct source_text tx;
	load_text(sp, f, &tx);
	print_heading(sp, f, &tx);
	uint32_t last = tx.nlines > f->max_line ? tx.nlines : f->max_line;
	struct layout lay = {decimal_digits(last) > 4 ? decimal_digits(last) : 4, cost_width(sp, f), hottest_line(sp, f)};
	print_columns(sp, &lay);
	char code[4096];
	if (f->nlines && f->lines[0].line == 0)
		print_row(sp, &lay, 0, source_line_value(sp->st, &f->lines[0], 0), "(line unknown)");
	if (!tx.path) {
		for (uint32_t i = 0; i < f->nlines; i++)
			if (f->lines[i].line)
				print_row(sp, &lay, f->lines[i].line, source_line_value(sp->st, &f->lines[i], 0), "");
	} else {
		for (uint32_t line = 1; line <= last; line++)
			print_row(sp, &lay, line, value_at(sp, f, line), code_of(sp, &lay, &tx, line, code, sizeof(code)));
	}
	source_text_free(&tx);
}

/* A run of lines shown together, and its hottest cost (what orders them). */
struct hunk {
	uint32_t first, last;
	uint64_t key;
};

static int by_magnitude(const void *a, const void *b, void *ctx)
{
	const struct source_printer *sp = ctx;
	const struct source_line *x = a, *y = b;
	uint64_t vx = abs_i64(source_line_value(sp->st, x, 0)), vy = abs_i64(source_line_value(sp->st, y, 0));
	if (vx != vy)
		return vx > vy ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

static int by_line(const void *a, const void *b)
{
	const struct source_line *x = a, *y = b;
	return x->line < y->line ? -1 : x->line > y->line;
}

static int by_key(const void *a, const void *b)
{
	const struct hunk *x = a, *y = b;
	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

static void print_top_lines(const struct source_printer *sp, const struct source_file *f,
			    const struct source_options *so)
{
	struct source_text tx;
	load_text(sp, f, &tx);
	print_heading(sp, f, &tx);
	struct source_line *top = calloc_or_abort(f->nlines ? f->nlines : 1, sizeof(*top));
	uint32_t n = 0;
	for (uint32_t i = 0; i < f->nlines; i++)
		if (source_line_value(sp->st, &f->lines[i], 0) != 0)
			top[n++] = f->lines[i];
	qsort_r(top, n, sizeof(*top), by_magnitude, (void *)sp);
	n = n < so->top ? n : so->top;
	qsort(top, n, sizeof(*top), by_line);
	/* Windows of context around each, merged where they touch; without
	 * the code, context is nothing to show. */
	uint32_t context = tx.path ? so->context : 0;
	struct hunk *hunks = calloc_or_abort(n ? n : 1, sizeof(*hunks));
	uint32_t nh = 0, last = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t l = top[i].line;
		uint32_t a = l > context ? l - context : (l ? 1 : 0);
		uint32_t b = l == 0 ? 0 : l + context;
		if (tx.path && b > tx.nlines)
			b = l > tx.nlines ? l : tx.nlines; /* no context past the end */
		uint64_t v = abs_i64(source_line_value(sp->st, &top[i], 0));
		if (nh && l && hunks[nh - 1].last && a <= hunks[nh - 1].last + 1) {
			hunks[nh - 1].last = b > hunks[nh - 1].last ? b : hunks[nh - 1].last;
			hunks[nh - 1].key = v > hunks[nh - 1].key ? v : hunks[nh - 1].key;
		} else {
			hunks[nh++] = (struct hunk){a, b, v};
		}
		last = b > last ? b : last;
	}
	qsort(hunks, nh, sizeof(*hunks), by_key);
	struct layout lay = {decimal_digits(last) > 4 ? decimal_digits(last) : 4, cost_width(sp, f), hottest_line(sp, f)};
	print_columns(sp, &lay);
	char code[4096];
	for (uint32_t h = 0; h < nh; h++) {
		if (h)
			fprintf(sp->r->out, "%*s\n", lay.wline, "...");
		for (uint32_t l = hunks[h].first; l <= hunks[h].last; l++) {
			int64_t v = value_at(sp, f, l);
			if (l == 0)
				print_row(sp, &lay, 0, v, "(line unknown)");
			else if (tx.path)
				print_row(sp, &lay, l, v, code_of(sp, &lay, &tx, l, code, sizeof(code)));
			else if (v)
				print_row(sp, &lay, l, v, "");
			if (l == UINT32_MAX)
				break;
		}
	}
	fputc('\n', sp->r->out);
	free(hunks);
	free(top);
	source_text_free(&tx);
}

static void print_file_list(const struct source_printer *sp, const uint32_t *order, uint32_t n)
{
	const struct report *r = sp->r;
	const struct profile *p = r->p;
	char cost[64], safe[4096];
	int w = 4;
	for (uint32_t i = 0; i < n; i++) {
		int len = (int)strlen(format_value(sp->st->files[order[i]].totals[0], sp->unit, cost, sizeof(cost)));
		w = len > w ? len : w;
	}
	fprintf(r->out, "%sFiles by %s%s (a file's cost: the stacks with a frame in it)\n", r->pal.bold,
		profile_string(p, p->value_types[r->value].type), r->pal.reset);
	fprintf(r->out, "%*s %6s  File\n", w, "Cost", "%");
	for (uint32_t i = 0; i < n; i++) {
		const struct source_file *f = &sp->st->files[order[i]];
		fprintf(r->out, "%*s %5.1f%%  %s\n", w, format_value(f->totals[0], sp->unit, cost, sizeof(cost)),
			report_percent(f->totals[0], sp->whole), escape_text(profile_string(p, f->file), safe, sizeof(safe)));
	}
	fputc('\n', r->out);
}

static void print_tsv(const struct report *r, const struct source_table *st, const uint32_t *order, uint32_t n,
		      const uint32_t *types)
{
	const struct profile *p = r->p;
	fputs("file\tline", r->out);
	for (uint32_t k = 0; k < st->nvalues; k++)
		fprintf(r->out, "\t%s", profile_string(p, p->value_types[types[k]].type));
	fputc('\n', r->out);
	for (uint32_t i = 0; i < n; i++) {
		const struct source_file *f = &st->files[order[i]];
		for (uint32_t l = 0; l < f->nlines; l++) {
			report_tsv_field(r->out, profile_string(p, f->file));
			fprintf(r->out, "\t%u", f->lines[l].line);
			for (uint32_t k = 0; k < st->nvalues; k++)
				fprintf(r->out, "\t%" PRId64, source_line_value(st, &f->lines[l], k));
			fputc('\n', r->out);
		}
	}
}

/* so->file's index in st: 0 with *index set, or -1 with err said. */
static int find_file(const struct report *r, const struct source_options *so, const struct source_table *st,
		     uint32_t *index, char *err, size_t errlen)
{
	const struct profile *p = r->p;
	const char *name = so->file;
	uint32_t found[3];
	uint32_t n = source_match_file(st, name, found, 3);
	if (n == 1) {
		*index = found[0];
		return 0;
	}
	char list[1024] = "", safe[1024];
	size_t used = 0;
	uint32_t *order = NULL;
	uint32_t nfiles = n ? (n < 3 ? n : 3) : source_files_by_cost(st, 0, &order);
	for (uint32_t i = 0; i < nfiles && i < 3 && used < sizeof(list); i++) {
		uint32_t fi = n ? found[i] : order[i];
		int w = snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "",
				 escape_text(profile_string(p, st->files[fi].file), safe, sizeof(safe)));
		used += w > 0 ? (size_t)w : 0;
	}
	free(order);
	const char *shown = escape_text(name, safe, sizeof(safe));
	if (n)
		snprintf(err, errlen, "'%s' matches %u source files of %s (%s%s): give more of the path", shown, n,
			 so->trace, list, n > 3 ? ", ..." : "");
	else if (st->nfiles)
		snprintf(err, errlen, "no source file of %s ends with '%s' (the costliest: %s%s)", so->trace, shown, list,
			 st->nfiles > 3 ? ", ..." : "");
	else
		snprintf(err, errlen, "no source file of %s ends with '%s': its frames have no file names", so->trace,
			 shown);
	return -1;
}

int source_report(const struct report *r, const struct source_options *so, char *err, size_t errlen)
{
	const struct profile *p = r->p;
	struct calltree *t = calltree_new(p, r->o->combine, CALLTREE_ALL_THREADS, r->value);
	uint32_t types[PROFILE_MAX_VALUE_TYPES];
	uint32_t ntypes = report_source_types(r, so, types);
	int64_t *sums[PROFILE_MAX_VALUE_TYPES];
	sums[0] = t->stack_value;
	for (uint32_t k = 1; k < ntypes; k++) {
		sums[k] = calloc_or_abort(p->nstacks ? p->nstacks : 1, sizeof(*sums[k]));
		calltree_stack_sums(t, types[k], NULL, sums[k]);
	}
	struct source_table st;
	source_table_build(&st, t, (const int64_t *const *)sums, ntypes);
	struct source_printer sp = {r, &st, t->total_abs, profile_string(p, p->value_types[r->value].unit)};
	uint32_t *order = NULL, n = 0, one;
	int rc = 0;
	if (so->file) {
		if ((rc = find_file(r, so, &st, &one, err, errlen)) < 0)
			goto out;
		order = calloc_or_abort(1, sizeof(*order));
		order[0] = one;
		n = 1;
	} else {
		n = source_files_by_cost(&st, 0, &order);
	}
	if (so->format == SOURCE_FORMAT_TSV) {
		print_tsv(r, &st, order, n, types);
		goto out;
	}
	report_header(r, t);
	if (so->file) {
		print_whole_file(&sp, &st.files[order[0]]);
		fputc('\n', r->out);
	} else if (n == 0) {
		fputs(t->total_abs ? "No costs with a source file (no debug info with line numbers?).\n\n"
				   : "No samples.\n\n",
		      r->out);
	} else {
		uint32_t shown = n < so->files ? n : so->files;
		print_file_list(&sp, order, shown);
		for (uint32_t i = 0; i < shown; i++)
			print_top_lines(&sp, &st.files[order[i]], so);
	}
	report_footer(r, t);
out:
	free(order);
	source_table_free(&st);
	for (uint32_t k = 1; k < ntypes; k++)
		free(sums[k]);
	calltree_free(t);
	return rc;
}
