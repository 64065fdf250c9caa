/*
 * diff_load.c - two runs, or two sets of runs, loaded, filtered and
 * compared (diff.h): what analyze diff and plot diff share, with one set
 * of messages. Each run's
 * load messages say which run they are about: "base trace a.zst: ...",
 * "new trace b.zst: ...".
 */
#include "diff.h"

#include <string.h>

#include "load.h"
#include "merge.h"

/* One run's load messages, prefixed with its role, to the caller's sink. */
struct run_sink {
	struct diag_sink sink;
	const struct diag_sink *to;
	const char *role;
};

static void run_message(void *ctx, enum diag_level level, const char *text)
{
	const struct run_sink *rs = ctx;
	diag(rs->to, level, "%s trace %s", rs->role, text);
}

static void run_progress(void *ctx, const char *text)
{
	const struct run_sink *rs = ctx;
	diag_progress(rs->to, "%s", text);
}

/* One side: its traces summed with their runs apart, then filtered. */
static struct profile *load_run(const char *const *paths, int n, const char *role, const struct load_options *lo,
				const struct filter_options *fo)
{
	struct run_sink rs = {{run_message, run_progress, NULL}, lo->diag, role};
	rs.sink.ctx = &rs;
	struct load_options run = *lo;
	run.diag = &rs.sink;
	struct profile *p = load_traces(paths, n, &run, PROFILE_MERGE_RUNS_APART);
	return p ? filter_profile_consume(p, fo) : NULL;
}

int diff_load_sets(struct diff *d, const char *const *base_paths, int nbase, const char *const *new_paths,
		   int nnew, const struct load_options *lo, const struct filter_options *fo,
		   const struct diff_options *o, char *err, size_t errlen)
{
	memset(d, 0, sizeof(*d));
	struct profile *base = load_run(base_paths, nbase, "base", lo, fo);
	struct profile *new = base ? load_run(new_paths, nnew, "new", lo, fo) : NULL;
	if (!new) {
		profile_free(base);
		return DIFF_UNREADABLE;
	}
	struct diff_options opts = *o;
	opts.threads_filtered |= fo->ntids > 0; /* an empty run may be --tid's doing */
	if (diff_build(d, base, base_paths[0], new, new_paths[0], &opts, err, errlen) < 0) {
		profile_free(base);
		profile_free(new);
		return DIFF_INCOMPARABLE;
	}
	/* Built, the diff reads its runs for their headers only: their rows
	 * summed per thread, not their stacks, stay (a third of a diff's
	 * memory at 200,000 stacks). */
	d->loaded[0] = profile_sum_threads(base);
	d->loaded[1] = profile_sum_threads(new);
	profile_free(base);
	profile_free(new);
	d->base.p = d->loaded[0];
	d->new.p = d->loaded[1];
	return 0;
}

int diff_load(struct diff *d, const char *base_path, const char *new_path, const struct load_options *lo,
	      const struct filter_options *fo, const struct diff_options *o, char *err, size_t errlen)
{
	return diff_load_sets(d, &base_path, 1, &new_path, 1, lo, fo, o, err, errlen);
}
