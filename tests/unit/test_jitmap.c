/*
 * test_jitmap.c - the perf map parser (analyze/load/jitmap_parse.c) on known answers:
 * good lines, every kind of bad line (each skipped alone and counted), V8's
 * names split into function, file and line, control characters replaced,
 * the later of two entries at one start kept.
 */
#include <string.h>

#include "jitmap_parse.h"

#include "check.h"

int main(void)
{
	static const char text[] =
		"1000 10 plain_name\n"
		"not a line\n"
		"2000 20 JS:*hotAlpha /tmp/app.js:2:18\n"
		"3000 0 zero_size\n"
		"4000 30\n"
		"ffffffffffffffff 2 wraps\n"
		"12345678901234567 1 too_long\n"
		"2000 20 JS:~hotAlpha /tmp/app.js:2:18\n"
		"5000 8 JS:^ /tmp/anon.js:7\n"
		"6000 8 evil\x1b[2Jname\r\n"
		"7000 8 LazyCompile:*old /x.js:9\n"
		"8000 8 half a line without its newline";
	struct jit_symbols js = {0};
	uint64_t first_bad = 0;
	size_t bad = jit_symbols_add(&js, (const uint8_t *)text, sizeof text - 1, 100, &first_bad);
	jit_symbols_finish(&js);
	CHECKF(bad == 5 && first_bad == 102, "bad %zu first %llu", bad, (unsigned long long)first_bad);
	CHECKF(js.n == 5, "%zu symbols", js.n); /* two lines at 0x2000 make one */
	const struct jit_symbol *s = jit_symbols_find(&js, 0x1008);
	CHECK(s && !strcmp(s->function, "plain_name") && s->file == NULL && s->line == 0);
	CHECK(jit_symbols_find(&js, 0x1010) == NULL && jit_symbols_find(&js, 0xfff) == NULL);
	s = jit_symbols_find(&js, 0x2000);
	CHECK(s && !strcmp(s->function, "hotAlpha") && s->file && !strcmp(s->file, "/tmp/app.js") &&
	      s->line == 2 && !strcmp(s->name, "JS:~hotAlpha /tmp/app.js:2:18")); /* the later line */
	s = jit_symbols_find(&js, 0x5004);
	CHECK(s && !strcmp(s->function, "(anonymous)") && s->line == 7);
	s = jit_symbols_find(&js, 0x6000);
	CHECKF(s && !strcmp(s->name, "evil?[2Jname"), "%s", s ? s->name : "none");
	s = jit_symbols_find(&js, 0x7000);
	CHECK(s && !strcmp(s->function, "old") && !strcmp(s->file, "/x.js") && s->line == 9);
	CHECK(jit_symbols_find(&js, 0x8000) == NULL);
	jit_symbols_free(&js);
	if (check_failures == 0)
		printf("unit_jitmap: all passed\n");
	return check_exit_status();
}
