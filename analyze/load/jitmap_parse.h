/*
 * jitmap_parse.h - JIT code's symbols from perf maps copied into the trace (its
 * JIT_MAP records): "START SIZE name" lines, hex, as perf documents them.
 * analyze uses them for addresses outside every module.
 */
#ifndef IPSCOPE_JITMAP_PARSE_H
#define IPSCOPE_JITMAP_PARSE_H

#include <stddef.h>
#include <stdint.h>

struct jit_symbol {
	uint64_t start, end;
	const char *name;     /* as the runtime wrote it, control characters replaced */
	const char *function; /* V8's "JS:*f /app.js:2:18" is f, else the name */
	const char *file;     /* V8: /app.js, NULL otherwise */
	uint32_t line;        /* V8: 2 (where f starts), 0 otherwise */
};

struct jit_symbols {
	struct jit_symbol *symbols; /* sorted by start; later lines win on equal starts */
	size_t n, cap;
	char **strings; /* owned copies */
	size_t nstrings, strings_cap;
	uint64_t order; /* lines added so far, to keep later ones on ties */
	uint64_t *orders;
};

/*
 * Parse text (len bytes, lines of one map; a partial last line is ignored
 * and must be handed again with the rest) into js. Returns the lines that
 * are not "START SIZE name" with START and SIZE hex; *first_bad gets the
 * number (1-based, counted from line_base) of the first one.
 */
size_t jit_symbols_add(struct jit_symbols *js, const uint8_t *text, size_t len, uint64_t line_base,
		       uint64_t *first_bad);
/* Sort after the last add. */
void jit_symbols_finish(struct jit_symbols *js);
/* The symbol holding addr, NULL if none. */
const struct jit_symbol *jit_symbols_find(const struct jit_symbols *js, uint64_t addr);
void jit_symbols_free(struct jit_symbols *js);

#endif
