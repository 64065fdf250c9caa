/*
 * load_jit.c - the loader's consumer of JIT_MAP records (see
 * load_internal.h): the perf maps collect copied into the trace become the
 * resolver's names for addresses outside every module. A map's lines that
 * are not "START SIZE name" are skipped, and said once per map.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "diagnostics.h"
#include "jitmap_parse.h"
#include "load_internal.h"

struct jit_file {
	char *path;
	uint32_t pid;
	uint64_t lines, bad, first_bad;
};

struct jit_state {
	struct jit_symbols *symbols; /* handed to the resolver by finish */
	struct jit_file *files;
	uint32_t nfiles, files_cap;
};

static void *jit_start(struct loader *L)
{
	(void)L;
	struct jit_state *s = calloc_or_abort(1, sizeof(*s));
	s->symbols = calloc_or_abort(1, sizeof(*s->symbols));
	return s;
}

static void jit_record(struct loader *L, void *state, const struct trace_record *rec)
{
	(void)L;
	struct jit_state *s = state;
	const struct trace_jit_map *j = &rec->u.jit_map;
	struct jit_file *f = NULL;
	for (uint32_t i = 0; i < s->nfiles && !f; i++)
		if (s->files[i].pid == j->pid && !strcmp(s->files[i].path, j->path))
			f = &s->files[i];
	if (!f) {
		ALLOC_GROW(s->files, (uint64_t)s->nfiles + 1, s->files_cap);
		f = &s->files[s->nfiles++];
		*f = (struct jit_file){.path = strdup_or_abort(j->path), .pid = j->pid};
	}
	uint64_t first_bad = 0;
	size_t bad = jit_symbols_add(s->symbols, j->text, j->text_len, f->lines, &first_bad);
	if (bad && !f->bad)
		f->first_bad = first_bad;
	f->bad += bad;
	for (uint32_t i = 0; i < j->text_len; i++)
		f->lines += j->text[i] == '\n';
}

static void jit_finish(struct loader *L, void *state)
{
	struct jit_state *s = state;
	for (uint32_t i = 0; i < s->nfiles; i++) {
		const struct jit_file *f = &s->files[i];
		if (f->bad)
			diag(L->diag, DIAG_WARNING,
			     "%s (pid %u, copied into the trace): %" PRIu64 " of %" PRIu64
			     " lines are not 'START SIZE name' in hex (the first: line %" PRIu64 "): skipped",
			     f->path, f->pid, f->bad, f->lines, f->first_bad);
	}
	jit_symbols_finish(s->symbols);
	if (s->symbols->n) {
		resolver_set_jit(L->resolver, s->symbols);
		s->symbols = NULL;
	}
}

static void jit_free(void *state)
{
	struct jit_state *s = state;
	if (s->symbols) {
		jit_symbols_free(s->symbols);
		free(s->symbols);
	}
	for (uint32_t i = 0; i < s->nfiles; i++)
		free(s->files[i].path);
	free(s->files);
	free(s);
}

static const enum trace_type jit_types[] = { TRACE_JIT_MAP, 0 };
const struct record_consumer load_jit_consumer = {
	"jit", jit_types, jit_start, jit_record, jit_finish, NULL, jit_free,
};
