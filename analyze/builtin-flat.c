/*
 * builtin-flat.c - "analyze flat": one row per function (or per source line
 * with --lines, per address with --no-combine), Julia's Profile.print(format=
 * :flat) columns plus percentages.
 *
 * Count is inclusive and counts a sample at most once per row, even when
 * the row's function is on the stack several times (recursion), so no Count
 * exceeds the total; Julia's own flat counts can. Self counts samples whose
 * innermost shown frame is the row's.
 */
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "calltree.h"
#include "hashmap.h"
#include "options.h"
#include "report.h"
#include "reports.h"
#include "terminal.h"

enum { OPT_SORTEDBY = OPTION_COMMAND_FIRST, OPT_LIMIT };

static const struct option flat_long_options[] = {
	{"sortedby", required_argument, NULL, OPT_SORTEDBY},
	{"limit", required_argument, NULL, OPT_LIMIT},
	{NULL, 0, NULL, 0},
};

static struct flat_options flat_opts;
static int flat_handle(int opt, const char *arg, void *ctx);

static const struct analyze_command flat_command = {
	.name = "flat",
	.synopsis = "analyze flat [options] TRACE",
	.summary = "Print one row per function with its inclusive count (each sample counted\n"
		   "once per row, even under recursion) and its self count.",
	.help = "      --sortedby KEY      filefuncline (default), count or self (largest first)\n"
		"      --limit N           print the first N rows only\n",
	.groups = OPTGROUP_LOAD | OPTGROUP_FILTER | OPTGROUP_MINCOUNT | OPTGROUP_LINES |
		  OPTGROUP_COMBINE | OPTGROUP_DISPLAY,
	.options = flat_long_options,
	.handle = flat_handle,
	.ctx = &flat_opts,
};

static int flat_handle(int opt, const char *arg, void *ctx)
{
	struct flat_options *fo = ctx;
	switch (opt) {
	case OPT_SORTEDBY:
		if (!strcmp(arg, "filefuncline"))
			fo->sort = FLAT_SORT_FILEFUNCLINE;
		else if (!strcmp(arg, "count"))
			fo->sort = FLAT_SORT_COUNT;
		else if (!strcmp(arg, "self") || !strcmp(arg, "overhead"))
			fo->sort = FLAT_SORT_SELF;
		else {
			usage_error(&flat_command,
				    "--sortedby wants filefuncline, count or self, not '%s'", arg);
			return -1;
		}
		return 0;
	case OPT_LIMIT:
		if (parse_u64(arg, &fo->limit)) {
			usage_error(&flat_command, "--limit wants a number of rows, not '%s'", arg);
			return -1;
		}
		return 0;
	}
	usage_error(&flat_command, "unknown option");
	return -1;
}

struct flat_row {
	struct calltree_frame key; /* function rows: the function's own file and start line */
	uint64_t count, self;
	uint32_t stamp;     /* last stack counted + 1, so recursion counts once */
	int seen_outlined;  /* some occurrence was not inlined */
};

struct flat_table {
	const struct calltree *t;
	struct flat_row *rows;
	uint32_t nrows, cap;
	struct idmap index;
	const struct calltree_frame *seek;
	uint32_t *frame_row; /* calltree frame -> row */
};

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
	uint32_t id = idmap_find(&ft->index, h, row_equal, ft);
	if (id != HASHMAP_NONE)
		return id;
	if (ft->nrows == ft->cap) {
		ft->cap = ft->cap ? 2 * ft->cap : 1024;
		ft->rows = realloc(ft->rows, ft->cap * sizeof(*ft->rows));
		if (!ft->rows)
			abort();
	}
	ft->rows[ft->nrows] = (struct flat_row){.key = *key};
	idmap_insert(&ft->index, h, ft->nrows);
	return ft->nrows++;
}

/* Fold frames into rows, then count every stack once per row. */
static void build_rows(struct flat_table *ft, int by_line)
{
	const struct calltree *t = ft->t;
	const struct profile *p = t->profile;
	idmap_init(&ft->index, 1024);
	ft->frame_row = calloc(t->nframes ? t->nframes : 1, sizeof(*ft->frame_row));
	for (uint32_t i = 0; i < t->nframes; i++) {
		struct calltree_frame key = t->frames[i];
		key.inlined = 0;
		if (!by_line) {
			const struct profile_function *fn = &p->functions[key.function];
			key.file = fn->file;
			key.line = fn->start_line;
		}
		ft->frame_row[i] = row_of(ft, &key);
		ft->rows[ft->frame_row[i]].seen_outlined |= !t->frames[i].inlined;
	}
	uint32_t *frames = calloc(t->max_frames ? t->max_frames : 1, sizeof(*frames));
	for (uint32_t s = 0; s < p->nstacks; s++) {
		uint64_t w = t->stack_weight[s];
		if (!w)
			continue;
		uint32_t n = calltree_stack_frames(t, s, frames);
		for (uint32_t i = 0; i < n; i++) {
			struct flat_row *r = &ft->rows[ft->frame_row[frames[i]]];
			if (r->stamp == s + 1)
				continue;
			r->stamp = s + 1;
			r->count += w;
		}
		if (n)
			ft->rows[ft->frame_row[frames[n - 1]]].self += w;
	}
	free(frames);
	idmap_free(&ft->index);
}

static const struct flat_table *sort_table;
static enum flat_sort sort_by;

static int filefuncline(const struct flat_row *x, const struct flat_row *y)
{
	const struct profile *p = sort_table->t->profile;
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

static int row_order(const void *a, const void *b)
{
	const struct flat_row *x = &sort_table->rows[*(const uint32_t *)a];
	const struct flat_row *y = &sort_table->rows[*(const uint32_t *)b];
	if (sort_by == FLAT_SORT_COUNT && x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (sort_by == FLAT_SORT_SELF && x->self != y->self)
		return x->self > y->self ? -1 : 1;
	return filefuncline(x, y);
}

static void print_rows(FILE *out, const struct flat_table *ft, const struct analyze_options *o,
		       const struct flat_options *fo)
{
	const struct calltree *t = ft->t;
	const struct profile *p = t->profile;
	uint32_t *order = calloc(ft->nrows ? ft->nrows : 1, sizeof(*order));
	uint32_t n = 0;
	for (uint32_t i = 0; i < ft->nrows; i++)
		if (ft->rows[i].count >= o->mincount && ft->rows[i].count > 0)
			order[n++] = i;
	sort_table = ft;
	sort_by = fo->sort;
	qsort(order, n, sizeof(*order), row_order);
	if (fo->limit && n > fo->limit)
		n = (uint32_t)fo->limit;

	struct palette pal;
	palette_init(&pal, o->color);
	uint64_t maxcount = 0, maxself = 0;
	uint32_t maxline = 0;
	int wfile = 4;
	for (uint32_t i = 0; i < n; i++) {
		const struct flat_row *r = &ft->rows[order[i]];
		maxcount = r->count > maxcount ? r->count : maxcount;
		maxself = r->self > maxself ? r->self : maxself;
		maxline = r->key.line > maxline ? r->key.line : maxline;
		int len = (int)strlen(report_file(p, r->key.file, o->full_paths));
		wfile = len > wfile ? len : wfile;
	}
	int wcount = decimal_digits(maxcount) > 5 ? decimal_digits(maxcount) : 5;
	int wself = decimal_digits(maxself) > 4 ? decimal_digits(maxself) : 4;
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
	fprintf(out, "%s%*s %6s %*s %6s %-*s %*s Function%s\n", pal.bold, wcount, "Count", "%",
		wself, "Self", "%", wfile, "File", wline, "Line", pal.reset);
	fprintf(out, "%*s %6s %*s %6s %-*s %*s ========\n", wcount, "=====", "======", wself,
		"====", "======", wfile, "====", wline, "====");
	for (uint32_t i = 0; i < n; i++) {
		const struct flat_row *r = &ft->rows[order[i]];
		char fbuf[4096], nbuf[4096], lbuf[16], abuf[4096];
		const char *file = fit_text(report_file(p, r->key.file, o->full_paths),
					    o->full_paths ? 0 : wfile, 1, fbuf, sizeof(fbuf));
		const char *name = profile_string(p, p->functions[r->key.function].name);
		if (!t->combine) {
			snprintf(abuf, sizeof(abuf), "0x%016llx %s",
				 (unsigned long long)r->key.address, name);
			name = abuf;
		}
		name = fit_text(name, wfunc, 0, nbuf, sizeof(nbuf));
		fprintf(out, "%s%*llu%s %5.1f%% %s%*llu%s %5.1f%% %-*s %*s %s%s%s",
			pal.count, wcount, (unsigned long long)r->count, pal.reset,
			report_percent(r->count, t->total_weight), pal.self, wself,
			(unsigned long long)r->self, pal.reset, report_percent(r->self, t->total_weight),
			wfile, file, wline, report_line(r->key.line, lbuf, sizeof(lbuf)), pal.bold,
			name, pal.reset);
		if (!r->seen_outlined)
			fprintf(out, " %s[inlined]%s", pal.inlined, pal.reset);
		fputc('\n', out);
	}
	free(order);
}

void flat_report(FILE *out, const struct profile *p, const struct analyze_options *o,
		 const struct flat_options *fo)
{
	struct palette pal;
	palette_init(&pal, o->color);
	report_header(out, p, &pal);
	struct calltree *t = calltree_new(p, o->combine, CALLTREE_ALL_THREADS);
	struct flat_table ft = {.t = t};
	build_rows(&ft, o->lines);
	if (t->total_weight == 0)
		fputs("No samples.\n", out);
	else
		print_rows(out, &ft, o, fo);
	report_footer(out, p, t->total_samples, t->total_weight, o);
	free(ft.rows);
	free(ft.frame_row);
	calltree_free(t);
}

static void print_flat_report(FILE *out, const struct profile *p, const struct analyze_options *o)
{
	flat_report(out, p, o, &flat_opts);
}

int cmd_flat(int argc, char **argv)
{
	memset(&flat_opts, 0, sizeof(flat_opts));
	return report_command(argc, argv, &flat_command, print_flat_report);
}
