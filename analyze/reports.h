/*
 * reports.h - the text reports as functions of a profile, so that the
 * commands (builtin-tree.c, builtin-flat.c, which define these) and the unit
 * tests (on hand-built profiles) print through the same code.
 */
#ifndef IPSCOPE_REPORTS_H
#define IPSCOPE_REPORTS_H

#include <stdint.h>
#include <stdio.h>

#include "options.h"
#include "profile.h"

struct tree_options {
	double noisefloor; /* 0: off */
	uint64_t maxdepth; /* 0: unlimited */
	int threads;       /* one tree per thread */
};

/* Header, tree(s) and footer of p (already filtered) as analyze tree prints them. */
void tree_report(FILE *out, const struct profile *p, const struct analyze_options *o,
		 const struct tree_options *to);

enum flat_sort { FLAT_SORT_FILEFUNCLINE, FLAT_SORT_COUNT, FLAT_SORT_SELF };

struct flat_options {
	enum flat_sort sort;
	uint64_t limit; /* 0: every row */
};

/* Header, rows and footer of p (already filtered) as analyze flat prints them. */
void flat_report(FILE *out, const struct profile *p, const struct analyze_options *o,
		 const struct flat_options *fo);

#endif
