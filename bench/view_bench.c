/*
 * view_bench.c - drives the viewer's model (analyze/view/view.h) without a
 * terminal: loads a trace as analyze view does, then applies keys and draws
 * the screen after each, timing both, as bench/view-speed reports them. The
 * screen after a key can be printed, which is also how to look at the view
 * of a trace from a script.
 *
 * usage: view_bench [--size COLSxROWS] [--print | --print-all] TRACE [KEY...]
 *
 * A KEY is a character, a name (Up Down Left Right PgUp PgDn Home End Enter
 * Esc Bs) or "type:TEXT" (each character of TEXT). Without keys, a script
 * that uses every key of the viewer. Prints one line per key: the key and
 * the milliseconds its handling and the redraw took; then the slowest.
 */
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "diagnostics.h"
#include "filter.h"
#include "load.h"
#include "view.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static const struct {
	const char *name;
	int key;
} names[] = {
	{"Up", VIEW_KEY_UP},	 {"Down", VIEW_KEY_DOWN}, {"Left", VIEW_KEY_LEFT}, {"Right", VIEW_KEY_RIGHT},
	{"PgUp", VIEW_KEY_PGUP}, {"PgDn", VIEW_KEY_PGDN}, {"Home", VIEW_KEY_HOME}, {"End", VIEW_KEY_END},
	{"Enter", VIEW_KEY_ENTER}, {"Esc", VIEW_KEY_ESC}, {"Bs", VIEW_KEY_BACKSPACE},
};

static const char *const default_script[] = {
	"Down", "Down", "Right", "Down", "Right", "Down", "e", "End", "Home", "PgDn", "PgUp", "u", "u",
	"s", "Down", "Down", "b", "b", "s", "/", "type:main", "Enter", "n", "n", "Home", "o", "n", "PgDn", "q",
	"t", "Down", "Enter", "t", "Home", "Enter", "f", "type:2", "Enter", "f", "type:min 100", "Enter",
	"f", "type:off", "Enter", "L", "c", "?", "Esc", "Left", "Right",
};

static void print_screen(const struct view_screen *s)
{
	char line[8192];
	for (int y = 0; y < s->rows; y++)
		printf("|%s\n", view_screen_line(s, y, line, sizeof(line)));
}

int main(int argc, char **argv)
{
	int cols = 100, rows = 30, print = 0, i = 1;
	setlocale(LC_CTYPE, "C.UTF-8");
	for (; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
		if (!strcmp(argv[i], "--size") && i + 1 < argc && sscanf(argv[i + 1], "%dx%d", &cols, &rows) == 2)
			i++;
		else if (!strcmp(argv[i], "--print"))
			print = 1;
		else if (!strcmp(argv[i], "--print-all"))
			print = 2;
		else
			break;
	}
	if (i >= argc) {
		fputs("usage: view_bench [--size COLSxROWS] [--print | --print-all] TRACE [KEY...]\n", stderr);
		return 2;
	}
	const char *trace = argv[i++];
	struct diag_list warnings = {0};
	struct diag_sink sink = diag_list_sink(&warnings);
	struct load_options lo;
	load_options_init(&lo);
	lo.diag = &sink;
	double t0 = now_ms();
	struct profile *p = load_trace(trace, &lo, NULL);
	if (!p) {
		fprintf(stderr, "view_bench: %s\n", warnings.n ? warnings.texts[warnings.n - 1] : "cannot load");
		return 1;
	}
	double t1 = now_ms();
	uint64_t samples = p->nsamples;
	struct filter_options hide = {0}; /* as analyze view: system frames hidden */
	p = filter_profile_consume(p, &hide);
	struct view_options vo = {.trace = trace, .value = PROFILE_NO_VALUE, .combine = 1, .samples = samples};
	struct view *v = view_new(p, &vo);
	view_add_messages(v, warnings.texts, warnings.n);
	struct view_screen s;
	view_screen_init(&s, rows, cols, 1);
	double t2 = now_ms();
	view_draw(v, &s);
	double t3 = now_ms();
	uint64_t pairs;
	uint32_t stacks, nodes;
	view_stats(v, &pairs, &stacks, &nodes);
	printf("load %.0f ms, view %.0f ms, first draw %.1f ms (%llu samples, %llu (stack, thread) pairs, %u stacks, "
	       "%u tree nodes)\n",
	       t1 - t0, t2 - t1, t3 - t2, (unsigned long long)samples, (unsigned long long)pairs, stacks, nodes);
	const char *const *script = (const char *const *)argv + i;
	int nscript = argc - i;
	if (nscript == 0) {
		script = default_script;
		nscript = (int)(sizeof(default_script) / sizeof(default_script[0]));
	}
	double slowest = 0;
	const char *slowest_key = "";
	for (int k = 0; k < nscript; k++) {
		const char *token = script[k];
		double a = now_ms();
		if (!strncmp(token, "type:", 5)) {
			for (const char *c = token + 5; *c; c++)
				view_key(v, (unsigned char)*c);
		} else {
			int key = (unsigned char)token[0];
			for (size_t n = 0; n < sizeof(names) / sizeof(names[0]); n++)
				if (!strcmp(token, names[n].name))
					key = names[n].key;
			if (view_key(v, key))
				break;
		}
		view_draw(v, &s);
		double ms = now_ms() - a;
		char shown[64];
		snprintf(shown, sizeof(shown), "%s", token);
		for (char *c = shown; *c; c++)
			*c = *c == ' ' ? '_' : *c; /* one word: bench/view-speed reads columns */
		printf("key %-12s %7.2f ms\n", shown, ms);
		if (ms > slowest) {
			slowest = ms;
			slowest_key = token;
		}
		if (print == 2) {
			print_screen(&s);
		}
	}
	printf("slowest key: %s, %.2f ms\n", slowest_key, slowest);
	if (print == 1)
		print_screen(&s);
	view_screen_free(&s);
	view_free(v);
	diag_list_free(&warnings);
	return 0;
}
