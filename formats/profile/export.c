/*
 * export.c - the pieces every exporter shares: summing weights per stack (and
 * thread), and the output buffer. Keeping them here means
 * folded, speedscope and pprof agree on which samples a stack stands for;
 * what a frame is comes from the model (profile_stack_frames).
 */
#include "export.h"
#include "export_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int compare_stack_weight(const void *a, const void *b)
{
	const struct export_stack_weight *x = a, *y = b;
	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	return 0;
}

/*
 * Dense sums: one slot per (stack, thread), or per stack, indexed directly,
 * which beats any hash when the product is small; the slots come out in
 * (stack, thread) order, so no sort either.
 */
static struct export_stack_weight *weights_dense(const struct profile *p, uint32_t nthreads,
						 uint64_t *n)
{
	uint64_t nslots = (uint64_t)p->nstacks * nthreads;
	struct export_stack_weight *w = calloc(nslots ? nslots : 1, sizeof(*w));
	if (!w)
		return NULL;
	for (uint64_t i = 0; i < p->nsamples; i++) {
		const struct profile_sample *s = &p->samples[i];
		struct export_stack_weight *slot =
			&w[(uint64_t)s->stack * nthreads + (nthreads > 1 ? s->thread : 0)];
		slot->samples++;
		slot->weight += s->weight;
	}
	uint64_t used = 0;
	for (uint64_t k = 0; k < nslots; k++) {
		if (!w[k].samples)
			continue;
		w[used] = w[k];
		w[used].stack = (uint32_t)(k / nthreads);
		w[used].thread = (uint32_t)(k % nthreads);
		used++;
	}
	*n = used;
	return w;
}

/* Open-addressing table from (stack, thread) to an index into the result. */
struct pair_slot {
	uint64_t key; /* stack << 32 | thread */
	uint64_t entry; /* index + 1; 0 empty */
};

static uint64_t pair_hash(uint64_t key)
{
	key ^= key >> 29;
	key *= 0xbf58476d1ce4e5b9ull;
	key ^= key >> 32;
	return key;
}

static int pairs_grow(struct pair_slot **slots, uint64_t *mask, const struct export_stack_weight *w,
		      uint64_t n)
{
	uint64_t nslots = (*mask + 1) * 2;
	struct pair_slot *fresh = calloc(nslots, sizeof(*fresh));
	if (!fresh)
		return -1;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t key = (uint64_t)w[i].stack << 32 | w[i].thread;
		uint64_t h = pair_hash(key) & (nslots - 1);
		while (fresh[h].entry)
			h = (h + 1) & (nslots - 1);
		fresh[h].key = key;
		fresh[h].entry = i + 1;
	}
	free(*slots);
	*slots = fresh;
	*mask = nslots - 1;
	return 0;
}

static struct export_stack_weight *weights_by_stack_and_thread(const struct profile *p, uint64_t *n)
{
	uint64_t mask = 1023, used = 0, cap = 1024;
	struct pair_slot *slots = calloc(mask + 1, sizeof(*slots));
	struct export_stack_weight *w = malloc(cap * sizeof(*w));
	uint64_t last_key = UINT64_MAX, last_entry = 0;
	if (!slots || !w)
		goto fail;
	for (uint64_t i = 0; i < p->nsamples; i++) {
		const struct profile_sample *s = &p->samples[i];
		uint64_t key = (uint64_t)s->stack << 32 | s->thread;
		/* A thread usually stays in one stack for several samples in a
		 * row: skip the probe then. */
		if (key != last_key) {
			uint64_t h = pair_hash(key) & mask;
			while (slots[h].entry && slots[h].key != key)
				h = (h + 1) & mask;
			if (!slots[h].entry) {
				if (used == cap) {
					void *q = realloc(w, 2 * cap * sizeof(*w));
					if (!q)
						goto fail;
					w = q;
					cap *= 2;
				}
				w[used] = (struct export_stack_weight){ s->stack, s->thread, 0, 0 };
				slots[h].key = key;
				slots[h].entry = ++used;
				if (used * 2 > mask && pairs_grow(&slots, &mask, w, used) < 0)
					goto fail;
				h = pair_hash(key) & mask;
				while (slots[h].key != key || !slots[h].entry)
					h = (h + 1) & mask;
			}
			last_key = key;
			last_entry = slots[h].entry - 1;
		}
		w[last_entry].samples++;
		w[last_entry].weight += s->weight;
	}
	free(slots);
	qsort(w, used, sizeof(*w), compare_stack_weight);
	*n = used;
	return w;
fail:
	free(slots);
	free(w);
	errno = ENOMEM;
	return NULL;
}

struct export_stack_weight *export_stack_weights(const struct profile *p, int by_thread,
						 uint64_t *n)
{
	*n = 0;
	uint32_t nthreads = by_thread ? p->nthreads : 1;
	/* Dense slots while they cost no more memory than the samples do;
	 * many threads times many stacks would not fit, a hash of the pairs
	 * actually seen always does. */
	uint64_t dense_limit = p->nsamples > (1u << 20) ? p->nsamples : (1u << 20);
	if (!by_thread || (uint64_t)p->nstacks * nthreads <= dense_limit)
		return weights_dense(p, nthreads, n);
	return weights_by_stack_and_thread(p, n);
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
