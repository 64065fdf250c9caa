/*
 * diagnostics.c - the message sink (see diagnostics.h) and the two sinks the
 * programs use: stderr for the command line, a list for tests and viewers.
 */
#include "diagnostics.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "alloc.h"
#include "hashmap.h"
#include "terminal.h"

/* The stderr sink's state: one per process, as stderr is. */
struct stderr_state {
	struct progress pr;
	struct hashmap said; /* hashes of the warnings said */
	int quiet;
};

void diag(const struct diag_sink *sink, enum diag_level level, const char *fmt, ...)
{
	if (!sink || !sink->message)
		return;
	char text[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	sink->message(sink->ctx, level, text);
}

void diag_progress(const struct diag_sink *sink, const char *fmt, ...)
{
	if (!sink || !sink->progress)
		return;
	char text[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	sink->progress(sink->ctx, text);
}

static void stderr_message(void *ctx, enum diag_level level, const char *text)
{
	struct stderr_state *st = ctx;
	struct progress *pr = &st->pr;
	if (level == DIAG_WARNING) {
		if (st->quiet)
			return;
		uint64_t h = 1469598103934665603ull; /* FNV-1a: a repeat is the same text */
		for (const unsigned char *c = (const unsigned char *)text; *c; c++)
			h = (h ^ *c) * 1099511628211ull;
		uint32_t *slot = hashmap_slot(&st->said, h);
		if (*slot != HASHMAP_NONE)
			return;
		*slot = 1;
	}
	progress_done(pr);
	/* Paths and names come from the trace: never let them drive the terminal. */
	char safe[4 * 2048 + 1];
	fprintf(stderr, "analyze: %s%s\n", level == DIAG_WARNING ? "warning: " : "",
		escape_text(text, safe, sizeof(safe)));
}

static void stderr_progress(void *ctx, const char *text)
{
	struct progress *pr = &((struct stderr_state *)ctx)->pr;
	if (!*text) {
		progress_done(pr);
		progress_init(pr);
		return;
	}
	char safe[4 * 512 + 1];
	progress_update(pr, "analyze: %s", escape_text(text, safe, sizeof(safe)));
}

static struct stderr_state *stderr_state(void)
{
	static struct stderr_state st;
	static int started;
	if (!started) {
		progress_init(&st.pr);
		hashmap_init(&st.said, 16);
		started = 1;
	}
	return &st;
}

const struct diag_sink *diag_stderr_sink(void)
{
	static struct diag_sink sink = { stderr_message, stderr_progress, NULL };
	sink.ctx = stderr_state();
	return &sink;
}

void diag_stderr_set_quiet(int quiet)
{
	stderr_state()->quiet = quiet;
}

static void list_message(void *ctx, enum diag_level level, const char *text)
{
	struct diag_list *l = ctx;
	ALLOC_GROW(l->texts, l->n + 1, l->cap);
	l->levels = realloc_or_abort(l->levels, l->cap * sizeof(*l->levels));
	l->texts[l->n] = strdup_or_abort(text);
	l->levels[l->n++] = level;
}

struct diag_sink diag_list_sink(struct diag_list *list)
{
	return (struct diag_sink){ list_message, NULL, list };
}

void diag_list_free(struct diag_list *list)
{
	for (size_t i = 0; i < list->n; i++)
		free(list->texts[i]);
	free(list->texts);
	free(list->levels);
	list->texts = NULL;
	list->levels = NULL;
	list->n = list->cap = 0;
}
