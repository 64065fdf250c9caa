/*
 * report.h - the text reports as functions of a profile, and what they
 * share. The commands (builtin-tree.c, builtin-flat.c) parse, load and call
 * these; the unit tests call them on hand-built profiles, so both print
 * through the same code.
 *
 *   report.c       one run of a report command, the header and footer, a
 *                  frame's file and line as shown
 *   render_tree.c  tree_report: the call tree as Julia's Profile.print
 *   render_flat.c  flat_report: one row per function, line or address,
 *                  as text or as TSV for scripts
 *   render_diff.c  diff_report: tree or flat rows of a diff (diff.h) with
 *                  both runs' values, the change and its significance
 *   render_source.c source_report: per-line costs beside the code (source.h)
 *   render_asm.c   asm_report: per-instruction costs of the functions
 *                  source --asm names (disasm.h)
 *
 * Every report is told which value type it shows (struct report's value);
 * headers and footers format totals by unit (durations, bytes, counts).
 */
#ifndef IPSCOPE_REPORT_H
#define IPSCOPE_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "calltree.h"
#include "diff.h"
#include "hashmap.h"
#include "options.h"
#include "profile.h"
#include "terminal.h"

/* What every renderer is given: where to write, what, and how. */
struct report {
	FILE *out;
	const struct profile *p;          /* loaded and filtered */
	const struct analyze_options *o;  /* the shared options (width, colors, -C...) */
	uint32_t value;                   /* the value type shown */
	struct palette pal;
};

/* How an allocation profile's values were recorded: "recorded fraction 0.1, ...", "byte-sampled, mean N, ...". */
const char *report_alloc_sampling(const struct profile *p, char *buf, size_t len);

/* A report of p's value type value on out with options o. */
void report_init(struct report *r, FILE *out, const struct profile *p, const struct analyze_options *o,
		 uint32_t value);

/* tree's default node fraction, as pprof's: nodes below 0.5% of the total are hidden. */
#define TREE_DEFAULT_NODEFRACTION 0.005

struct tree_options {
	double noisefloor;   /* 0: off */
	double nodefraction; /* hide a node below this fraction of its tree's total; 0: off */
	uint64_t maxdepth;   /* 0: unlimited */
	int threads;         /* one tree per thread */
};

/* Header, tree(s) and footer as analyze tree prints them. */
void tree_report(const struct report *r, const struct tree_options *to);

/*
 * The end of a tree line after lead columns of figures: the rail, the
 * indentation of node's depth (a guide every 5 levels, cut at half the
 * width as "+N"), count (if not NULL) padded to wcount, and "file:line;
 * function" fitted to the width, " [inlined]", newline. maxline_digits is
 * tree_children_line_digits of the node and its siblings.
 */
void tree_print_line_end(const struct report *r, const struct calltree *t, uint32_t node, int lead,
			 const char *count, int wcount, int maxline_digits);
/* Digits of the largest line number among nodes[0..n) of t. */
int tree_children_line_digits(const struct calltree *t, const uint32_t *nodes, uint32_t n);

enum flat_sort { FLAT_SORT_FILEFUNCLINE, FLAT_SORT_COUNT, FLAT_SORT_SELF };
enum flat_format { FLAT_FORMAT_TEXT, FLAT_FORMAT_TSV };

struct flat_options {
	enum flat_sort sort;
	uint64_t limit; /* 0: every row */
	enum flat_format format;
};

/* Header, rows and footer as analyze flat prints them (or the TSV table). */
void flat_report(const struct report *r, const struct flat_options *fo);

/*
 * flat's rows, for the reports that show them with columns of their own
 * (diff): one per function (per line with by_line, per address without
 * combine), counting each stack once per row (recursion) and as self in its
 * innermost row. Rows are made for every frame of the call tree whatever the
 * values, so two tables of one tree have the same rows in the same order.
 */
struct flat_row {
	struct calltree_frame key; /* function rows: the function's own file and start line */
	int64_t count, self;
	uint32_t stamp;    /* last stack counted + 1, so recursion counts once */
	int seen_outlined; /* some occurrence was not inlined */
};

struct flat_table {
	const struct calltree *t;
	struct flat_row *rows;
	uint32_t nrows, cap;
	struct hashmap index;
	const struct calltree_frame *seek;
	uint32_t *frame_row; /* calltree frame -> row */
};

/* The rows of t counting per-stack stack_values (NULL: t's own values). A
 * stack ending in allocation leaves (PROFILE_FUNCTION_ALLOC_LEAF) is self
 * of its innermost frame above them, the allocating one. */
void flat_table_build(struct flat_table *ft, const struct calltree *t, int by_line, const int64_t *stack_values);
/*
 * The same rows and figures from t's nodes (holding every stack with a
 * value) and node_inclusive, calltree_node_sums of stack_values: O(nodes),
 * where flat_table_build walks every frame of every stack; a viewer's.
 * topmost: flat_table_topmost of a table of t with the same by_line (the
 * same for every value, so a viewer makes it once), or NULL to make it.
 */
void flat_table_build_nodes(struct flat_table *ft, const struct calltree *t, int by_line, const int64_t *stack_values,
			    const int64_t *node_inclusive, const uint8_t *topmost);
/* Per node of ft's tree: 1 when no ancestor has the same row (the one of
 * its row that counts a stack through it); caller frees. */
uint8_t *flat_table_topmost(const struct flat_table *ft);
void flat_table_free(struct flat_table *ft);
/* flat's listing order (file, function, line, address; unknown files last). */
int flat_row_compare(const struct profile *p, const struct flat_row *x, const struct flat_row *y);

/* What diff_report shows of a diff (diff.h). */
struct diff_view {
	int flat;          /* one row per function (or line) instead of the tree */
	int tsv;           /* flat rows as TSV for scripts (implies flat) */
	double noisefloor; /* tree: as tree's, applied to each run */
	uint64_t maxdepth; /* tree: at most N levels */
	uint64_t limit;    /* flat: the first N rows only */
	int significant_only; /* hide the rows within sampling noise */
};

/*
 * A diff's flat rows (diff_report --flat, the diff plot): per row of ft,
 * both runs' figures and the test; order holds the n rows the filters show
 * (all tested together), largest change first.
 */
struct diff_table {
	struct calltree *t;
	struct flat_table ft; /* the rows' keys */
	struct diff_row *rows;
	uint32_t *order;
	uint32_t n;
	size_t significant;
};
void diff_table_build(struct diff_table *dt, const struct diff *d, const struct analyze_options *o);
void diff_table_free(struct diff_table *dt);

/* Header (both runs, the value compared, the scaling, the noise test),
 * the tree or flat rows of d with base, new, delta, delta% and mark,
 * footer. r->p is d->p. */
void diff_report(const struct report *r, const struct diff *d, const struct diff_view *v);

/* "Traces: 3 summed: 5 processes, 2 programs, 3.2 s run in all" (a profile of several traces). */
void report_traces_line(const struct report *r, const char *indent);

/* Load traces[0..n) with lo, summed into one when n > 1 (load_traces; messages through lo->diag), and keep
 * what fo selects; NULL after an error was said. */
struct profile *report_profile(const char *const *traces, int n, const struct load_options *lo,
			       const struct filter_options *fo);

/* Prints a report of p with the command's options o and the value shown. */
typedef void (*report_print_fn)(const struct report *r, void *ctx);

/* Whole run of a report command: parse argv for cmd (its own rows into
 * ctx), load, filter, resolve --value, print(r, ctx) to stdout, check the
 * output; the exit status. */
int report_command(int argc, char **argv, const struct analyze_command *cmd, report_print_fn print,
		   void *ctx);

/* Command, samples and totals, threads and lost samples, then a blank line;
 * all is a call tree of every sample (its totals are the profile's). */
void report_header(const struct report *r, const struct calltree *all);

/* "Samples: N, totals (interval I), threads: T, lost samples: L" of p, after
 * indent (the header's line; diff prints one per run). */
void report_samples_line(const struct report *r, const char *indent, const struct profile *p,
			 const int64_t *totals, int saturated);

/* "Total samples: N (totals) in T threads." for the selected samples of t. */
void report_footer(const struct report *r, const struct calltree *t);

/* "weight W = 3.7 s of CPU" (a CPU profile) or "TYPE total, ..." for totals
 * (one per value type of p) into buf; saturated adds a note. Returns buf. */
const char *report_totals(const struct profile *p, const int64_t *totals, int saturated, char *buf,
			  size_t len);

/* A frame's source file as shown ("?" when unknown) and line ("?" when 0). */
const char *report_file(const struct profile *p, uint32_t file, int full_paths);
const char *report_line(uint32_t line, char *buf, size_t len);

/*
 * A row's figure of r's value type as tree and flat print it: raw for CPU
 * samples (Julia's counts); bytes as B/KiB/MiB, and an allocation profile's
 * counts from 10000 on as "12.3 K", "4.5 M" (as the headers say them).
 */
const char *report_row_value(const struct report *r, int64_t v, char *buf, size_t len);
/* 1 when report_row_value gives r's figures units (bytes, an allocation profile's counts), 0 when raw integers. */
int report_row_units(const struct report *r);

/* Percentage of |part| in whole, 0 when whole is 0. */
double report_percent(int64_t part, uint64_t whole);

/* Digits (and sign) v takes in decimal. */
int report_digits(int64_t v);

/* A TSV field: backslash, tab, newline and CR written as \\, \t, \n, \r, other control bytes \xHH. */
void report_tsv_field(FILE *out, const char *s);

enum source_format { SOURCE_FORMAT_TEXT, SOURCE_FORMAT_TSV };

struct source_options {
	const char *trace; /* the TRACE operand, as messages name it */
	const char *file;  /* the FILE operand: that file whole; NULL: the costliest files */
	uint32_t files;    /* without file: how many files */
	uint32_t top;      /* without file: the top lines of each */
	uint32_t context;  /* lines of code shown around each top line */
	enum source_format format;
	const char *asm_function; /* --asm FUNCTION: instructions instead of lines (asm_report) */
};

/* The value types a per-line or per-instruction listing shows into types (room for
 * PROFILE_MAX_VALUE_TYPES): the shown one first, and with TSV every other after; how many. */
uint32_t report_source_types(const struct report *r, const struct source_options *so, uint32_t *types);

/*
 * analyze source (render_source.c): header, then the file named by
 * so->file (matched by suffix, source.h) with a cost column per line, or
 * the costliest files and their top lines with context; TSV: a header line,
 * then file, line and every value type per charged line. -1 without
 * printing when so->file names no file of the trace or several (err says
 * which), else 0.
 */
int source_report(const struct report *r, const struct source_options *so, char *err, size_t errlen);

/*
 * analyze source --asm (render_asm.c): header, then per function matching
 * so->asm_function (disasm.h), costliest first, its instructions with
 * their self cost, the so->top hottest marked; TSV: a header line, then
 * function, address, every value type, line and instruction. -1 without
 * printing when nothing matches (err says so), else 0.
 */
int asm_report(const struct report *r, const struct source_options *so, char *err, size_t errlen);

#endif
