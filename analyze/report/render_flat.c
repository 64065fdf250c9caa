/*
 * render_flat.c - one row per function (or per source line with --lines,
 * per address with --no-combine): Julia's Profile.print(format=:flat)
 * columns plus percentages (flat_report in report.h; the command is
 * builtin-flat.c), or the same rows as TSV for scripts.
 *
 * Count is inclusive and counts a sample at most once per row, even when
 * the row's function is on the stack several times (recursion), so no Count
 * exceeds the total; Julia's own flat counts can. Self counts samples whose
 * innermost shown frame is the row's. Sorting by count or self ranks by
 * absolute value (a diff's negative rows rank by size). An allocation
 * profile's leaves ("malloc 32 B") are no rows: their cost is the self of
 * the frame that allocated. In a trace of many programs (a build) each
 * function is named with its module, "xmalloc (cc1)"; the text of one
 * program's trace stays as it was.
 *
 * TSV (--format tsv): a header line naming the columns, then one line per
 * row, fields separated by tabs, nothing truncated or shortened:
 *   count self        the shown value type, inclusive and self (integers)
 *   file line         full source path ("" unknown), line (0 unknown)
 *   function          the function's name
 *   address           0x... with --no-combine, "" otherwise
 *   inlined           1 when every occurrence was inlined, else 0
 *   TYPE TYPE_self    then these two for every value type of the trace
 *                     (samples, samples_self, cpu, cpu_self...)
 *   module            last, only when the trace has more than one program
 *                     (profile_many_programs): the function's module by its
 *                     basename, so that xmalloc of cc1 and of as differ
 * In fields, '\' '\t' '\n' '\r' are written \\ \t \n \r and other control
 * bytes \xHH (report_tsv_field).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "arith.h"
#include "calltree.h"
#include "hashmap.h"
#include "report.h"
#include "terminal.h"

static int row_equal(const void *ctx, uint32_t id)
{
	const struct flat_table *ft = ctx;
	const struct calltree_frame *a = &ft->rows[id].key, *b = ft->seek;
	return a->address == b->address && a->function == b->function && a->file == b->file &&
	       a->line == b->line;
}

static uint32_t row_of(struct flat_table *ft, const struct calltree_frame *key)
{
	uint64_t h = hash_combine(hash_u64(key->address), ((uint64_t)key->function << 32) | key->file);
	h = hash_combine(h, key->line);
	ft->seek = key;
	uint32_t id = hashmap_find(&ft->index, h, row_equal, ft);
	if (id != HASHMAP_NONE)
		return id;
	ALLOC_GROW(ft->rows, (uint64_t)ft->nrows + 1, ft->cap);
	ft->rows[ft->nrows] = (struct flat_row){.key = *key};
	hashmap_insert(&ft->index, h, ft->nrows);
	return ft->nrows++;
}

/* The rows, for every frame of t whatever the values (counts still 0). */
static void make_rows(struct flat_table *ft, const struct calltree *t, int by_line)
{
	const struct profile *p = t->profile;
	memset(ft, 0, sizeof(*ft));
	ft->t = t;
	hashmap_init(&ft->index, 1024);
	ft->frame_row = calloc_or_abort(t->nframes, sizeof(*ft->frame_row));
	for (uint32_t i = 0; i < t->nframes; i++) {
		struct calltree_frame key = t->frames[i];
		key.inlined = 0;
		if (p->functions[key.function].flags & PROFILE_FUNCTION_ALLOC_LEAF) {
			ft->frame_row[i] = UINT32_MAX; /* charged to the frame above */
			continue;
		}
		if (!by_line) {
			const struct profile_function *fn = &p->functions[key.function];
			key.file = fn->file;
			key.line = fn->start_line;
		}
		ft->frame_row[i] = row_of(ft, &key);
		ft->rows[ft->frame_row[i]].seen_outlined |= !t->frames[i].inlined;
	}
	hashmap_free(&ft->index);
}

void flat_table_build(struct flat_table *ft, const struct calltree *t, int by_line, const int64_t *stack_values)
{
	const struct profile *p = t->profile;
	make_rows(ft, t, by_line);
	if (!stack_values)
		stack_values = t->stack_value;
	/* The tree's deepest stack of nonzero value bounds its own values'
	 * stacks only. */
	uint32_t max_frames = stack_values == t->stack_value ? t->max_frames : profile_max_stack_frames(p);
	uint32_t *frames = calloc_or_abort(max_frames ? max_frames : 1, sizeof(*frames));
	for (uint32_t s = 0; s < p->nstacks; s++) {
		int64_t w = stack_values[s];
		if (!w)
			continue;
		uint32_t n = calltree_stack_frames(t, s, frames);
		/* What was allocated is the allocating frame's self: "which line of my code allocates". */
		while (n > 1 && ft->frame_row[frames[n - 1]] == UINT32_MAX)
			n--;
		for (uint32_t i = 0; i < n; i++) {
			if (ft->frame_row[frames[i]] == UINT32_MAX)
				continue;
			struct flat_row *r = &ft->rows[ft->frame_row[frames[i]]];
			if (r->stamp == s + 1)
				continue;
			r->stamp = s + 1;
			r->count = sat_add_i64(r->count, w, NULL);
		}
		if (n && ft->frame_row[frames[n - 1]] != UINT32_MAX) {
			struct flat_row *leaf = &ft->rows[ft->frame_row[frames[n - 1]]];
			leaf->self = sat_add_i64(leaf->self, w, NULL);
		}
	}
	free(frames);
}

uint8_t *flat_table_topmost(const struct flat_table *ft)
{
	const struct calltree *t = ft->t;
	uint8_t *topmost = calloc_or_abort(t->nnodes ? t->nnodes : 1, 1);
	/* Depth first, with a count per row of its nodes on the current path. */
	uint32_t *on_path = calloc_or_abort(ft->nrows ? ft->nrows : 1, sizeof(*on_path));
	uint32_t *stack = NULL, top = 0, cap = 0;
	ALLOC_GROW(stack, 1, cap);
	stack[top++] = 0;
	while (top) {
		uint32_t x = stack[--top];
		if (x & 0x80000000u) { /* leaving a node */
			on_path[ft->frame_row[t->nodes[x & 0x7fffffffu].frame]]--;
			continue;
		}
		/* Allocation leaves have no row (make_rows): never topmost. */
		if (x && ft->frame_row[t->nodes[x].frame] != UINT32_MAX) {
			topmost[x] = on_path[ft->frame_row[t->nodes[x].frame]]++ == 0;
			ALLOC_GROW(stack, (uint64_t)top + 1, cap);
			stack[top++] = x | 0x80000000u;
		}
		for (uint32_t c = t->nodes[x].first_child; c != CALLTREE_NONE; c = t->nodes[c].next_sibling) {
			ALLOC_GROW(stack, (uint64_t)top + 1, cap);
			stack[top++] = c;
		}
	}
	free(stack);
	free(on_path);
	return topmost;
}

void flat_table_build_nodes(struct flat_table *ft, const struct calltree *t, int by_line, const int64_t *stack_values,
			    const int64_t *node_inclusive, const uint8_t *topmost)
{
	const struct profile *p = t->profile;
	if (t->nnodes >= 0x80000000u) { /* node ids need their top bit in flat_table_topmost */
		flat_table_build(ft, t, by_line, stack_values);
		return;
	}
	make_rows(ft, t, by_line);
	/* Self: each stack's value at its innermost node above any leaves. */
	for (uint32_t s = 0; s < p->nstacks; s++) {
		uint32_t node = t->stack_node[s];
		if (node == CALLTREE_NONE || !stack_values[s])
			continue;
		while (t->nodes[node].parent && ft->frame_row[t->nodes[node].frame] == UINT32_MAX)
			node = t->nodes[node].parent;
		if (ft->frame_row[t->nodes[node].frame] == UINT32_MAX)
			continue; /* a stack of nothing but a leaf */
		struct flat_row *r = &ft->rows[ft->frame_row[t->nodes[node].frame]];
		r->self = sat_add_i64(r->self, stack_values[s], NULL);
	}
	/* Count: a row's topmost nodes on each path, whose inclusive sums
	 * count every stack below them once. */
	uint8_t *own = topmost ? NULL : flat_table_topmost(ft);
	const uint8_t *first = topmost ? topmost : own;
	for (uint32_t n = 1; n < t->nnodes; n++) {
		if (!first[n] || !node_inclusive[n])
			continue;
		struct flat_row *r = &ft->rows[ft->frame_row[t->nodes[n].frame]];
		r->count = sat_add_i64(r->count, node_inclusive[n], NULL);
	}
	free(own);
}

void flat_table_free(struct flat_table *ft)
{
	free(ft->rows);
	free(ft->frame_row);
}

struct row_order {
	const struct flat_table *ft;
	enum flat_sort sort;
};

int flat_row_compare(const struct profile *p, const struct flat_row *x, const struct flat_row *y)
{
	if ((x->key.file == 0) != (y->key.file == 0))
		return x->key.file == 0 ? 1 : -1;
	int c = strcmp(profile_string(p, x->key.file), profile_string(p, y->key.file));
	if (!c)
		c = strcmp(profile_string(p, p->functions[x->key.function].name),
			   profile_string(p, p->functions[y->key.function].name));
	if (!c && x->key.line != y->key.line)
		c = x->key.line < y->key.line ? -1 : 1;
	if (!c && x->key.address != y->key.address)
		c = x->key.address < y->key.address ? -1 : 1;
	return c;
}

static int row_order(const void *a, const void *b, void *ctx)
{
	const struct row_order *ro = ctx;
	const struct flat_row *x = &ro->ft->rows[*(const uint32_t *)a];
	const struct flat_row *y = &ro->ft->rows[*(const uint32_t *)b];
	uint64_t cx = abs_i64(x->count), cy = abs_i64(y->count);
	uint64_t sx = abs_i64(x->self), sy = abs_i64(y->self);
	if (ro->sort == FLAT_SORT_COUNT && cx != cy)
		return cx > cy ? -1 : 1;
	if (ro->sort == FLAT_SORT_SELF && sx != sy)
		return sx > sy ? -1 : 1;
	if (ro->sort == FLAT_SORT_SELF && cx != cy) /* then by inclusive: callers of equal self */
		return cx > cy ? -1 : 1;
	return flat_row_compare(ro->ft->t->profile, x, y);
}

/* The rows shown, in order: nonzero, at least --mincount, sorted, cut at --limit. */
static uint32_t shown_rows(const struct flat_table *ft, const struct analyze_options *o,
			   const struct flat_options *fo, uint32_t **order_out)
{
	uint32_t *order = calloc_or_abort(ft->nrows, sizeof(*order));
	uint32_t n = 0;
	for (uint32_t i = 0; i < ft->nrows; i++)
		if (ft->rows[i].count != 0 && abs_i64(ft->rows[i].count) >= o->mincount)
			order[n++] = i;
	struct row_order ro = {ft, fo->sort};
	qsort_r(order, n, sizeof(*order), row_order, &ro);
	if (fo->limit && n > fo->limit)
		n = (uint32_t)fo->limit;
	*order_out = order;
	return n;
}

/* The row's function as shown: with its module when p has many programs (and the name is no module+offset). */
static const char *row_name(const struct profile *p, const struct flat_row *row, int many, char *buf, size_t len)
{
	const struct profile_function *fn = &p->functions[row->key.function];
	const char *name = profile_string(p, fn->name);
	if (!many || (fn->flags & PROFILE_FUNCTION_UNKNOWN))
		return name;
	snprintf(buf, len, "%s (%s)", name, profile_module_name(p, fn->module));
	return buf;
}

static void print_rows(const struct report *r, const struct flat_table *ft, const struct flat_options *fo)
{
	const struct calltree *t = ft->t;
	const struct profile *p = t->profile;
	const struct analyze_options *o = r->o;
	const struct palette *pal = &r->pal;
	FILE *out = r->out;
	uint32_t *order;
	uint32_t n = shown_rows(ft, o, fo, &order);
	int many = profile_many_programs(p);

	uint32_t maxline = 0;
	int wfile = 4, wcount = 5, wself = 4;
	for (uint32_t i = 0; i < n; i++) {
		const struct flat_row *row = &ft->rows[order[i]];
		char buf[32];
		int w = (int)strlen(report_row_value(r, row->count, buf, sizeof(buf)));
		wcount = w > wcount ? w : wcount;
		w = (int)strlen(report_row_value(r, row->self, buf, sizeof(buf)));
		wself = w > wself ? w : wself;
		maxline = row->key.line > maxline ? row->key.line : maxline;
		char ebuf[4096];
		int len = (int)strlen(escape_text(report_file(p, row->key.file, o->full_paths), ebuf, sizeof(ebuf)));
		wfile = len > wfile ? len : wfile;
	}
	int wline = decimal_digits(maxline) > 4 ? decimal_digits(maxline) : 4;
	int wfunc = 0;
	if (o->width) {
		/* Julia's split: 2/5 of the text columns for the file, 3/5 for names. */
		int ntext = o->width - wcount - wself - wline - 2 * 7 - 5;
		if (ntext < 20)
			ntext = 20;
		if (!o->full_paths && wfile > 2 * ntext / 5)
			wfile = 2 * ntext / 5;
		wfunc = ntext - wfile;
	}
	fprintf(out, "%s%*s %6s %*s %6s %-*s %*s Function%s\n", pal->bold, wcount, "Count", "%", wself, "Self",
		"%", wfile, "File", wline, "Line", pal->reset);
	fprintf(out, "%*s %6s %*s %6s %-*s %*s ========\n", wcount, "=====", "======", wself, "====", "======",
		wfile, "====", wline, "====");
	for (uint32_t i = 0; i < n; i++) {
		const struct flat_row *row = &ft->rows[order[i]];
		char ebuf[4096], fbuf[4096], nbuf[4096], lbuf[16], abuf[4096], addressed[4200], mbuf[4200];
		const char *file = fit_text(escape_text(report_file(p, row->key.file, o->full_paths), ebuf, sizeof(ebuf)),
					    o->full_paths ? 0 : wfile, 1, fbuf, sizeof(fbuf));
		const char *name = escape_text(row_name(p, row, many, mbuf, sizeof(mbuf)), abuf, sizeof(abuf));
		if (!t->combine) {
			snprintf(addressed, sizeof(addressed), "0x%016llx %s", (unsigned long long)row->key.address,
				 name);
			name = addressed;
		}
		name = fit_text(name, wfunc, 0, nbuf, sizeof(nbuf));
		char count[32], self[32];
		fprintf(out, "%s%*s%s %5.1f%% %s%*s%s %5.1f%% %-*s %*s %s%s%s", pal->count, wcount,
			report_row_value(r, row->count, count, sizeof(count)), pal->reset,
			report_percent(row->count, t->total_abs), pal->self, wself,
			report_row_value(r, row->self, self, sizeof(self)), pal->reset,
			report_percent(row->self, t->total_abs), wfile,
			file, wline, report_line(row->key.line, lbuf, sizeof(lbuf)), pal->bold, name, pal->reset);
		if (!row->seen_outlined)
			fprintf(out, " %s[inlined]%s", pal->inlined, pal->reset);
		fputc('\n', out);
	}
	free(order);
}

void report_tsv_field(FILE *out, const char *s)
{
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '\\')
			fputs("\\\\", out);
		else if (*c == '\t')
			fputs("\\t", out);
		else if (*c == '\n')
			fputs("\\n", out);
		else if (*c == '\r')
			fputs("\\r", out);
		else if (*c < 0x20 || *c == 0x7f)
			fprintf(out, "\\x%02x", *c);
		else
			fputc(*c, out);
	}
}

static void print_tsv(const struct report *r, const struct flat_table *ft, const struct flat_options *fo)
{
	const struct calltree *t = ft->t;
	const struct profile *p = r->p;
	FILE *out = r->out;
	/* Every type's rows: frames and so rows come out in the same order
	 * whatever the value, so row i is the same row in each table. */
	struct flat_table by_type[PROFILE_MAX_VALUE_TYPES];
	struct calltree *trees[PROFILE_MAX_VALUE_TYPES];
	for (uint32_t v = 0; v < p->nvalue_types; v++) {
		trees[v] = calltree_new(p, t->combine, CALLTREE_ALL_THREADS, v);
		flat_table_build(&by_type[v], trees[v], r->o->lines, NULL);
	}
	int many = profile_many_programs(p);
	fputs("count\tself\tfile\tline\tfunction\taddress\tinlined", out);
	for (uint32_t v = 0; v < p->nvalue_types; v++) {
		const char *type = profile_string(p, p->value_types[v].type);
		fprintf(out, "\t%s\t%s_self", type, type);
	}
	fputs(many ? "\tmodule\n" : "\n", out);
	uint32_t *order;
	uint32_t n = shown_rows(ft, r->o, fo, &order);
	for (uint32_t i = 0; i < n; i++) {
		const struct flat_row *row = &ft->rows[order[i]];
		fprintf(out, "%" PRId64 "\t%" PRId64 "\t", row->count, row->self);
		report_tsv_field(out, profile_string(p, row->key.file));
		fprintf(out, "\t%u\t", row->key.line);
		report_tsv_field(out, profile_string(p, p->functions[row->key.function].name));
		if (!t->combine)
			fprintf(out, "\t0x%llx", (unsigned long long)row->key.address);
		else
			fputc('\t', out);
		fprintf(out, "\t%d", !row->seen_outlined);
		for (uint32_t v = 0; v < p->nvalue_types; v++) {
			const struct flat_row *other = &by_type[v].rows[order[i]];
			fprintf(out, "\t%" PRId64 "\t%" PRId64, other->count, other->self);
		}
		if (many) {
			fputc('\t', out);
			report_tsv_field(out, profile_module_name(p, p->functions[row->key.function].module));
		}
		fputc('\n', out);
	}
	free(order);
	for (uint32_t v = 0; v < p->nvalue_types; v++) {
		flat_table_free(&by_type[v]);
		calltree_free(trees[v]);
	}
}

void flat_report(const struct report *r, const struct flat_options *fo)
{
	struct calltree *t = calltree_new(r->p, r->o->combine, CALLTREE_ALL_THREADS, r->value);
	struct flat_table ft;
	flat_table_build(&ft, t, r->o->lines, NULL);
	if (fo->format == FLAT_FORMAT_TSV) {
		print_tsv(r, &ft, fo);
	} else {
		report_header(r, t);
		if (t->total_abs == 0)
			fputs("No samples.\n", r->out);
		else
			print_rows(r, &ft, fo);
		report_footer(r, t);
	}
	flat_table_free(&ft);
	calltree_free(t);
}
