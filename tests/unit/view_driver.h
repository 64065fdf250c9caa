/*
 * view_driver.h - driving the viewer's model (analyze/view/view.h) in a unit
 * test: the screen draws go to, keys, and the rows that hold given texts.
 * Static: included by one test file per executable (view_test.c,
 * view_alloc_test.c), each with its own screen and check counts.
 */
#ifndef IPSCOPE_TESTS_VIEW_DRIVER_H
#define IPSCOPE_TESTS_VIEW_DRIVER_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "view.h"
#include "view_internal.h"

#include "check.h"

static struct view_screen screen;

static void draw(struct view *v)
{
	view_draw(v, &screen);
}

static void keys(struct view *v, const char *s)
{
	for (; *s; s++)
		view_key(v, (unsigned char)*s);
}

static void key(struct view *v, int k)
{
	view_key(v, k);
}

/* The screen row holding every one of the (NULL-terminated) texts, or NULL. */
static const char *row_with(const char *first, ...)
{
	static char line[8192];
	for (int y = 0; y < screen.rows; y++) {
		view_screen_line(&screen, y, line, sizeof(line));
		va_list ap;
		va_start(ap, first);
		int all = 1;
		for (const char *t = first; t; t = va_arg(ap, const char *))
			all = all && strstr(line, t);
		va_end(ap);
		if (all)
			return line;
	}
	return NULL;
}

static void dump(const char *why)
{
	char line[8192];
	fprintf(stderr, "--- screen (%s):\n", why);
	for (int y = 0; y < screen.rows; y++)
		fprintf(stderr, "|%s\n", view_screen_line(&screen, y, line, sizeof(line)));
}

#define ROW(...) row_with(__VA_ARGS__, NULL)
#define EXPECT_ROW(why, ...)                                                                                   \
	do {                                                                                                   \
		if (!ROW(__VA_ARGS__)) {                                                                       \
			CHECKF(0, "%s: no row with %s", why, #__VA_ARGS__);                                    \
			dump(why);                                                                             \
		}                                                                                              \
	} while (0)
#define EXPECT_NO_ROW(why, ...)                                                                                \
	do {                                                                                                   \
		if (ROW(__VA_ARGS__)) {                                                                        \
			CHECKF(0, "%s: a row with %s", why, #__VA_ARGS__);                                     \
			dump(why);                                                                             \
		}                                                                                              \
	} while (0)

/* The row the cursor is on holds text. */
static int selected_has(const char *text)
{
	char line[8192];
	for (int y = 0; y < screen.rows; y++)
		if (screen.cells[(size_t)y * (size_t)screen.cols].attr == VA_SELECTED)
			return strstr(view_screen_line(&screen, y, line, sizeof(line)), text) != NULL;
	return 0;
}

static struct view *new_view(struct profile *p)
{
	struct view_options o = {.trace = "t.zst", .value = PROFILE_NO_VALUE, .combine = 1};
	return view_new(p, &o);
}

#endif
