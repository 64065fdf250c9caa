/*
 * export.c - the pieces every exporter shares: summing values per stack (and
 * thread), and the output buffer. Keeping them here means
 * folded, speedscope and pprof agree on which samples a stack stands for;
 * what a frame is comes from the model (profile_stack_frames).
 */
#include "export.h"
#include "export_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "arith.h"
#include "hashmap.h"

/*
 * Dense sums: one slot per (stack, thread), or per stack, indexed directly,
 * which beats any hash when the product is small; the slots come out in
 * (stack, thread) order, so no sort either.
 */
static int sum_dense(const struct profile *p, uint32_t nthreads, struct export_stacks *out)
{
	uint64_t nslots = (uint64_t)p->nstacks * nthreads, ncol = p->ncolumns;
	uint64_t *rows = calloc(nslots ? nslots : 1, sizeof(*rows));
	int64_t *cols = calloc(nslots * ncol + 1, sizeof(*cols));
	if (!rows || !cols)
		goto fail;
	for (uint64_t i = 0; i < p->nsamples; i++) {
		const struct profile_sample *s = &p->samples[i];
		uint64_t k = (uint64_t)s->stack * nthreads + (nthreads > 1 ? s->thread : 0);
		rows[k] += profile_sample_count(s);
		for (uint32_t c = 0; c < ncol; c++)
			cols[k * ncol + c] = sat_add_i64(cols[k * ncol + c], p->values[i * ncol + c], NULL);
	}
	uint64_t used = 0;
	for (uint64_t k = 0; k < nslots; k++)
		used += rows[k] != 0;
	out->stacks = malloc((used ? used : 1) * sizeof(*out->stacks));
	if (!out->stacks)
		goto fail;
	used = 0;
	for (uint64_t k = 0; k < nslots; k++) {
		if (!rows[k])
			continue;
		out->stacks[used] = (struct export_stack){(uint32_t)(k / nthreads), (uint32_t)(k % nthreads),
							  rows[k]};
		/* Compacting in place: slot used never passes slot k. */
		memmove(cols + used * ncol, cols + k * ncol, ncol * sizeof(*cols));
		used++;
	}
	free(rows);
	out->columns = cols;
	out->n = used;
	return 0;
fail:
	free(rows);
	free(cols);
	return -1;
}

static int compare_pairs(const void *a, const void *b, void *stacks)
{
	const struct export_stack *s = stacks;
	const struct export_stack *x = &s[*(const uint64_t *)a], *y = &s[*(const uint64_t *)b];
	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	return x->thread < y->thread ? -1 : x->thread > y->thread;
}

/* Sums through a hash of the (stack, thread) pairs actually seen. */
static int sum_pairs(const struct profile *p, struct export_stacks *out)
{
	uint32_t ncol = p->ncolumns;
	uint64_t used = 0, cap = 0, cols_cap = 0;
	struct export_stack *pairs = NULL;
	int64_t *cols = NULL;
	uint64_t *order = NULL;
	struct hashmap index; /* stack << 32 | thread -> pair */
	hashmap_init(&index, 1024);
	uint64_t last_key = UINT64_MAX;
	uint32_t last = 0;
	for (uint64_t i = 0; i < p->nsamples; i++) {
		const struct profile_sample *s = &p->samples[i];
		uint64_t key = (uint64_t)s->stack << 32 | s->thread;
		/* A thread usually stays in one stack for several samples in a
		 * row: skip the probe then. */
		if (key != last_key) {
			uint32_t *slot = hashmap_slot(&index, key);
			if (*slot == HASHMAP_NONE) {
				if (used >= UINT32_MAX)
					goto fail;
				ALLOC_GROW(pairs, used + 1, cap);
				ALLOC_GROW(cols, (used + 1) * ncol, cols_cap);
				pairs[used] = (struct export_stack){s->stack, s->thread, 0};
				memset(cols + used * ncol, 0, ncol * sizeof(*cols));
				*slot = (uint32_t)used++;
			}
			last_key = key;
			last = *slot;
		}
		pairs[last].samples += profile_sample_count(s);
		for (uint32_t c = 0; c < ncol; c++)
			cols[(uint64_t)last * ncol + c] =
				sat_add_i64(cols[(uint64_t)last * ncol + c], p->values[i * ncol + c], NULL);
	}
	hashmap_free(&index);
	/* Sort by (stack, thread) through an index, moving the columns along. */
	order = malloc((used ? used : 1) * sizeof(*order));
	out->stacks = malloc((used ? used : 1) * sizeof(*out->stacks));
	out->columns = malloc((used * ncol + 1) * sizeof(*out->columns));
	if (!order || !out->stacks || !out->columns)
		goto fail_sorted;
	for (uint64_t i = 0; i < used; i++)
		order[i] = i;
	qsort_r(order, used, sizeof(*order), compare_pairs, pairs);
	for (uint64_t i = 0; i < used; i++) {
		out->stacks[i] = pairs[order[i]];
		memcpy(out->columns + i * ncol, cols + order[i] * ncol, ncol * sizeof(*cols));
	}
	out->n = used;
	free(order);
	free(pairs);
	free(cols);
	return 0;
fail:
	hashmap_free(&index);
fail_sorted:
	free(order);
	free(pairs);
	free(cols);
	export_stacks_free(out);
	return -1;
}

int export_sum_stacks(const struct profile *p, int by_thread, struct export_stacks *out)
{
	memset(out, 0, sizeof(*out));
	out->ncolumns = p->ncolumns;
	uint32_t nthreads = by_thread ? p->nthreads : 1;
	/* Dense slots while they cost no more memory than the samples do;
	 * many threads times many stacks would not fit, a hash of the pairs
	 * actually seen always does. */
	uint64_t dense_limit = p->nsamples > (1u << 20) ? p->nsamples : (1u << 20);
	int rc = !by_thread || (uint64_t)p->nstacks * nthreads <= dense_limit ? sum_dense(p, nthreads, out)
									       : sum_pairs(p, out);
	if (rc < 0) {
		export_stacks_free(out);
		errno = ENOMEM;
	}
	return rc;
}

void export_stacks_free(struct export_stacks *s)
{
	free(s->stacks);
	free(s->columns);
	s->stacks = NULL;
	s->columns = NULL;
	s->n = 0;
}

int export_buffer_reserve(struct export_buffer *b, size_t more)
{
	if (b->len + more <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 1 << 16;
	while (cap < b->len + more)
		cap *= 2;
	char *q = realloc(b->buf, cap);
	if (!q)
		return -1;
	b->buf = q;
	b->cap = cap;
	return 0;
}

int export_buffer_put(struct export_buffer *b, const void *s, size_t n)
{
	if (export_buffer_reserve(b, n))
		return -1;
	memcpy(b->buf + b->len, s, n);
	b->len += n;
	return 0;
}

void export_buffer_put_u64(struct export_buffer *b, uint64_t v)
{
	char digits[20];
	int n = 0;
	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		b->buf[b->len++] = digits[--n];
}

void export_buffer_put_i64(struct export_buffer *b, int64_t v)
{
	if (v < 0)
		b->buf[b->len++] = '-';
	export_buffer_put_u64(b, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v);
}
