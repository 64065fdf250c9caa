/*
 * export_folded.c - folded stacks, the input of flamegraph.pl and inferno:
 * one line per distinct stack, "root;caller;...;leaf count", sorted.
 *
 * The count is the summed value of the chosen type (o->value), the unit
 * `analyze flat --value` counts in, so a flame graph's total equals flat's;
 * it is signed. A diff profile (threads of a base run, profile_is_diff)
 * gets flamegraph.pl's differential input instead, "stack base new", base's
 * value as it was recorded and new's as the diff scaled it. Two stacks that differ
 * only in addresses render to the same text and become one line: consumers
 * key on the text, so we merge rather than emit duplicates. In a trace of
 * many processes (a build) each stack's root is its process's program,
 * "cc1;main;...", so that the mains of cc1 and as stay apart; the program's
 * processes merge, as a flame graph of a build wants them.
 */
#include "export.h"
#include "export_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "arith.h"

/* Each function's name, made safe for the line format once: ';' separates
 * frames and a newline ends the record, so they become ':' and ' '. Spaces
 * are fine (the count follows the last space). */
struct frame_names {
	struct export_buffer text;
	uint64_t *offset; /* per function, UINT64_MAX until first used */
	uint32_t *length;
};

static void put_safe(char *dst, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		dst[i] = c == ';' ? ':' : c == '\n' || c == '\r' ? ' ' : c;
	}
}

static int put_safe_text(struct export_buffer *b, const char *s)
{
	size_t n = strlen(s);
	if (export_buffer_reserve(b, n))
		return -1;
	put_safe(b->buf + b->len, s, n);
	b->len += n;
	return 0;
}

static int put_function_name(struct export_buffer *b, struct frame_names *names,
			     const struct profile *p, uint32_t function)
{
	if (names->offset[function] == UINT64_MAX) {
		size_t start = names->text.len;
		if (put_safe_text(&names->text, profile_string(p, p->functions[function].name)))
			return -1;
		names->offset[function] = start;
		names->length[function] = (uint32_t)(names->text.len - start);
	}
	return export_buffer_put(b, names->text.buf + names->offset[function],
				 names->length[function]);
}

static int render_frame(struct export_buffer *b, struct frame_names *names,
			const struct profile *p, const struct export_options *o,
			uint32_t line_index)
{
	const struct profile_line *line = &p->lines[line_index];
	if (put_function_name(b, names, p, line->function))
		return -1;
	if (o->lines && line->line) {
		if (export_buffer_put(b, ":", 1) || export_buffer_reserve(b, 20))
			return -1;
		export_buffer_put_u64(b, line->line);
	}
	/* flamegraph.pl colours frames ending in "_[i]" as inlined. */
	if (o->annotate_inline && line->inlined && export_buffer_put(b, "_[i]", 4))
		return -1;
	return 0;
}

static int render_stack(struct export_buffer *b, struct frame_names *names,
			const struct profile *p, const struct export_options *o,
			const struct export_stack *w, uint32_t *frames, int program_root)
{
	int first = 1;
	if (program_root) {
		const struct profile_thread *t = &p->threads[w->thread];
		char pid[32];
		snprintf(pid, sizeof(pid), "pid %u", t->pid);
		if (put_safe_text(b, t->command ? profile_string(p, t->command) : pid))
			return -1;
		first = 0;
	}
	if (o->thread_roots) {
		if (!first && export_buffer_put(b, ";", 1))
			return -1;
		char title[256];
		profile_thread_title(p, w->thread, title, sizeof(title));
		if (put_safe_text(b, title))
			return -1;
		first = 0;
	}
	uint32_t n = profile_stack_frames(p, w->stack, frames);
	/* A stack the agent could not unwind at all still carries weight;
	 * dropping it would make the flame graph's total disagree with flat. */
	if (n == 0 && first)
		return put_safe_text(b, "[unknown]");
	for (uint32_t i = 0; i < n; i++) {
		if (!first && export_buffer_put(b, ";", 1))
			return -1;
		first = 0;
		if (render_frame(b, names, p, o, frames[i]))
			return -1;
	}
	return 0;
}

struct folded_line {
	size_t offset; /* into the text buffer */
	size_t length;
	int64_t value;
	int64_t base; /* a diff's: base's value (stored negated, written as it was) */
};

static int compare_lines(const void *a, const void *b, void *text)
{
	const char *base = text;
	const struct folded_line *x = a, *y = b;
	return strcmp(base + x->offset, base + y->offset);
}

int export_folded(const struct profile *p, const struct export_options *o, FILE *out)
{
	struct export_stacks sums = { 0 };
	/* A diff's runs are sets of threads: sum by thread to tell them apart. */
	int diff = profile_is_diff(p);
	int programs = profile_many_processes(p); /* each stack rooted at its program */
	int summed = export_sum_stacks(p, o->thread_roots || diff || programs, &sums) == 0;
	uint64_t n = sums.n;
	uint32_t *frames = malloc(((size_t)profile_max_stack_frames(p) + 1) * sizeof(*frames));
	struct folded_line *lines = malloc((n ? n : 1) * sizeof(*lines));
	struct export_buffer text = { 0 }; /* rendered stacks, NUL-terminated, back to back */
	struct frame_names names = { { 0 }, NULL, NULL };
	names.offset = malloc(((size_t)p->nfunctions + 1) * sizeof(*names.offset));
	names.length = malloc(((size_t)p->nfunctions + 1) * sizeof(*names.length));
	int ret = -1;
	errno = ENOMEM; /* what every failure before the writing means */
	if (!summed || !frames || !lines || !names.offset || !names.length)
		goto out;
	for (uint32_t f = 0; f < p->nfunctions; f++)
		names.offset[f] = UINT64_MAX;
	uint64_t nlines = 0;
	for (uint64_t i = 0; i < n; i++) {
		int64_t value = export_stack_value(p, &sums, i, o->value);
		if (!value)
			continue;
		int base = diff && (p->threads[sums.stacks[i].thread].flags & PROFILE_THREAD_DIFF_BASE);
		lines[nlines].offset = text.len;
		lines[nlines].value = base ? 0 : value;
		lines[nlines].base = base ? sat_neg_i64(value) : 0;
		struct export_stack w = sums.stacks[i];
		if (!o->thread_roots && !programs)
			w.thread = 0;
		if (render_stack(&text, &names, p, o, &w, frames, programs) ||
		    export_buffer_reserve(&text, 1))
			goto out;
		lines[nlines].length = text.len - lines[nlines].offset;
		text.buf[text.len++] = '\0';
		nlines++;
	}
	/* Sorting by text gives a stable order and brings equal texts together. */
	qsort_r(lines, nlines, sizeof(*lines), compare_lines, text.buf);
	for (uint64_t i = 0; i < nlines;) {
		const char *stack = text.buf + lines[i].offset;
		int64_t count = 0, base = 0;
		uint64_t j = i;
		while (j < nlines && lines[j].length == lines[i].length &&
		       !memcmp(stack, text.buf + lines[j].offset, lines[i].length)) {
			count = sat_add_i64(count, lines[j].value, NULL);
			base = sat_add_i64(base, lines[j++].base, NULL);
		}
		if (diff && (count || base) && (abs_i64(count) >= o->mincount || abs_i64(base) >= o->mincount)) {
			fwrite(stack, 1, lines[i].length, out);
			fprintf(out, " %" PRId64 " %" PRId64 "\n", base, count);
		} else if (!diff && count && abs_i64(count) >= o->mincount) {
			fwrite(stack, 1, lines[i].length, out);
			fprintf(out, " %" PRId64 "\n", count);
		}
		i = j;
	}
	errno = EIO; /* ferror() without a failing fflush() keeps no errno */
	ret = fflush(out) == 0 && !ferror(out) ? 0 : -1;
out:
	free(names.text.buf);
	free(names.offset);
	free(names.length);
	free(text.buf);
	free(lines);
	free(frames);
	export_stacks_free(&sums);
	return ret;
}
