/*
 * export_speedscope.c - speedscope's file format (JSON): one "sampled"
 * profile per thread, heaviest thread first and active, samples in time
 * order so the Time Order view shows the real timeline.
 *
 * A diff profile (profile_is_diff) is written as its new run's threads
 * ("new TID (name)"), then its base run's ("base ..."), each with its own
 * values, positive: speedscope shows the two runs side by side.
 *
 * Weights are in the displayed type of the exported one (a count of timer
 * periods is written as the time it stands for, speedscope's best unit).
 * Inline frames are expanded into frames of their own (speedscope drops them
 * when it imports pprof). A frame is a function, or a function and line with
 * o->lines, exactly the frames folded output shows.
 *
 * Everything that holds a string is built and escaped by Jansson. The
 * per-sample arrays are the exception: a 10-million-sample trace would need
 * tens of millions of json_t integers (gigabytes, seconds), so they are
 * written straight from a per-stack cache of the encoded frame list. They are
 * plain integers, which need no escaping.
 */
#include "export.h"
#include "export_internal.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "arith.h"

#ifndef IPSCOPE_VERSION
#define IPSCOPE_VERSION "unknown"
#endif

#define SPEEDSCOPE_SCHEMA "https://www.speedscope.app/file-format-schema.json"

/*
 * A JSON string of s. Jansson takes only valid UTF-8, and names from binaries
 * or a thread's comm need not be: then every non-ASCII byte becomes '?'
 * rather than the export failing.
 */
static json_t *json_string_lossy(const char *s)
{
	json_t *j = json_string(s);
	if (j)
		return j;
	char *ascii = strdup(s);
	if (!ascii)
		return NULL;
	for (char *c = ascii; *c; c++)
		if ((unsigned char)*c >= 0x80)
			*c = '?';
	j = json_string(ascii);
	free(ascii);
	return j;
}

/* Frame identity: the function, plus file and line with o->lines. */
struct frame_key {
	uint32_t function, file, line;
	uint32_t line_index; /* a profile line with this key */
};

static int compare_frame_keys(const void *a, const void *b)
{
	const struct frame_key *x = a, *y = b;
	if (x->function != y->function)
		return x->function < y->function ? -1 : 1;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return 0;
}

struct speedscope {
	const struct profile *p;
	const struct export_options *o;
	uint32_t display;         /* the type the weights are written in */
	uint32_t *frame_of_line;  /* per profile line: shared.frames index */
	json_t *frames;           /* shared.frames */
	struct export_buffer stacks;      /* per used stack: "[root,...,leaf]" */
	uint64_t *stack_offset;   /* per stack: into stacks, UINT64_MAX unused */
	uint32_t *stack_length;
};

/* Number the frames the sampled stacks use, in (function, file, line) order
 * so the numbering depends only on the profile. */
static int build_frames(struct speedscope *s, const struct export_stack *used, uint64_t nused)
{
	const struct profile *p = s->p;
	struct frame_key *keys = malloc((p->nlines ? p->nlines : 1) * sizeof(*keys));
	uint8_t *marked = calloc(p->nlines ? p->nlines : 1, 1);
	uint32_t nkeys = 0;
	int ret = -1;
	s->frame_of_line = malloc((p->nlines ? p->nlines : 1) * sizeof(*s->frame_of_line));
	s->frames = json_array();
	if (!keys || !marked || !s->frame_of_line || !s->frames)
		goto out;
	for (uint64_t i = 0; i < nused; i++) {
		const struct profile_stack *st = &p->stacks[used[i].stack];
		for (uint32_t d = 0; d < st->depth; d++) {
			const struct profile_location *loc = &p->locations[p->stack_locations[st->first + d]];
			for (uint32_t l = loc->first_line; l < loc->first_line + loc->nlines; l++) {
				if (marked[l])
					continue;
				marked[l] = 1;
				const struct profile_line *line = &p->lines[l];
				const struct profile_function *fn = &p->functions[line->function];
				keys[nkeys++] = s->o->lines
					? (struct frame_key){ line->function, line->file, line->line, l }
					: (struct frame_key){ line->function, fn->file, fn->start_line, l };
			}
		}
	}
	qsort(keys, nkeys, sizeof(*keys), compare_frame_keys);
	uint32_t nframes = 0;
	for (uint32_t i = 0; i < nkeys; i++) {
		if (i == 0 || compare_frame_keys(&keys[i - 1], &keys[i])) {
			const struct profile_function *fn = &p->functions[keys[i].function];
			json_t *frame = json_pack("{s:o}", "name", json_string_lossy(profile_string(p, fn->name)));
			if (!frame || json_array_append_new(s->frames, frame))
				goto out;
			if (keys[i].file &&
			    json_object_set_new(frame, "file", json_string_lossy(profile_string(p, keys[i].file))))
				goto out;
			if (keys[i].line && json_object_set_new(frame, "line", json_integer(keys[i].line)))
				goto out;
			nframes++;
		}
		s->frame_of_line[keys[i].line_index] = nframes - 1;
	}
	ret = 0;
out:
	free(keys);
	free(marked);
	return ret;
}

/* Encode each used stack's frame list once; samples then copy the bytes. */
static int build_stack_cache(struct speedscope *s, const struct export_stack *used, uint64_t nused)
{
	const struct profile *p = s->p;
	uint32_t *frames = malloc(((size_t)profile_max_stack_frames(p) + 1) * sizeof(*frames));
	s->stack_offset = malloc((p->nstacks ? p->nstacks : 1) * sizeof(*s->stack_offset));
	s->stack_length = malloc((p->nstacks ? p->nstacks : 1) * sizeof(*s->stack_length));
	if (!frames || !s->stack_offset || !s->stack_length) {
		free(frames);
		return -1;
	}
	for (uint32_t i = 0; i < p->nstacks; i++)
		s->stack_offset[i] = UINT64_MAX;
	for (uint64_t i = 0; i < nused; i++) {
		uint32_t n = profile_stack_frames(p, used[i].stack, frames);
		if (export_buffer_reserve(&s->stacks, 2 + (size_t)n * 21)) {
			free(frames);
			return -1;
		}
		size_t start = s->stacks.len;
		s->stacks.buf[s->stacks.len++] = '[';
		for (uint32_t f = 0; f < n; f++) {
			if (f)
				s->stacks.buf[s->stacks.len++] = ',';
			export_buffer_put_u64(&s->stacks, s->frame_of_line[frames[f]]);
		}
		s->stacks.buf[s->stacks.len++] = ']';
		s->stack_offset[used[i].stack] = start;
		s->stack_length[used[i].stack] = (uint32_t)(s->stacks.len - start);
	}
	free(frames);
	return 0;
}

/* Dump a Jansson object without its closing brace, so hand-written members
 * can follow it; the caller writes the '}'. */
static int write_object_open(json_t *object, FILE *out)
{
	char *text = json_dumps(object, JSON_COMPACT);
	if (!text)
		return -1;
	size_t n = strlen(text);
	int ok = n >= 2 && fwrite(text, 1, n - 1, out) == n - 1;
	free(text);
	return ok ? 0 : -1;
}

static int flush_bytes(struct export_buffer *b, FILE *out)
{
	int ok = fwrite(b->buf, 1, b->len, out) == b->len;
	b->len = 0;
	return ok ? 0 : -1;
}

#define FLUSH_AT (1u << 20)

/*
 * A thread's samples in time order, consecutive samples in one stack merged
 * into one run with their summed stored value (the column of the exported
 * type; each type scales it): speedscope draws exactly the same
 * timeline from the runs, hot loops shrink a lot, and the writer reads a
 * short array per thread instead of gathering from all samples.
 */
struct run {
	uint32_t stack;
	int64_t value; /* the column's sum */
};

struct thread_runs {
	struct run *runs;
	uint64_t n, cap;
};

/* One pass over the samples; NULL on out of memory. */
static struct thread_runs *runs_by_thread(const struct profile *p, uint32_t column)
{
	struct thread_runs *threads = calloc((size_t)p->nthreads + 1, sizeof(*threads));
	if (!threads)
		return NULL;
	for (uint64_t i = 0; i < p->nsamples; i++) {
		const struct profile_sample *sample = &p->samples[i];
		struct thread_runs *t = &threads[sample->thread];
		int64_t value = p->values[i * p->ncolumns + column];
		if (t->n && t->runs[t->n - 1].stack == sample->stack) {
			t->runs[t->n - 1].value = sat_add_i64(t->runs[t->n - 1].value, value, NULL);
			continue;
		}
		if (t->n == t->cap) {
			uint64_t cap = t->cap ? 2 * t->cap : 256;
			struct run *q = realloc(t->runs, cap * sizeof(*q));
			if (!q)
				goto fail;
			t->runs = q;
			t->cap = cap;
		}
		t->runs[t->n++] = (struct run){ sample->stack, value };
	}
	return threads;
fail:
	for (uint32_t t = 0; t < p->nthreads; t++)
		free(threads[t].runs);
	free(threads);
	return NULL;
}

/* Is a stack of this column total lighter than --mincount (in the exported type)? */
static int below_mincount(const struct speedscope *s, int64_t column_total)
{
	return abs_i64(profile_scale_value(s->p, s->o->value, column_total, NULL)) < s->o->mincount;
}

/* The "samples" and "weights" arrays of one thread, without the runs whose
 * stack is lighter than --mincount when stack_total is given; weights are
 * the runs' values in the displayed type, times sign (-1 for a diff's base
 * run, stored negated). */
static int write_thread_samples(struct speedscope *s, const struct thread_runs *t,
				const int64_t *stack_total, int sign, FILE *out)
{
	struct export_buffer b = { 0 };
	int ret = -1;
	for (int pass = 0; pass < 2; pass++) {
		const char *opening = pass ? "],\"weights\":[" : ",\"samples\":[";
		if (export_buffer_reserve(&b, FLUSH_AT + 64) ||
		    export_buffer_put(&b, opening, strlen(opening)))
			goto out;
		int first = 1;
		for (uint64_t i = 0; i < t->n; i++) {
			const struct run *r = &t->runs[i];
			if (stack_total && below_mincount(s, stack_total[r->stack]))
				continue;
			if (pass == 0) {
				uint32_t len = s->stack_length[r->stack];
				if (export_buffer_reserve(&b, len + 1))
					goto out;
				if (!first)
					b.buf[b.len++] = ',';
				memcpy(b.buf + b.len, s->stacks.buf + s->stack_offset[r->stack], len);
				b.len += len;
			} else {
				if (export_buffer_reserve(&b, 22))
					goto out;
				if (!first)
					b.buf[b.len++] = ',';
				int64_t w = profile_scale_value(s->p, s->display, r->value, NULL);
				export_buffer_put_i64(&b, sign < 0 ? sat_neg_i64(w) : w);
			}
			first = 0;
			if (b.len >= FLUSH_AT && flush_bytes(&b, out))
				goto out;
		}
		if (flush_bytes(&b, out))
			goto out;
	}
	ret = fputs("]}", out) == EOF ? -1 : 0;
out:
	free(b.buf);
	return ret;
}

/* Heaviest thread first (by absolute value); equal ones by tid, then
 * index, so the order is total. */
struct thread_order {
	const struct profile *p;
	const int64_t *totals;
};

static int compare_threads(const void *a, const void *b, void *ctx)
{
	const struct thread_order *to = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct profile_thread *tx = &to->p->threads[x], *ty = &to->p->threads[y];
	/* A diff: the new run's threads, then the base run's. */
	uint32_t bx = tx->flags & PROFILE_THREAD_DIFF_BASE, by = ty->flags & PROFILE_THREAD_DIFF_BASE;
	if (bx != by)
		return bx ? 1 : -1;
	uint64_t wx = abs_i64(to->totals[x]), wy = abs_i64(to->totals[y]);
	if (wx != wy)
		return wx > wy ? -1 : 1;
	if (tx->tid != ty->tid)
		return tx->tid < ty->tid ? -1 : 1;
	return x < y ? -1 : x > y;
}

static json_t *document_head(const struct profile *p, json_t *frames)
{
	json_t *doc = json_pack("{s:s,s:s}", "$schema", SPEEDSCOPE_SCHEMA, "exporter",
				"ipscope@" IPSCOPE_VERSION);
	if (!doc)
		return NULL;
	const char *command = profile_string(p, p->command);
	if ((*command && json_object_set_new(doc, "name", json_string_lossy(command))) ||
	    /* Threads are written heaviest first, so the heaviest is profile 0. */
	    json_object_set_new(doc, "activeProfileIndex", json_integer(0)) ||
	    json_object_set_new(doc, "shared", json_pack("{s:O}", "frames", frames))) {
		json_decref(doc);
		return NULL;
	}
	return doc;
}

/* With stack_total (--mincount), sum (add) or clear (!add) the per-stack
 * weights of one thread; clearing only what was touched keeps this linear in
 * runs, not in threads times stacks. */
static void set_stack_totals(const struct thread_runs *t, int64_t *stack_total, int add)
{
	if (!stack_total)
		return;
	for (uint64_t i = 0; i < t->n; i++) {
		const struct run *r = &t->runs[i];
		stack_total[r->stack] = add ? sat_add_i64(stack_total[r->stack], r->value, NULL) : 0;
	}
}

/* A thread's exported column total: all of it, or with --mincount that of
 * its stacks heavy enough (stack_total is left filled in for the writer). */
static int64_t thread_total(struct speedscope *s, const struct thread_runs *t, int64_t *stack_total)
{
	set_stack_totals(t, stack_total, 1);
	int64_t total = 0;
	for (uint64_t i = 0; i < t->n; i++)
		if (!stack_total || !below_mincount(s, stack_total[t->runs[i].stack]))
			total = sat_add_i64(total, t->runs[i].value, NULL);
	return total;
}

/* speedscope's unit for a value type's unit. */
static const char *speedscope_unit(const char *unit)
{
	return !strcmp(unit, "nanoseconds") || !strcmp(unit, "bytes") ? unit : "none";
}

static int write_document(struct speedscope *s, FILE *out)
{
	const struct profile *p = s->p;
	struct thread_runs *threads = runs_by_thread(p, p->value_types[s->o->value].column);
	uint32_t *order = malloc(((size_t)p->nthreads + 1) * sizeof(*order));
	int64_t *totals = calloc((size_t)p->nthreads + 1, sizeof(*totals));
	/* --mincount works per thread and stack: their summed value. */
	int64_t *stack_total = s->o->mincount > 1 ? calloc(p->nstacks + 1, sizeof(*stack_total)) : NULL;
	json_t *head = document_head(p, s->frames);
	int ret = -1;
	if ((s->o->mincount > 1 && !stack_total) || !threads || !order || !totals || !head)
		goto out;
	if (write_object_open(head, out) || fputs(",\"profiles\":[", out) == EOF)
		goto out;
	for (uint32_t t = 0; t < p->nthreads; t++) {
		order[t] = t;
		for (uint64_t i = 0; i < threads[t].n; i++)
			totals[t] = sat_add_i64(totals[t], threads[t].runs[i].value, NULL);
	}
	struct thread_order to = { p, totals };
	qsort_r(order, p->nthreads, sizeof(*order), compare_threads, &to);
	const char *unit = speedscope_unit(profile_string(p, p->value_types[s->display].unit));
	int written = 0, diff = profile_is_diff(p);
	for (uint32_t k = 0; k < p->nthreads; k++) {
		const struct thread_runs *t = &threads[order[k]];
		if (!t->n)
			continue; /* a thread that was never sampled has nothing to show */
		int64_t total = thread_total(s, t, stack_total);
		if (!total) {
			set_stack_totals(t, stack_total, 0);
			continue; /* every stack of the thread was lighter than --mincount */
		}
		char title[256], named[300];
		profile_thread_title(p, order[k], title, sizeof(title));
		int sign = 1;
		if (p->threads[order[k]].flags & PROFILE_THREAD_DIFF_BASE) {
			/* A diff's base run: its values were stored negated. */
			snprintf(named, sizeof(named), "base %s", title);
			sign = -1;
		} else {
			snprintf(named, sizeof(named), "%s%s", diff ? "new " : "", title);
		}
		int64_t end = profile_scale_value(p, s->display, total, NULL);
		json_t *head_t = json_pack("{s:s,s:o,s:s,s:i,s:I}", "type", "sampled", "name",
					   json_string_lossy(named), "unit", unit, "startValue", 0,
					   "endValue", (json_int_t)(sign < 0 ? sat_neg_i64(end) : end));
		int failed = !head_t || (written && fputc(',', out) == EOF) ||
			     write_object_open(head_t, out);
		json_decref(head_t);
		if (failed || write_thread_samples(s, t, stack_total, sign, out))
			goto out;
		written++;
		set_stack_totals(t, stack_total, 0);
	}
	ret = fputs("]}\n", out) == EOF ? -1 : 0;
out:
	json_decref(head);
	free(stack_total);
	free(totals);
	free(order);
	if (threads)
		for (uint32_t t = 0; t < p->nthreads; t++)
			free(threads[t].runs);
	free(threads);
	return ret;
}

int export_speedscope(const struct profile *p, const struct export_options *o, FILE *out)
{
	struct speedscope s = { .p = p, .o = o, .display = profile_display_value(p, o->value) };
	struct export_stacks used = { 0 };
	int ret = -1;
	errno = ENOMEM; /* what every failure before the writing means */
	if (export_sum_stacks(p, 0, &used) || build_frames(&s, used.stacks, used.n) ||
	    build_stack_cache(&s, used.stacks, used.n))
		goto out;
	errno = EIO; /* ferror() without a failing write keeps no errno */
	if (write_document(&s, out) == 0 && fflush(out) == 0 && !ferror(out))
		ret = 0;
out:
	export_stacks_free(&used);
	free(s.frame_of_line);
	json_decref(s.frames);
	free(s.stacks.buf);
	free(s.stack_offset);
	free(s.stack_length);
	return ret;
}
