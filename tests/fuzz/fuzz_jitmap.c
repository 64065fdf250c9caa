/*
 * fuzz_jitmap.c - libFuzzer target for the perf-map parser (analyze/load/jitmap_parse.c,
 * ctest fuzz_jitmap, built with -DIPSCOPE_FUZZ=ON and clang). A JIT map is
 * text the profiled program wrote, copied into the trace as it was.
 *
 * The first byte chooses where the text is cut in two, as a map arrives in
 * several JIT_MAP records: the partial line before the cut is handed again
 * with the rest, the way the loader does. Beyond "no crash", it checks the
 * parser's contract: symbols sorted by start with start < end, names free
 * of control characters, bad-line counts within the lines given, and every
 * symbol found again by its own start address.
 */
#include "jitmap_parse.h"

#include <stdint.h>
#include <string.h>

static void require(int ok)
{
	if (!ok)
		__builtin_trap();
}

static size_t lines_in(const uint8_t *text, size_t len)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		n += text[i] == '\n';
	return n;
}

static void check_name(const char *s)
{
	require(s != NULL);
	for (; *s; s++)
		require((unsigned char)*s >= 0x20 && *s != 0x7f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size); /* libFuzzer calls it */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t cut = data[0] % size;
	const uint8_t *text = data + 1;
	size_t len = size - 1;
	if (cut > len)
		cut = len;
	struct jit_symbols js;
	memset(&js, 0, sizeof(js));
	/* Whole lines of the first part, then the partial one with the rest. */
	size_t whole = cut;
	while (whole > 0 && text[whole - 1] != '\n')
		whole--;
	uint64_t first_bad = 0;
	size_t bad = jit_symbols_add(&js, text, whole, 0, &first_bad);
	size_t lines = lines_in(text, whole);
	require(bad <= lines);
	require(!bad || (first_bad >= 1 && first_bad <= lines));
	bad = jit_symbols_add(&js, text + whole, len - whole, lines, &first_bad);
	size_t rest = lines_in(text, len) - lines;
	require(bad <= rest);
	require(!bad || (first_bad > lines && first_bad <= lines + rest));
	jit_symbols_finish(&js);
	for (size_t i = 0; i < js.n; i++) {
		const struct jit_symbol *s = &js.symbols[i];
		require(s->start < s->end);
		require(i == 0 || js.symbols[i - 1].start <= s->start);
		check_name(s->name);
		check_name(s->function);
		if (s->file)
			check_name(s->file);
		const struct jit_symbol *found = jit_symbols_find(&js, s->start);
		require(found != NULL && found->start <= s->start && s->start < found->end);
	}
	jit_symbols_find(&js, 0);
	jit_symbols_find(&js, UINT64_MAX);
	jit_symbols_free(&js);
	return 0;
}
