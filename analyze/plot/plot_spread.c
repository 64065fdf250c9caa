/*
 * plot_spread.c - the samples' values over time bins (plot_internal.h), each
 * sample laid over the time its weight stands for rather than dropped at the
 * instant it was taken.
 *
 * A sample's weight is time that ended when it was taken, and often much
 * more than one interval of it: in wall mode a thread blocked for a while is
 * looked at every 8 ticks, and a runnable one is signalled once, its handler
 * taking every tick since when it finally gets a CPU; in cpu mode a system
 * call's CPU time arrives at its return. Binned at its time, such a sample
 * put all of that into one bin: a 2-thread xz run drew a 9.6-core spike, a
 * 4-thread wall run 7 cores. Capping each bin would lose time (and a
 * thread's column must still add up to its total), so each thread's samples
 * are laid back from their times instead, latest first, each over the span
 * just before it and never over the span of a later sample of its thread.
 * A thread then fills at most the width of any bin, and no bin holds more
 * than the threads alive in it. A thread whose weights add up to a little
 * more than it lived (the first period of each thread counts whole) would
 * be pushed before the run's start: that time goes to the first bins where
 * the thread has room. Samples without a time, without a period value
 * (allocation rows) or without a thread are binned at their time as before.
 * Values are of type v as reports show them (a count of periods as the
 * time it stands for), split in integers, the last piece taking the
 * rounding, so every total is kept exactly and a time's pieces are exact.
 *
 * Rows the loader summed per time bin (profile.sample_bin_ns: a long run's
 * samples past its bound on rows) hold every sample of their key in that
 * bin, taken anywhere in it. Bins narrower than the plot's are laid back
 * as above from their bin's end; wider ones, where laying a thread's rows
 * one after another would draw phases that are only the rows' order, have
 * each row spread evenly over its bin.
 */
#include "plot_internal.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"

/* Bin b's start in ns (b == nbins: the run's end), exact integers so pieces add up. */
static uint64_t edge(const struct plot_span *sp, uint32_t b)
{
	return sp->t0 + (uint64_t)((unsigned __int128)(sp->t1 - sp->t0) * b / sp->nbins);
}

/* The bin holding the nanosecond just before time e (t0 < e <= t1). */
static uint32_t bin_before(const struct plot_span *sp, uint64_t e)
{
	uint64_t b = (uint64_t)((unsigned __int128)(e - 1 - sp->t0) * sp->nbins / (sp->t1 - sp->t0));
	uint32_t bin = b >= sp->nbins ? sp->nbins - 1 : (uint32_t)b;
	while (bin > 0 && edge(sp, bin) >= e)
		bin--;
	while (bin + 1 < sp->nbins && edge(sp, bin + 1) < e)
		bin++;
	return bin;
}

/* By thread, then latest first. */
static int later_first(const void *a, const void *b, void *ctx)
{
	const struct profile *p = ctx;
	const struct profile_sample *x = &p->samples[*(const uint64_t *)a], *y = &p->samples[*(const uint64_t *)b];
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->time_ns != y->time_ns)
		return x->time_ns > y->time_ns ? -1 : 1;
	return *(const uint64_t *)a < *(const uint64_t *)b ? -1 : 1;
}

/* One sample's pieces: value x for ns of time; the part of x for piece ns of them, the last taking the rest. */
struct pieces {
	int64_t x, given;
	uint64_t ns, placed;
};

static int64_t piece_of(struct pieces *pc, uint64_t piece)
{
	pc->placed += piece;
	int64_t share = pc->placed >= pc->ns ? pc->x - pc->given
					     : (int64_t)((__int128)pc->x * (__int128)pc->placed / (__int128)pc->ns) - pc->given;
	pc->given += share;
	return share;
}

/* Value x of row i evenly over [a, b), the part outside the run in the bin at its edge. */
static void spread_evenly(const struct plot_span *sp, uint64_t i, int64_t x, uint64_t a, uint64_t b,
			  plot_spread_fn add, void *ctx)
{
	a = a < sp->t0 ? sp->t0 : a;
	b = b > sp->t1 ? sp->t1 : b;
	if (b <= a) {
		add(i, plot_bin_of(sp, a), x, ctx);
		return;
	}
	struct pieces pc = {.x = x, .ns = b - a};
	for (uint32_t bin = bin_before(sp, a + 1); a < b; bin++) {
		uint64_t end = bin + 1 < sp->nbins ? edge(sp, bin + 1) : sp->t1;
		end = end > b ? b : end;
		add(i, bin, piece_of(&pc, end - a), ctx);
		a = end;
	}
}

void plot_spread(const struct profile *p, uint32_t v, const struct plot_span *sp, plot_spread_fn add, void *ctx)
{
	uint64_t *order = calloc_or_abort(p->nsamples ? p->nsamples : 1, sizeof(*order));
	for (uint64_t i = 0; i < p->nsamples; i++)
		order[i] = i;
	qsort_r(order, p->nsamples, sizeof(*order), later_first, (void *)p);
	/* The thread's time in each bin so far, for what is pushed before the start; reset per thread. */
	uint64_t *used = calloc_or_abort(sp->nbins, sizeof(*used));
	uint32_t thread = UINT32_MAX;
	uint64_t cursor = sp->t1; /* the thread's time is laid before this */
	for (uint64_t k = 0; k < p->nsamples; k++) {
		uint64_t i = order[k];
		const struct profile_sample *s = &p->samples[i];
		int64_t x = profile_sample_value(p, i, v);
		int64_t span = p->period_type != PROFILE_NO_VALUE ? profile_sample_value(p, i, p->period_type) : 0;
		if (s->thread != thread) {
			memset(used, 0, sp->nbins * sizeof(*used));
			thread = s->thread;
			cursor = sp->t1;
		}
		if (!s->time_ns || span <= 0 || s->thread >= p->nthreads) {
			add(i, plot_bin_of(sp, s->time_ns), x, ctx);
			continue;
		}
		uint64_t t = s->time_ns; /* a binned row's: its bin's end */
		if (p->sample_bin_ns) {
			uint64_t half = p->sample_bin_ns / 2, a = t > half ? t - half : 0;
			uint64_t b = a + p->sample_bin_ns > a ? a + p->sample_bin_ns : UINT64_MAX;
			if (p->sample_bin_ns > edge(sp, 1) - sp->t0) {
				spread_evenly(sp, i, x, a, b, add, ctx);
				continue;
			}
			t = b;
		}
		struct pieces pc = {.x = x, .ns = (uint64_t)span};
		uint64_t e = t < cursor ? t : cursor, left = (uint64_t)span;
		while (left && e > sp->t0) {
			uint32_t b = bin_before(sp, e);
			uint64_t start = edge(sp, b), piece = e - start < left ? e - start : left;
			used[b] += piece;
			add(i, b, piece_of(&pc, piece), ctx);
			left -= piece;
			e -= piece;
		}
		cursor = e;
		/* Before the start: into the first bins with room for this thread, the last one if none has. */
		for (uint32_t b = 0; left && b < sp->nbins; b++) {
			uint64_t width = edge(sp, b + 1) - edge(sp, b);
			uint64_t piece = used[b] < width ? width - used[b] : 0;
			piece = b + 1 == sp->nbins || piece > left ? left : piece;
			if (!piece)
				continue;
			used[b] += piece;
			add(i, b, piece_of(&pc, piece), ctx);
			left -= piece;
		}
	}
	free(used);
	free(order);
}
