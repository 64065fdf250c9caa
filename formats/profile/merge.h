/*
 * merge.h - several profiles summed into one, as pprof merges profiles:
 * the processes of a test suite, a service's hourly traces. Frames match as
 * remap.h's PROFILE_REMAP_MERGE has it (the same instruction of the same
 * build in two runs is one location), threads by process and thread id,
 * and rows by (stack, thread, label) and, where rows are signals, by the
 * weight of one signal: the merged profile holds one row per distinct key,
 * what the reports show, not the sum of its parts' rows.
 */
#ifndef IPSCOPE_MERGE_H
#define IPSCOPE_MERGE_H

#include <stddef.h>

#include "profile.h"

/* Append every row in order, summing none (the time-ordered outputs). */
#define PROFILE_MERGE_EVERY_ROW 0x1u
/* Keep each source's threads its own, profile_thread.run saying which source (diff's replicates). */
#define PROFILE_MERGE_RUNS_APART 0x2u

struct profile_merge;

/* A merge into dst, an empty profile (profile_new); dst outlives it. */
struct profile_merge *profile_merge_new(struct profile *dst, unsigned flags);
/* Sum src into dst: 0, or -1 with a one-line reason in err when src's values mean other things than dst's
 * (another mode, value types, interval or allocation sampling); dst is then unchanged. */
int profile_merge_add(struct profile_merge *m, const struct profile *src, char *err, size_t errlen);
void profile_merge_free(struct profile_merge *m);

/*
 * A new profile with p's value types, run description and threads, and one
 * row per thread with an empty stack summing that thread's rows (values and
 * sample counts): what p's totals and header need, without its stacks and
 * rows (a diff keeps its runs so once it is built).
 */
struct profile *profile_sum_threads(const struct profile *p);

#endif
