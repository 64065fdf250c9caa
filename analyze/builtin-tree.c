/*
 * builtin-tree.c - "analyze tree": the call tree as Julia's
 * Profile.print(format=:tree) shows it.
 *
 * One line per node: self count ("overhead"), a "╎" rail, indentation by
 * depth (a "╎" guide every 5 levels), the inclusive count, "file:line;
 * function". Children are sorted by count, largest first. Options as Julia's:
 *   --noisefloor X  a child is hidden with its subtree when its count is
 *                   below floor(X * sqrt(parent count)); top level never;
 *   --mincount N    nodes with a count below N are hidden with their subtree;
 *   --maxdepth N    at most N levels are printed (the top level is level 1);
 *   --no-combine    one node per instruction address, the address shown.
 * When the indentation would take more than half the width, it is cut and
 * the cut levels shown as "+n", as Julia does.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "calltree.h"
#include "options.h"
#include "report.h"
#include "reports.h"
#include "terminal.h"

enum { OPT_NOISEFLOOR = OPTION_COMMAND_FIRST, OPT_MAXDEPTH, OPT_THREADS };

static const struct option tree_long_options[] = {
	{"noisefloor", required_argument, NULL, OPT_NOISEFLOOR},
	{"maxdepth", required_argument, NULL, OPT_MAXDEPTH},
	{"threads", no_argument, NULL, OPT_THREADS},
	{NULL, 0, NULL, 0},
};

static int tree_handle(int opt, const char *arg, void *ctx);

static struct tree_options tree_opts;

static const struct analyze_command tree_command = {
	.name = "tree",
	.synopsis = "analyze tree [options] TRACE",
	.summary = "Print the call tree with counts per node, as Julia's Profile.print does.\n"
		   "Counts are sample weights (timer periods); the left column is self count.",
	.help = "      --noisefloor X      hide a child (and its subtree) whose count is below\n"
		"                          floor(X * sqrt(parent count)); try 2\n"
		"      --maxdepth N        print at most N levels\n"
		"      --threads           one tree per thread\n",
	.groups = OPTGROUP_LOAD | OPTGROUP_FILTER | OPTGROUP_MINCOUNT | OPTGROUP_COMBINE |
		  OPTGROUP_DISPLAY,
	.options = tree_long_options,
	.handle = tree_handle,
	.ctx = &tree_opts,
};

static int tree_handle(int opt, const char *arg, void *ctx)
{
	struct tree_options *to = ctx;
	switch (opt) {
	case OPT_NOISEFLOOR:
		if (parse_double(arg, &to->noisefloor) || to->noisefloor < 0) {
			usage_error(&tree_command, "--noisefloor wants a number >= 0, not '%s'", arg);
			return -1;
		}
		return 0;
	case OPT_MAXDEPTH:
		if (parse_u64(arg, &to->maxdepth) || to->maxdepth == 0) {
			usage_error(&tree_command, "--maxdepth wants a depth >= 1, not '%s'", arg);
			return -1;
		}
		return 0;
	case OPT_THREADS:
		to->threads = 1;
		return 0;
	}
	usage_error(&tree_command, "unknown option");
	return -1;
}

struct tree_printer {
	const struct calltree *t;
	const struct analyze_options *o;
	const struct tree_options *to;
	struct palette pal;
	FILE *out;
	int wself, wcount;
};

/* Julia's indent(): a "╎" every fifth column, spaces elsewhere. */
static void put_indent(FILE *out, int columns)
{
	for (int i = 0; i < columns; i++)
		fputs(i % 5 == 4 ? "╎" : " ", out);
}

static void print_node(struct tree_printer *tp, uint32_t id, int maxline_digits)
{
	const struct calltree *t = tp->t;
	const struct profile *p = t->profile;
	const struct calltree_node *n = &t->nodes[id];
	const struct calltree_frame *f = &t->frames[n->frame];
	const struct palette *pal = &tp->pal;
	FILE *out = tp->out;
	int cols = tp->o->width;
	int level = (int)n->depth - 1;
	int nindent = cols && cols / 2 < level ? cols / 2 : level;
	int nextra = 0;
	if (level > nindent) {
		nextra = level - nindent;
		nindent -= decimal_digits((uint64_t)nextra) + 2;
	}

	if (n->self)
		fprintf(out, "%s%*llu%s", pal->self, tp->wself, (unsigned long long)n->self, pal->reset);
	else
		fprintf(out, "%*s", tp->wself, "");
	fputs("╎", out);
	if (nindent > 0) {
		put_indent(out, nindent - 1);
		fputc(' ', out);
	}
	if (nextra)
		fprintf(out, "%s+%d%s ", pal->extra, nextra, pal->reset);
	fprintf(out, "%s%-*llu%s ", pal->count, tp->wcount, (unsigned long long)n->count, pal->reset);

	int wfile = 0, wfunc = 0;
	if (cols) {
		int ntext = cols - tp->wself - (nindent > 0 ? nindent : 0) - tp->wcount -
			    (maxline_digits + 6);
		if (ntext < 30)
			ntext = 30;
		wfile = tp->o->full_paths ? 0 : 2 * ntext / 5;
		wfunc = 3 * ntext / 5;
	}
	char fbuf[4096], nbuf[4096], lbuf[16], abuf[4096];
	const char *file = fit_text(report_file(p, f->file, tp->o->full_paths), wfile, 1, fbuf,
				    sizeof(fbuf));
	const char *name = profile_string(p, p->functions[f->function].name);
	if (!t->combine) {
		snprintf(abuf, sizeof(abuf), "0x%016llx %s", (unsigned long long)f->address, name);
		name = abuf;
	}
	name = fit_text(name, wfunc, 0, nbuf, sizeof(nbuf));
	fprintf(out, "%s%s:%s;%s %s%s%s", pal->dim, file, report_line(f->line, lbuf, sizeof(lbuf)),
		pal->reset, pal->bold, name, pal->reset);
	if (f->inlined)
		fprintf(out, " %s[inlined]%s", pal->inlined, pal->reset);
	fputc('\n', out);
}

/* Largest line number among the shown children, for Julia's column budget. */
static int children_line_digits(const struct calltree *t, const uint32_t *children, uint32_t n)
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
	uint64_t maxself = 0, maxcount = 0;
	for (uint32_t i = 1; i < t->nnodes; i++) {
		if (t->nodes[i].self > maxself)
			maxself = t->nodes[i].self;
		if (t->nodes[i].count > maxcount)
			maxcount = t->nodes[i].count;
	}
	tp->wself = decimal_digits(maxself);
	tp->wcount = decimal_digits(maxcount);
	fprintf(tp->out, "Overhead ╎ [+additional indent] Count File:Line; Function\n");
	fprintf(tp->out, "=========================================================\n");

	struct work *stack = malloc(sizeof(*stack) * (t->nnodes + 1));
	if (!stack)
		abort();
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
			floor_count = (uint64_t)floor(tp->to->noisefloor * sqrt((double)n->count));
		uint32_t *children;
		uint32_t nc = calltree_sorted_children(t, w.node, &children);
		uint32_t kept = 0;
		for (uint32_t i = 0; i < nc; i++) {
			uint64_t c = t->nodes[children[i]].count;
			if (c >= tp->o->mincount && c >= floor_count)
				children[kept++] = children[i];
		}
		int digits = children_line_digits(t, children, kept);
		for (uint32_t i = kept; i-- > 0;)
			stack[top++] = (struct work){children[i], digits};
		free(children);
	}
	free(stack);
}

static void print_one(FILE *out, const struct profile *p, const struct analyze_options *o,
		      const struct tree_options *to, uint32_t thread)
{
	struct calltree *t = calltree_new(p, o->combine, thread);
	calltree_build_nodes(t);
	struct tree_printer tp = {.t = t, .o = o, .to = to, .out = out};
	palette_init(&tp.pal, o->color);
	if (thread != CALLTREE_ALL_THREADS) {
		char name[300], cpu[32];
		fprintf(out, "%sThread %s%s: %llu samples, %s of CPU\n", tp.pal.bold,
			profile_thread_title(p, thread, name, sizeof(name)), tp.pal.reset,
			(unsigned long long)t->total_samples,
			format_duration(profile_weight_ns(p, t->total_weight), cpu, sizeof(cpu)));
	}
	if (t->total_weight == 0)
		fputs("No samples.\n", out);
	else
		print_tree(&tp);
	if (thread == CALLTREE_ALL_THREADS)
		report_footer(out, p, t->total_samples, t->total_weight, o);
	else
		fputc('\n', out);
	calltree_free(t);
}

void tree_report(FILE *out, const struct profile *p, const struct analyze_options *o,
		 const struct tree_options *to)
{
	struct palette pal;
	palette_init(&pal, o->color);
	report_header(out, p, &pal);
	if (to->threads) {
		for (uint32_t i = 0; i < p->nthreads; i++)
			if (p->threads[i].samples)
				print_one(out, p, o, to, i);
		report_footer(out, p, p->nsamples, p->total_weight, o);
	} else {
		print_one(out, p, o, to, CALLTREE_ALL_THREADS);
	}
}

static void print_tree_report(FILE *out, const struct profile *p, const struct analyze_options *o)
{
	tree_report(out, p, o, &tree_opts);
}

int cmd_tree(int argc, char **argv)
{
	memset(&tree_opts, 0, sizeof(tree_opts));
	return report_command(argc, argv, &tree_command, print_tree_report);
}
