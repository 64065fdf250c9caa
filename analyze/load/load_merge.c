/*
 * load_merge.c - several traces as one profile (load_traces): each trace is
 * read alone and summed into the merged profile (formats/profile/merge.h),
 * then freed, so that memory holds the merged rows and one trace's rows at
 * a time, not every trace's.
 */
#include "load.h"

#include "alloc.h"
#include "merge.h"

struct profile *load_traces(const char *const *paths, int n, const struct load_options *o, unsigned merge_flags)
{
	if (n == 1)
		return load_trace(paths[0], o, NULL);
	struct profile *dst = profile_new();
	if (!dst)
		abort_out_of_memory();
	/* Rows in time are appended, never summed across traces. */
	if (o->sample_times || o->alloc_bins)
		merge_flags |= PROFILE_MERGE_EVERY_ROW;
	struct profile_merge *m = profile_merge_new(dst, merge_flags);
	for (int i = 0; i < n; i++) {
		struct profile *p = load_trace(paths[i], o, NULL);
		char err[512];
		if (p && profile_merge_add(m, p, err, sizeof(err)) < 0) {
			diag(o->diag, DIAG_ERROR, "%s: cannot be summed with %s: %s", paths[i], paths[0], err);
			profile_free(p);
			p = NULL;
		}
		if (!p) {
			profile_merge_free(m);
			profile_free(dst);
			return NULL;
		}
		profile_free(p);
	}
	profile_merge_free(m);
	return dst;
}
