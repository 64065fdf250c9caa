/*
 * diff.c - the diff profile of two runs and the noise test (see diff.h).
 *
 * Normalisation. By default the question is "did the share of the program's
 * cost change?": new values are multiplied by scale = base total / new total
 * (of the compared type) before base is subtracted, so both runs weigh the
 * same and a row's change is a change of its share. The scaled values are
 * rounded per (stack, thread) entry by rounding the running sum, so that
 * the entries of new add up to base's total exactly and no row is off by
 * more than one unit per entry. --no-normalize compares the raw values
 * (scale 1), e.g. to see that total CPU grew.
 *
 * The noise test. A sampled profile's counts are random: a row holding a
 * share q of N samples holds Binomial(N, q) of them. For each row, with its
 * sample counts b and n out of the runs' totals B and N:
 *  - normalised: the two-proportion z-test with pooled variance,
 *      P = (b + n) / (B + N),  z = (n/N - b/B) / sqrt(P (1-P) (1/B + 1/N));
 *  - raw values v_b, v_n: each count treated as Poisson, a row's value
 *    carrying v/c per count: z = (v_n - v_b) / sqrt(v_b^2/b + v_n^2/n)
 *    (for plain counts, (n - b) / sqrt(n + b));
 * two-sided p = erfc(|z| / sqrt 2). The counts are those of the count type
 * behind the compared values (alloc_space's are alloc_objects), or sample
 * rows when a profile has none; a trace's CPU and wall samples count their
 * rows, one per signal, not the periods a row weighs (counts_signals).
 *
 * Many rows are tested at once, and at 99% confidence one row in a hundred
 * would look significant by chance: p-values are adjusted with Holm-
 * Bonferroni, which bounds the chance that ANY row of a report is marked
 * significant while nothing changed by 1 - confidence (the family-wise
 * error rate). We chose it over Benjamini-Hochberg, which bounds only the
 * expected share of false rows among the marked ones and needs the tests to
 * be independent or positively dependent: the rows of a call tree are
 * neither (a caller contains its callees; siblings compete for one total),
 * and "two runs of the same program show no significant row, at the stated
 * rate" is the family-wise statement. Holm is uniformly more powerful than
 * plain Bonferroni and valid under any dependence.
 *
 * Exact runs (an allocation trace at rate 1.0: profile.exact) have no
 * sampling noise: every change there is real, so every row whose value
 * changed is significant.
 *
 * Replicates. Given two or more runs on each side (diff --base A1 --base
 * A2 B1 B2), a row's noise is what it varies from run to run, which holds
 * sampling noise and everything else that moves between runs (the
 * machine's load, caches, a random seed): the test is then Welch's t-test
 * on the row's share of each run's total (its value in each run with
 * --no-normalize), two means of unequal variance, with the Welch-
 * Satterthwaite degrees of freedom; p from Student's t distribution (the
 * regularized incomplete beta function, by its continued fraction). Raw
 * values of sets of different sizes compare means per run: new's values
 * are scaled by base's runs / new's.
 */
#include "diff.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "arith.h"
#include "hashmap.h"
#include "remap.h"
#include "terminal.h"

static const char *type_name(const struct profile *p, uint32_t v)
{
	return profile_string(p, p->value_types[v].type);
}

static const char *unit_name(const struct profile *p, uint32_t v)
{
	return profile_string(p, p->value_types[v].unit);
}

/* The type of other named as type v of p (same name and unit), or PROFILE_NO_VALUE. */
static uint32_t same_type(const struct profile *p, uint32_t v, const struct profile *other)
{
	uint32_t u = profile_find_value_type(other, type_name(p, v));
	return u != PROFILE_NO_VALUE && !strcmp(unit_name(p, v), unit_name(other, u)) ? u : PROFILE_NO_VALUE;
}

static int64_t sample_count(const struct diff_run *r, uint64_t i)
{
	/* A summed row (profile_sample.merged) is that many signals of one weight. */
	int64_t n = (int64_t)profile_sample_count(&r->p->samples[i]);
	if (r->count == PROFILE_NO_VALUE)
		return n;
	int64_t c = profile_sample_value(r->p, i, r->count);
	return r->signals ? (c > 0 ? n : 0) : c;
}

/*
 * Whether r's observations are its rows: a trace's CPU or wall samples, one
 * signal each. Counting their periods instead would make a row of timer
 * samples of kernel time (about 4 periods each at 1 ms and a 250 Hz tick,
 * more when the signal waited) look several times surer than it is, and two
 * runs of one program then "differ" in a system call's share.
 */
static int counts_signals(const struct profile *p, const struct diff_run *r)
{
	return p->rows_are_signals && r->count != PROFILE_NO_VALUE &&
	       (r->value == p->period_type || r->value == profile_period_count(p));
}

static void run_totals(struct diff_run *r)
{
	r->total = profile_value_total(r->p, r->value, NULL);
	r->count_total = 0;
	for (uint64_t i = 0; i < r->p->nsamples; i++)
		r->count_total = sat_add_i64(r->count_total, sample_count(r, i), NULL);
}

/* Pick the compared type: --value, else base's default, else new's, else
 * the first type both have. 0, or -1 with err. */
static int choose_value(struct diff *d, const struct diff_options *o, char *err, size_t errlen)
{
	const struct profile *b = d->base.p, *n = d->new.p;
	d->common[0] = '\0';
	size_t used = 0;
	uint32_t first = PROFILE_NO_VALUE;
	for (uint32_t v = 0; v < b->nvalue_types; v++) {
		if (same_type(b, v, n) == PROFILE_NO_VALUE)
			continue;
		if (first == PROFILE_NO_VALUE)
			first = v;
		int k = snprintf(d->common + used, sizeof(d->common) - used, "%s%s", d->ncommon ? ", " : "",
				 type_name(b, v));
		if (k > 0 && (size_t)k < sizeof(d->common) - used)
			used += (size_t)k;
		d->ncommon++;
	}
	char bnames[256], nnames[256];
	profile_value_type_names(b, bnames, sizeof(bnames));
	profile_value_type_names(n, nnames, sizeof(nnames));
	if (first == PROFILE_NO_VALUE) {
		snprintf(err, errlen, "nothing to compare: %s has the value types %s, %s has %s", d->base.path,
			 *bnames ? bnames : "none", d->new.path, *nnames ? nnames : "none");
		return -1;
	}
	uint32_t v = first;
	if (o->value_name) {
		v = profile_find_value_type(b, o->value_name);
		if (v == PROFILE_NO_VALUE || same_type(b, v, n) == PROFILE_NO_VALUE) {
			snprintf(err, errlen, "--value %s: the value types both traces have are %s (%s: %s; %s: %s)",
				 o->value_name, d->common, d->base.path, bnames, d->new.path, nnames);
			return -1;
		}
	} else if (b->default_value < b->nvalue_types && same_type(b, b->default_value, n) != PROFILE_NO_VALUE) {
		v = b->default_value;
	} else if (n->default_value < n->nvalue_types && same_type(n, n->default_value, b) != PROFILE_NO_VALUE) {
		v = same_type(n, n->default_value, b);
	}
	d->base.value = v;
	d->new.value = same_type(b, v, n);
	return 0;
}

/* The program a command ran: its first word's last path component. */
static void program_of(const struct profile *p, char *buf, size_t len)
{
	const char *cmd = profile_string(p, p->command);
	size_t n = strcspn(cmd, " ");
	const char *start = cmd;
	for (size_t i = 0; i < n; i++)
		if (cmd[i] == '/')
			start = cmd + i + 1;
	snprintf(buf, len, "%.*s", (int)(n - (size_t)(start - cmd)), start);
}

static void warn_about_runs(const struct diff *d, const struct diff_options *o)
{
	const struct profile *b = d->base.p, *n = d->new.p;
	char pb[256], pn[256];
	program_of(b, pb, sizeof(pb));
	program_of(n, pn, sizeof(pn));
	if (*pb && *pn && strcmp(pb, pn))
		diag(o->diag, DIAG_WARNING,
		     "%s ran %s and %s ran %s: comparing different programs (frames match by module and function name)",
		     d->base.path, pb, d->new.path, pn);
	/* --tid names one run's threads: the other may keep none. A run can
	 * also be empty on its own (a trace cut before its first sample). */
	const struct diff_run *runs[2] = {&d->base, &d->new};
	for (int i = 0; i < 2; i++)
		if (!runs[i]->p->nsamples)
			diag(o->diag, DIAG_WARNING, "%s has no samples to compare%s", runs[i]->path,
			     runs[i]->p->nthreads || !o->threads_filtered
				     ? ""
				     : " (no thread left after --tid: thread ids are each run's own)");
	/* Raw counts of timer periods mean different times at different intervals. */
	uint32_t v = d->base.value;
	if (!d->normalized && b->period_type != PROFILE_NO_VALUE && n->period_type != PROFILE_NO_VALUE &&
	    v != b->period_type && b->period != n->period &&
	    b->value_types[v].column == b->value_types[b->period_type].column) {
		char ib[32], in[32];
		diag(o->diag, DIAG_WARNING,
		     "the runs sampled every %s and %s: their raw %s are not comparable; --value %s compares time",
		     format_value(b->period, unit_name(b, b->period_type), ib, sizeof(ib)),
		     format_value(n->period, unit_name(n, n->period_type), in, sizeof(in)), type_name(b, v),
		     type_name(b, b->period_type));
	}
}

/* One (stack, thread) of a run: its summed value and count. */
struct entry {
	uint32_t stack, thread;
	int64_t value, count;
};

struct entries {
	struct entry *e;
	uint64_t n, cap;
};

static int entry_order(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	return x->thread < y->thread ? -1 : x->thread > y->thread;
}

/* Map run r's threads and samples into d->p, summed per (stack, thread). */
static void collect_entries(struct diff *d, const struct diff_run *r, uint32_t flags, unsigned remap_flags,
			    struct entries *out)
{
	const struct profile *src = r->p;
	struct profile *dst = d->p;
	struct profile_remap *m = profile_remap_new(dst, src, remap_flags);
	/* Threads are each run's own, never merged by tid across runs. */
	uint32_t *threads = calloc_or_abort(src->nthreads ? src->nthreads : 1, sizeof(*threads));
	for (uint32_t t = 0; t < src->nthreads; t++) {
		struct profile_thread th = src->threads[t];
		th.name = profile_remap_string(m, th.name);
		th.command = profile_remap_string(m, th.command);
		th.flags = flags;
		threads[t] = profile_add_thread(dst, &th);
	}
	/* Sum by the run's own (stack, thread) first: one hash probe per run
	 * of samples in one stack, not one remapping per sample. */
	struct hashmap index;
	hashmap_init(&index, 1024);
	struct entries raw = {0};
	uint64_t last_key = UINT64_MAX;
	uint32_t last = 0;
	for (uint64_t i = 0; i < src->nsamples; i++) {
		const struct profile_sample *s = &src->samples[i];
		if (s->thread >= src->nthreads)
			continue;
		uint64_t key = (uint64_t)s->stack << 32 | s->thread;
		if (key != last_key) {
			uint32_t *slot = hashmap_slot(&index, key);
			if (*slot == HASHMAP_NONE) {
				ALLOC_GROW(raw.e, raw.n + 1, raw.cap);
				raw.e[raw.n] = (struct entry){s->stack, s->thread, 0, 0};
				*slot = (uint32_t)raw.n++;
			}
			last_key = key;
			last = *slot;
		}
		struct entry *e = &raw.e[last];
		e->value = sat_add_i64(e->value, profile_sample_value(src, i, r->value), NULL);
		e->count = sat_add_i64(e->count, sample_count(r, i), NULL);
	}
	hashmap_free(&index);
	/* Then into dst's ids, where stacks that differed only by address
	 * become one. */
	hashmap_init(&index, raw.n + 16);
	for (uint64_t k = 0; k < raw.n; k++) {
		uint32_t stack = profile_remap_stack(m, raw.e[k].stack), thread = threads[raw.e[k].thread];
		uint32_t *slot = hashmap_slot(&index, (uint64_t)stack << 32 | thread);
		if (*slot == HASHMAP_NONE) {
			ALLOC_GROW(out->e, out->n + 1, out->cap);
			out->e[out->n] = (struct entry){stack, thread, 0, 0};
			*slot = (uint32_t)out->n++;
		}
		struct entry *e = &out->e[*slot];
		e->value = sat_add_i64(e->value, raw.e[k].value, NULL);
		e->count = sat_add_i64(e->count, raw.e[k].count, NULL);
	}
	hashmap_free(&index);
	free(raw.e);
	free(threads);
	profile_remap_free(m);
	if (out->n) /* an empty run has no array: qsort(NULL, 0) is undefined */
		qsort(out->e, out->n, sizeof(*out->e), entry_order);
}

static int64_t clamp_i64(long double x)
{
	if (x >= (long double)INT64_MAX)
		return INT64_MAX;
	if (x <= (long double)INT64_MIN)
		return INT64_MIN;
	return (int64_t)llroundl(x);
}

static void add_entries(struct diff *d, const struct entries *es, int negate, double scale)
{
	long double running = 0;
	int64_t given = 0;
	for (uint64_t i = 0; i < es->n; i++) {
		const struct entry *e = &es->e[i];
		int64_t value = e->value;
		if (scale != 1.0) {
			/* Round the running sum, not each entry: the entries then
			 * add up to the scaled total exactly. */
			running += (long double)e->value;
			int64_t target = clamp_i64(running * scale);
			value = target - given;
			given = target;
		}
		int64_t values[2] = {negate ? sat_neg_i64(value) : value, negate ? sat_neg_i64(e->count) : e->count};
		struct profile_sample s = {.stack = e->stack, .thread = e->thread, .time_ns = 0};
		profile_add_sample(d->p, &s, values);
	}
}

static void mark_runs(struct diff *d);

static void describe_run(struct diff *d)
{
	struct profile *p = d->p;
	const struct profile *b = d->base.p, *n = d->new.p;
	char text[8192];
	snprintf(text, sizeof(text), "diff: %s -> %s", b->command ? profile_string(b, b->command) : "?",
		 n->command ? profile_string(n, n->command) : "?");
	p->command = profile_intern(p, text);
	p->mode = profile_intern(p, "diff");
	p->source = n->source ? profile_intern(p, profile_string(n, n->source)) : 0;
	p->start_realtime_ns = n->start_realtime_ns;
	p->start_ns = n->start_ns;
	p->duration_ns = n->duration_ns;
	p->lost_samples = b->lost_samples + n->lost_samples;
	p->ended = b->ended && n->ended;
	p->exact = b->exact && n->exact;
}

int diff_build(struct diff *d, const struct profile *base, const char *base_path,
	       const struct profile *new, const char *new_path, const struct diff_options *o,
	       char *err, size_t errlen)
{
	memset(d, 0, sizeof(*d));
	d->base = (struct diff_run){.p = base, .path = base_path};
	d->new = (struct diff_run){.p = new, .path = new_path};
	d->confidence = o->confidence > 0 && o->confidence < 1 ? o->confidence : DIFF_DEFAULT_CONFIDENCE;
	d->normalized = o->normalize;
	if (choose_value(d, o, err, errlen))
		return -1;
	d->base.count = profile_count_type(base, d->base.value);
	d->new.count = profile_count_type(new, d->new.value);
	d->base.signals = counts_signals(base, &d->base);
	d->new.signals = counts_signals(new, &d->new);
	run_totals(&d->base);
	run_totals(&d->new);
	/* Exact traces are exact in their allocation types; their CPU samples are samples. */
	d->exact = base->exact && new->exact && d->base.value != base->period_type &&
		   d->base.value != profile_period_count(base) && d->new.value != new->period_type &&
		   d->new.value != profile_period_count(new);
	d->base.nruns = base->ntraces > 1 ? base->ntraces : 1;
	d->new.nruns = new->ntraces > 1 ? new->ntraces : 1;
	d->scale = 1.0;
	if (o->normalize && d->new.total != 0 && d->base.total != 0)
		d->scale = (double)d->base.total / (double)d->new.total;
	else if (!o->normalize && d->base.nruns != d->new.nruns) /* compare means per run */
		d->scale = (double)d->base.nruns / (double)d->new.nruns;
	warn_about_runs(d, o);

	d->p = profile_new();
	if (!d->p)
		abort_out_of_memory();
	profile_add_value_type(d->p, type_name(base, d->base.value), unit_name(base, d->base.value));
	profile_add_value_type(d->p, "sample_count", "count");
	d->p->default_value = DIFF_VALUE;
	unsigned flags = PROFILE_REMAP_BY_NAME | (o->lines ? PROFILE_REMAP_LINES : 0);
	struct entries eb = {0}, en = {0};
	collect_entries(d, &d->base, PROFILE_THREAD_DIFF_BASE, flags, &eb);
	collect_entries(d, &d->new, 0, flags, &en);
	profile_reserve_samples(d->p, eb.n + en.n); /* a row per entry: no growth room */
	add_entries(d, &eb, 1, 1.0);
	add_entries(d, &en, 0, d->scale);
	free(eb.e);
	free(en.e);
	describe_run(d);
	mark_runs(d);
	d->base_threads = calloc_or_abort(d->p->nthreads + 1, 1);
	d->new_threads = calloc_or_abort(d->p->nthreads + 1, 1);
	for (uint32_t t = 0; t < d->p->nthreads; t++) {
		uint8_t is_base = (d->p->threads[t].flags & PROFILE_THREAD_DIFF_BASE) != 0;
		d->base_threads[t] = is_base;
		d->new_threads[t] = !is_base;
	}
	return 0;
}

/* Replicates: which threads each run had, and each run's total (see diff.h). */
static void mark_runs(struct diff *d)
{
	uint32_t nb = d->base.nruns, nn = d->new.nruns;
	d->replicates = nb >= 2 && nn >= 2 && !d->exact;
	if (!d->replicates)
		return;
	d->nruns = nb + nn;
	d->run_threads = calloc_or_abort(d->nruns, sizeof(*d->run_threads));
	d->run_totals = calloc_or_abort(d->nruns, sizeof(*d->run_totals));
	uint32_t *run_of = calloc_or_abort(d->p->nthreads + 1, sizeof(*run_of));
	for (uint32_t k = 0; k < d->nruns; k++)
		d->run_threads[k] = calloc_or_abort(d->p->nthreads + 1, 1);
	for (uint32_t t = 0; t < d->p->nthreads; t++) {
		const struct profile_thread *th = &d->p->threads[t];
		uint32_t k = th->flags & PROFILE_THREAD_DIFF_BASE ? th->run : nb + th->run;
		run_of[t] = k < d->nruns ? k : d->nruns - 1;
		d->run_threads[run_of[t]][t] = 1;
	}
	for (uint64_t i = 0; i < d->p->nsamples; i++) {
		uint32_t k = run_of[d->p->samples[i].thread];
		int64_t v = profile_sample_value(d->p, i, DIFF_VALUE);
		d->run_totals[k] = sat_add_i64(d->run_totals[k], k < nb ? sat_neg_i64(v) : v, NULL);
	}
	free(run_of);
}

void diff_free(struct diff *d)
{
	profile_free(d->loaded[0]);
	profile_free(d->loaded[1]);
	profile_free(d->p);
	free(d->base_threads);
	free(d->new_threads);
	for (uint32_t k = 0; k < d->nruns; k++)
		free(d->run_threads[k]);
	free(d->run_threads);
	free(d->run_totals);
	memset(d, 0, sizeof(*d));
}

double diff_row_percent(const struct diff *d, const struct diff_row *r)
{
	return d->base.total ? 100.0 * (double)diff_row_delta(r) / (double)d->base.total : 0.0;
}

double diff_normal_p(double z)
{
	return erfc(fabs(z) / sqrt(2.0));
}

double diff_normal_z(double p)
{
	/* Bisection on the two-sided tail: monotone, and 100 halvings of
	 * [0, 40] are far below double precision. */
	if (p >= 1)
		return 0;
	double lo = 0, hi = 40;
	for (int i = 0; i < 100; i++) {
		double mid = (lo + hi) / 2;
		if (diff_normal_p(mid) > p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

/* The row's z statistic and the standard error of its change in
 * percentage points of base's total (see the top of this file). */
static double row_z(const struct diff *d, const struct diff_row *r, double *se_points)
{
	double b = (double)r->base_count, n = (double)r->new_count;
	double B = (double)d->base.count_total, N = (double)d->new.count_total;
	*se_points = 0;
	if (d->normalized) {
		if (B <= 0 || N <= 0)
			return 0;
		double p1 = b / B, p2 = n / N, pooled = (b + n) / (B + N);
		double var = pooled * (1 - pooled) * (1 / B + 1 / N);
		double unpooled = p1 * (1 - p1) / B + p2 * (1 - p2) / N;
		*se_points = 100.0 * sqrt(unpooled > 0 ? unpooled : 0);
		if (!(var > 0))
			return p1 == p2 ? 0 : INFINITY;
		return (p2 - p1) / sqrt(var);
	}
	double vb = (double)r->base, vn = (double)r->new;
	double var = (b > 0 ? vb * vb / b : 0) + (n > 0 ? vn * vn / n : 0);
	if (d->base.total)
		*se_points = 100.0 * sqrt(var) / fabs((double)d->base.total);
	if (!(var > 0))
		return vb == vn ? 0 : INFINITY;
	return (vn - vb) / sqrt(var);
}

void diff_row_test(const struct diff *d, struct diff_row *r)
{
	double se;
	r->p = d->exact ? (diff_row_delta(r) ? 0.0 : 1.0) : diff_normal_p(row_z(d, r, &se));
}

/* The regularized incomplete beta function I_x(a, b), by its continued fraction (modified Lentz). */
static double incomplete_beta(double a, double b, double x)
{
	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	/* The fraction converges fast for x < (a + 1) / (a + b + 2); else by symmetry. */
	if (x > (a + 1) / (a + b + 2))
		return 1 - incomplete_beta(b, a, 1 - x);
	double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x)) / a;
	const double tiny = 1e-300;
	double f = 1, c = 1, dd = 0;
	for (int i = 0; i <= 400; i++) {
		int m = i / 2;
		double num;
		if (i == 0)
			num = 1;
		else if (i % 2 == 0)
			num = (m * (b - m) * x) / ((a + 2 * m - 1) * (a + 2 * m));
		else
			num = -((a + m) * (a + b + m) * x) / ((a + 2 * m) * (a + 2 * m + 1));
		dd = 1 + num * dd;
		dd = fabs(dd) < tiny ? tiny : dd;
		dd = 1 / dd;
		c = 1 + num / c;
		c = fabs(c) < tiny ? tiny : c;
		double step = c * dd;
		f *= step;
		if (fabs(1 - step) < 1e-12)
			break;
	}
	return front * (f - 1);
}

/* (diff.h) Two-sided: I_{df/(df+t^2)}(df/2, 1/2). */
double diff_student_p(double t, double df)
{
	if (!isfinite(t))
		return 0;
	return incomplete_beta(df / 2, 0.5, df / (df + t * t));
}

void diff_row_test_runs(const struct diff *d, struct diff_row *r, const int64_t *per_run)
{
	uint32_t nb = d->base.nruns, nn = d->new.nruns;
	double mean[2] = {0, 0}, var[2] = {0, 0};
	for (int side = 0; side < 2; side++) {
		uint32_t from = side ? nb : 0, n = side ? nn : nb;
		double *x = calloc_or_abort(n ? n : 1, sizeof(*x));
		for (uint32_t k = 0; k < n; k++) {
			/* Base's values are stored negated. */
			double v = side ? (double)per_run[from + k] : -(double)per_run[from + k];
			double total = (double)d->run_totals[from + k];
			x[k] = d->normalized ? (total != 0 ? 100.0 * v / total : 0) : v;
			mean[side] += x[k] / n;
		}
		for (uint32_t k = 0; k < n; k++)
			var[side] += (x[k] - mean[side]) * (x[k] - mean[side]) / (n - 1);
		free(x);
	}
	double vb = var[0] / nb, vn = var[1] / nn, se = sqrt(vb + vn);
	double df = vb + vn > 0 ? (vb + vn) * (vb + vn) / (vb * vb / (nb - 1) + vn * vn / (nn - 1)) : nb + nn - 2;
	if (!(se > 0))
		r->p = mean[0] == mean[1] ? 1.0 : 0.0; /* every run agrees: a difference is real */
	else
		r->p = diff_student_p((mean[1] - mean[0]) / se, df);
}

static int by_p(const void *a, const void *b, void *ctx)
{
	const struct diff_row *rows = ctx, *x = &rows[*(const uint32_t *)a], *y = &rows[*(const uint32_t *)b];
	return x->p < y->p ? -1 : x->p > y->p;
}

void diff_adjust(const struct diff *d, struct diff_row *rows, uint32_t *ids, size_t n)
{
	/* The ids sorted in place: a diff tree tests millions of rows, and a
	 * copy of pointers to them was 27 MB at 200,000 stacks (ids are half
	 * that, and so is qsort's buffer). Ties keep no particular order, but
	 * adjusted values of tied p's are equal whatever their order (the
	 * running maximum). */
	if (n) /* ids may be NULL when there are none */
		qsort_r(ids, n, sizeof(*ids), by_p, rows);
	double running = 0, alpha = 1 - d->confidence;
	for (size_t i = 0; i < n; i++) {
		struct diff_row *r = &rows[ids[i]];
		double adjusted = (double)(n - i) * r->p;
		adjusted = adjusted > 1 ? 1 : adjusted;
		running = adjusted > running ? adjusted : running;
		r->p_adjusted = running;
		r->significant = diff_row_delta(r) != 0 && (d->exact || r->p_adjusted < alpha);
	}
}

double diff_row_margin(const struct diff *d, const struct diff_row *r, size_t m)
{
	if (d->exact)
		return 0;
	/* A row keeps no per-run figures (a diff tree has millions of rows):
	 * no margin with replicates, which plot diff, one run against one,
	 * never has. */
	if (d->replicates)
		return 0;
	double alpha = 1 - d->confidence;
	double se;
	row_z(d, r, &se);
	return diff_normal_z(alpha / (double)(m ? m : 1)) * se;
}

const char *diff_test_name(const struct diff *d)
{
	if (d->exact)
		return "none: both runs are exact counts, with no sampling noise";
	if (d->replicates)
		return d->normalized ? "Welch's t-test over the runs of each side, on each run's share"
				     : "Welch's t-test over the runs of each side, on each run's value";
	return d->normalized ? "two-proportion z-test" : "z-test of Poisson counts";
}

const char *diff_count_name(const struct diff *d)
{
	const struct diff_run *r = &d->base;
	return r->count == PROFILE_NO_VALUE ? "sample rows" : type_name(r->p, r->count);
}
