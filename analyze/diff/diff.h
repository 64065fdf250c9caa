/*
 * diff.h - two runs compared: a diff profile whose values are new minus
 * base, frames matched by meaning, and the test that tells a row's change
 * from sampling noise. builtin-diff.c and the diff plot are views of it,
 * both loading and comparing two traces with diff_load (diff_load.c);
 * render_diff.c prints its tree and flat reports.
 *
 * The diff profile holds the threads of both runs, the base run's flagged
 * PROFILE_THREAD_DIFF_BASE, and one sample per (stack, thread) with two
 * signed values: DIFF_VALUE, the compared type (base samples negated, new
 * ones scaled by `scale`), and DIFF_COUNT, the sample counts behind them
 * (raw, base negated). Summed over a stack or a row, DIFF_VALUE is the
 * change, so the tree and flat reports and every exporter show a diff as
 * they show any profile; split by run (diff.base_threads / new_threads) it
 * gives each run's value, which the diff report prints beside the change.
 * This is pprof's own -diff_base layout (base samples labelled pprof::base,
 * values negated), which export_pprof writes as it is.
 *
 * Frames are matched through remap.h's by-name mode: modules by file name,
 * functions by module and name (and file with lines), never by address; a
 * function renamed or moved to another module is one removed and one added.
 */
#ifndef IPSCOPE_DIFF_H
#define IPSCOPE_DIFF_H

#include <stddef.h>
#include <stdint.h>

#include "diagnostics.h"
#include "filter.h"
#include "load.h"
#include "profile.h"

/* The diff profile's value types. */
#define DIFF_VALUE 0
#define DIFF_COUNT 1

#define DIFF_DEFAULT_CONFIDENCE 0.99

struct diff_options {
	const char *value_name; /* --value; NULL: base's default type if new has it */
	int lines;              /* match file:line too (PROFILE_REMAP_LINES) */
	int normalize;          /* scale new values by base total / new total */
	double confidence;      /* of the noise test, in (0, 1) */
	const struct diag_sink *diag; /* warnings (different programs...); may be NULL */
	int threads_filtered;   /* --tid was given: an empty run may be its doing (diff_load sets it) */
};

/* One side of the comparison. */
struct diff_run {
	const struct profile *p; /* loaded and filtered; outlives the diff (diff_load
				    keeps its rows summed per thread once the diff is built) */
	const char *path;        /* for messages */
	uint32_t value;          /* the compared type in p */
	uint32_t count;          /* the count type behind it, or PROFILE_NO_VALUE:
				    each sample row counts one */
	int signals;             /* a row of nonzero count is one observation
				    (profile.rows_are_signals): see diff.c */
	int64_t total;           /* of value over every sample */
	int64_t count_total;
	uint32_t nruns;          /* traces in the run's set (analyze diff --base A1 --base A2 B1 B2) */
};

struct diff {
	struct profile *p;        /* the diff profile (see above) */
	struct diff_run base, new;
	double scale;             /* new values x scale; 1 without normalisation */
	int normalized;
	int exact;                /* both runs exact: no sampling noise */
	double confidence;
	uint8_t *base_threads;    /* per thread of p: 1 for the base run's */
	uint8_t *new_threads;
	char common[256];         /* the value types both runs have, ", "-separated */
	uint32_t ncommon;
	struct profile *loaded[2]; /* base and new when diff_load loaded them (diff_free frees them) */
	/*
	 * Sets of runs on both sides (two or more each): the noise test takes
	 * the runs as replicates (diff_row_test_runs). Runs are numbered base's
	 * first, then new's; run_threads[k] marks the threads of p run k had,
	 * run_totals[k] is its total of the compared value (positive; new's
	 * scaled as its values are).
	 */
	int replicates;
	uint32_t nruns;
	uint8_t **run_threads;
	int64_t *run_totals;
};

/*
 * Compare new against base (both outlive d) into d: 0, or -1 with a
 * one-line reason in err (no value type in common, --value not in both).
 */
int diff_build(struct diff *d, const struct profile *base, const char *base_path,
	       const struct profile *new, const char *new_path, const struct diff_options *o,
	       char *err, size_t errlen);
void diff_free(struct diff *d);

/* diff_load's failures. */
enum { DIFF_UNREADABLE = -1, DIFF_INCOMPARABLE = -2 };

/*
 * Load base_path and new_path with lo, keep what fo selects of each and
 * compare them (diff_build) into d, which owns the runs: 0;
 * DIFF_UNREADABLE when a trace could not be read (said through lo->diag,
 * each message prefixed "base trace " or "new trace "); DIFF_INCOMPARABLE
 * with a one-line reason in err. d is for diff_free whatever the outcome.
 */
int diff_load(struct diff *d, const char *base_path, const char *new_path, const struct load_options *lo,
	      const struct filter_options *fo, const struct diff_options *o, char *err, size_t errlen);
/*
 * The same with a set of traces on each side (paths[0..n)), each set summed
 * with its runs kept apart (profile_thread.run): with two or more runs on
 * both sides the noise test takes them as replicates. Messages name the
 * first trace of a set.
 */
int diff_load_sets(struct diff *d, const char *const *base_paths, int nbase, const char *const *new_paths,
		   int nnew, const struct load_options *lo, const struct filter_options *fo,
		   const struct diff_options *o, char *err, size_t errlen);

/* A row's figures: each run's value (new's scaled) and counts, the test. */
struct diff_row {
	int64_t base, new;
	int64_t base_count, new_count;
	double p;          /* two-sided p-value of "only sampling noise" */
	double p_adjusted; /* Holm-Bonferroni over the rows tested together */
	int significant;
};

/* new - base, and the change as a percentage of base's total. */
static inline int64_t diff_row_delta(const struct diff_row *r)
{
	return r->new - r->base;
}
double diff_row_percent(const struct diff *d, const struct diff_row *r);

/* The row's p-value (r->p) from its values and counts (see diff.c). */
void diff_row_test(const struct diff *d, struct diff_row *r);
/* With replicates: r->p from the row's value in each run (d->nruns values of DIFF_VALUE as
 * stored: base's negated), Welch's t-test over the runs (see diff.c). */
void diff_row_test_runs(const struct diff *d, struct diff_row *r, const int64_t *per_run);
/* Holm-Bonferroni over the n rows rows[ids[0..n)] tested together: p_adjusted and significant of each
 * (exact runs: significant when the value changed); ids is reordered (by p). */
void diff_adjust(const struct diff *d, struct diff_row *rows, uint32_t *ids, size_t n);
/*
 * Half-width of the row's change's confidence interval at d's confidence,
 * simultaneous over m rows (Bonferroni), in percentage points of base's
 * total; 0 for exact runs and with replicates (a row keeps no per-run figures).
 */
double diff_row_margin(const struct diff *d, const struct diff_row *r, size_t m);

/* The test as the header says it: "two-proportion z-test on ...". */
const char *diff_test_name(const struct diff *d);
/* Name of the count type behind base's values ("samples", "sample rows"). */
const char *diff_count_name(const struct diff *d);

/* Two-sided p-value of a standard normal z, and its inverse (p in (0, 1]). */
double diff_normal_p(double z);
double diff_normal_z(double p);
/* Two-sided p-value of Student's t with df > 0 degrees of freedom (the replicates' test). */
double diff_student_p(double t, double df);

#endif
