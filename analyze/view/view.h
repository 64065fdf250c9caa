/*
 * view.h - the model of "analyze view", the full-screen viewer, with no
 * terminal in it: what is shown (the call tree ranked by a value, the flat
 * self-cost rows, a source panel, a flame graph strip, pop-ups), how keys
 * change it, and the screen it draws into, a grid of character cells with
 * roles for attributes. The ncurses front end (view_tui.c) only turns key
 * presses into view_key calls and paints the grid; the unit tests and
 * bench/view-speed drive the same model without a terminal.
 *
 *   view_model.c  building: one sample per (stack, thread), the call tree
 *                 of every stack, values per type and thread selection,
 *                 sorted children, the rows the expansion shows
 *   view_keys.c   what each key does: moving, expanding, search, the
 *                 other unit, the flat view, threads, filters, pop-ups
 *   view_draw.c   the screen: header, rows, source panel, status, pop-ups
 *   view_flame.c  the flame graph strip's layout and drawing
 *   view_text.c   names as the viewer shows them, the cell grid
 *   view_alloc.c  the allocation views (leaks, peak, temporary) that L cycles through
 *
 * Speed: everything a key does works on the aggregated model (distinct
 * stacks and tree nodes), never on the raw samples, which are summed per
 * (stack, thread) once when the view is built.
 */
#ifndef IPSCOPE_VIEW_H
#define IPSCOPE_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "diagnostics.h"
#include "filter.h"
#include "profile.h"

/* Keys beyond Unicode: what the front end maps its special keys to. */
enum {
	VIEW_KEY_UP = 0x110000,
	VIEW_KEY_DOWN,
	VIEW_KEY_LEFT,
	VIEW_KEY_RIGHT,
	VIEW_KEY_PGUP,
	VIEW_KEY_PGDN,
	VIEW_KEY_HOME,
	VIEW_KEY_END,
	VIEW_KEY_ENTER,
	VIEW_KEY_ESC,
	VIEW_KEY_BACKSPACE,
};

/* Roles of cells; the front end picks colors (or bold, reverse) for them. */
enum view_attr {
	VA_NORMAL,
	VA_TITLE,    /* the header's first line */
	VA_DIM,      /* file:line, column headings */
	VA_BOLD,
	VA_SELECTED, /* the cursor's row */
	VA_MATCH,    /* a search match */
	VA_BAR,      /* the cost bars */
	VA_LEAF,     /* "what was allocated" leaves */
	VA_INLINED,
	VA_HEAT1, VA_HEAT2, VA_HEAT3, VA_HEAT4, /* heat_level 1..4 */
	VA_FLAME0, VA_FLAME1, VA_FLAME2, VA_FLAME3, /* flame graph boxes, alternating */
	VA_STATUS,   /* the status line */
	VA_ERROR,    /* a message that something failed */
	VA_POPUP,    /* pop-up frames and text */
	VA_NATTRS
};

/* One cell: a Unicode code point (0: the right half of a wide one) and its role. */
struct view_cell {
	uint32_t ch;
	uint8_t attr;
};

struct view_screen {
	int rows, cols;
	int utf8;                /* the terminal shows UTF-8: else everything is ASCII */
	struct view_cell *cells; /* rows * cols */
	int cursor_y, cursor_x;  /* where the front end puts the cursor (-1: hidden) */
};

/* A screen of rows x cols (at least 1 x 1), blank. */
void view_screen_init(struct view_screen *s, int rows, int cols, int utf8);
void view_screen_free(struct view_screen *s);
/* Row y as UTF-8 text, trailing blanks cut, into buf; returns buf. */
const char *view_screen_line(const struct view_screen *s, int y, char *buf, size_t len);

struct view_options {
	const char *trace;       /* its name, for the title */
	uint32_t value;          /* type ranked first; PROFILE_NO_VALUE: what a viewer shows of the default */
	int combine;             /* 0: every address apart (--no-combine) */
	int full_paths;
	double noisefloor;       /* as tree's; 0: off */
	uint64_t mincount;       /* 0: off */
	enum filter_view view;   /* the allocation view shown first (--leaks...); NONE: all */
	const char *const *search_dirs; /* where moved sources are looked for (--search-dir) */
	int nsearch_dirs;
	uint64_t samples;        /* sample records loaded, for the header (0: p's) */
	const struct diag_sink *diag; /* progress while building; NULL: none */
};

struct view;

/*
 * The view of p, which it takes over (freed by view_free): p is summed per
 * (stack, thread), and for an allocation profile its leaks, peak and
 * temporary views are made first (view_alloc.c). Never fails (aborts on out of memory).
 */
struct view *view_new(struct profile *p, const struct view_options *o);
void view_free(struct view *v);

/* Loading's warnings, shown on request (the w key); texts are copied. */
void view_add_messages(struct view *v, char *const *texts, size_t n);

/* Apply one key press (a character or VIEW_KEY_*): 1 when the viewer should quit, else 0. */
int view_key(struct view *v, int key);

/* What the view is built of, for the benchmark: (stack, thread) pairs, distinct stacks, tree nodes. */
void view_stats(const struct view *v, uint64_t *pairs, uint32_t *stacks, uint32_t *nodes);

/* Draw the current state into s (any size: small screens drop the flame strip first). */
void view_draw(struct view *v, struct view_screen *s);

#endif
