/*
 * debug_hint.c - the modules without debug info and what they cost the
 * profile (see debug_hint.h): a module with only a symbol table gives
 * function names but no file:line and no inlined frames, so a user should
 * know which modules those are, how much of the profile is behind them, and
 * how to get their debug info. A module mapped by many processes (libc in
 * each process of a make) is one file: it is named once, with their shares
 * summed (a stack is one process's, so it counts in one of them only).
 */
#include "debug_hint.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "terminal.h"

#define LISTED 5 /* modules named in a footer; the rest counted */

double *debug_hint_module_shares(const struct profile *p, uint32_t value)
{
	double *share = calloc_or_abort(p->nmodules ? p->nmodules : 1, sizeof(*share));
	double *stack_weight = calloc_or_abort(p->nstacks ? p->nstacks : 1, sizeof(*stack_weight));
	double total = 0;
	for (uint64_t i = 0; i < p->nsamples && value < p->nvalue_types; i++) {
		double v = (double)profile_sample_value(p, i, value);
		total += v;
		if (p->samples[i].stack < p->nstacks)
			stack_weight[p->samples[i].stack] += v;
	}
	/* Each stack counts once per module, however many of its frames are there. */
	uint32_t *seen = calloc_or_abort(p->nmodules ? p->nmodules : 1, sizeof(*seen));
	for (uint32_t s = 0; s < p->nstacks; s++) {
		const struct profile_stack *st = &p->stacks[s];
		for (uint32_t i = 0; i < st->depth && stack_weight[s] != 0; i++) {
			uint32_t m = p->locations[p->stack_locations[st->first + i]].module;
			if (m < p->nmodules && seen[m] != s + 1) {
				seen[m] = s + 1;
				share[m] += stack_weight[s];
			}
		}
	}
	/* A diff's values can be negative: a share then means nothing. */
	for (uint32_t m = 0; m < p->nmodules; m++)
		share[m] = total > 0 && share[m] > 0 ? share[m] / total : 0;
	free(seen);
	free(stack_weight);
	return share;
}

static int by_share(const void *a, const void *b, void *shares)
{
	const double *share = shares;
	double x = share[*(const uint32_t *)a], y = share[*(const uint32_t *)b];
	return (x < y) - (x > y);
}

void debug_hint_print(FILE *out, const struct profile *p, uint32_t value, int show_system,
		      const char *indent)
{
	double *share = debug_hint_module_shares(p, value);
	uint32_t *order = calloc_or_abort(p->nmodules ? p->nmodules : 1, sizeof(*order));
	uint32_t n = 0;
	for (uint32_t m = 0; m < p->nmodules; m++) {
		uint32_t flags = p->modules[m].flags;
		if (!(flags & PROFILE_MODULE_NO_DEBUG_INFO) || share[m] <= 0 ||
		    (!show_system && (flags & PROFILE_MODULE_SYSTEM)))
			continue;
		/* The same file in another process: its share goes to the first listed (paths are interned). */
		uint32_t k = 0;
		while (k < n && p->modules[order[k]].path != p->modules[m].path)
			k++;
		if (k < n)
			share[order[k]] += share[m];
		else
			order[n++] = m;
	}
	qsort_r(order, n, sizeof(*order), by_share, share);
	if (n > 0) {
		fprintf(out, "%sWithout debug info (names from the symbol table, no lines or inlined frames):",
			indent);
		for (uint32_t i = 0; i < n && i < LISTED; i++) {
			const char *path = profile_string(p, p->modules[order[i]].path);
			const char *slash = strrchr(path, '/');
			char safe[512];
			/* Stripped of its symbol table too: not even names. */
			int nameless = !(p->modules[order[i]].flags & PROFILE_MODULE_HAS_FUNCTIONS);
			fprintf(out, "%s %s%s %.1f%%", i ? "," : "",
				escape_text(slash ? slash + 1 : path, safe, sizeof(safe)),
				nameless ? " (no symbols: module+offset)" : "", 100.0 * share[order[i]]);
		}
		if (n > LISTED)
			fprintf(out, " and %u more", n - LISTED);
		fprintf(out, " of %s.\n%s  To get it: install the module's -dbg or -dbgsym package, "
			     "set DEBUGINFOD_URLS to a debuginfod server, or point --debug-dir at its "
			     "debug files.\n",
			profile_string(p, p->value_types[value].type), indent);
	}
	free(order);
	free(share);
}
