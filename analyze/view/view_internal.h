/*
 * view_internal.h - what the view's files (view.h lists them) share: the
 * state of the viewer and the helpers each of them offers the others. Not
 * for other callers, except the unit test, which looks inside.
 */
#ifndef IPSCOPE_VIEW_INTERNAL_H
#define IPSCOPE_VIEW_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "calltree.h"
#include "filter.h"
#include "profile.h"
#include "report.h"
#include "source.h"
#include "view.h"

/* Values of one type for the thread selection, and what is sorted by them. */
struct view_rank {
	int ready;
	int64_t *stack;        /* per stack */
	int64_t *incl;         /* per node, inclusive */
	uint64_t total_abs;    /* what percentages divide */
	uint32_t *order;       /* children sorted by |incl|, largest first, laid out as child_list */
	uint32_t *pos;         /* per node: its index among its parent's sorted children */
	uint8_t *sorted;       /* per node: its children are sorted */
	/* the self-cost rows (s) */
	int flat_ready, flat_by_line;
	uint64_t flat_mincount; /* the mincount the rows were chosen with */
	struct flat_table flat;
	uint32_t *flat_order;  /* rows with self cost, largest first */
	uint32_t nflat;
	/* the per-line costs of the source panel's file */
	int source_ready;
	uint32_t source_file;  /* string id */
	struct source_table source;
};

/* One profile as the viewer ranks it: all of it, or an allocation view. */
struct view_data {
	const char *name;      /* "all", "leaks", "peak", "temporary" */
	const char *about;     /* what its values are, for the header */
	enum filter_view view; /* FILTER_VIEW_NONE for all of it */
	uint32_t type_map[PROFILE_MAX_VALUE_TYPES]; /* the type of p that stands for each ranked type
						       (leaks: alloc_space reads inuse_space) */
	struct profile *p;     /* one sample per (stack, thread) */
	struct calltree *t;    /* frames, and the nodes of every stack some sample names */
	uint32_t *child_start; /* node n's children: child_list[child_start[n] .. child_start[n + 1]) */
	uint32_t *child_list;
	uint8_t *expanded;     /* per node */
	uint32_t selected;     /* the node the cursor is on, kept when the rows change */
	uint32_t flat_selected; /* the flat row the cursor is on, or UINT32_MAX */
	int opened;            /* shown once: its single-child chains were expanded */
	uint8_t *topmost[2];   /* flat_table_topmost by function (0) and by line (1), once made */
	struct view_rank ranks[PROFILE_MAX_VALUE_TYPES]; /* per value type, for the thread selection */
	int64_t totals[PROFILE_MAX_VALUE_TYPES];          /* of the thread selection */
	int saturated;
};

enum view_mode { VIEW_TREE, VIEW_FLAT, VIEW_SOURCE };
enum view_popup { POPUP_NONE, POPUP_HELP, POPUP_THREADS, POPUP_MESSAGES };
enum view_prompt { PROMPT_NONE, PROMPT_SEARCH, PROMPT_FILTER };

/* An entry of the thread picker. */
enum view_choice_kind { CHOICE_ALL, CHOICE_PROCESS, CHOICE_THREAD };
struct view_choice {
	enum view_choice_kind kind;
	uint32_t id; /* a pid, or a thread index */
	int64_t value;
};

struct view {
	struct view_options o;
	char *trace;           /* o.trace's copy */
	char *command;         /* the run's command, escaped */
	struct view_data data[4];
	uint32_t ndata, cur;   /* datasets; the one shown */
	uint32_t ranked[PROFILE_MAX_VALUE_TYPES]; /* the types u cycles through (of data[0]; type_map
						     gives each dataset's own) */
	uint32_t nranked, rank_index;
	uint8_t *thread_mask;  /* per thread of the profile (the same in every dataset); NULL: all */
	struct view_choice thread_choice; /* what the mask stands for */
	enum view_mode mode, source_back; /* source_back: the mode the source panel returns to */
	/* the tree's rows: nodes in the order shown */
	uint32_t *rows, nrows, rows_cap;
	int rows_dirty;
	uint32_t cursor, top;
	/* the flat view */
	uint32_t flat_cursor, flat_top;
	int flat_by_line;
	/* the source panel */
	uint32_t src_file;     /* string id */
	uint32_t src_line, src_cursor, src_top, src_lines;
	struct source_text src_text;
	/* search and filters */
	char query[256];
	uint8_t *frame_match;  /* per frame of data[match_data] */
	uint8_t *subtree_match; /* per node: a match in its subtree (itself included) */
	uint32_t match_data;   /* UINT32_MAX: frame_match not made */
	double noisefloor;
	uint64_t mincount;
	/* input line, pop-ups, status */
	enum view_prompt prompt;
	char input[256];
	size_t input_len;
	enum view_popup popup;
	struct view_choice *choices;
	uint32_t nchoices, popup_cursor, popup_top;
	char **messages;
	size_t nmessages;
	char status[1024];
	int status_error;
	/* from the last draw */
	int page_rows, utf8;
};

/* ---- view_model.c ---- */

static inline struct view_data *view_cur(struct view *v)
{
	return &v->data[v->cur];
}
/* The type ranked by now, in the dataset shown. */
static inline uint32_t view_value(const struct view *v)
{
	return v->data[v->cur].type_map[v->ranked[v->rank_index]];
}
/* The rank of the type shown in the dataset shown (computed if it is not). */
struct view_rank *view_rank(struct view *v);
/* The same for type (the count type behind the shown one, for the filters). */
struct view_rank *view_rank_of(struct view *v, uint32_t type);
/* Sorted children of node (visible or not) and their number. */
const uint32_t *view_children(struct view *v, uint32_t node, uint32_t *n);
/* Is child shown under its parent with the filters (noisefloor, mincount, zero values)? */
int view_child_shown(struct view *v, uint32_t parent, uint32_t child);
/* Rebuild the rows if dirty, the cursor on the selected node (or its nearest shown ancestor). */
void view_rows_update(struct view *v);
/* The next node shown after node in the order of the rows with everything
 * expanded, entering only nodes with within[node] set (NULL: all); 0 at the end. */
uint32_t view_preorder_next(struct view *v, uint32_t node, const uint8_t *within);
/* Select the thread choice c (recomputes the values). */
void view_select_threads(struct view *v, const struct view_choice *c);
/* The thread picker's entries (v->choices). */
void view_make_choices(struct view *v);
/* Choice c as the picker and the title line name it: "all threads", "process 7 (cc1)" (its
 * program, when known), "thread 8 (worker)" with indent; not escaped. Returns buf. */
const char *view_choice_title(struct view *v, const struct view_choice *c, int indent, char *buf,
			      size_t len);
/* The self-cost rows of the rank shown (built if they are not). */
struct view_rank *view_flat(struct view *v);
/* The per-line costs of the source panel's file (v->src_file) in the rank shown (built if they are not). */
struct view_rank *view_source_costs(struct view *v);
/* Show dataset k (its chains of single children expanded the first time). */
void view_switch_data(struct view *v, uint32_t k);
/* Mark everything dirty after the rank or the dataset changed. */
void view_ranking_changed(struct view *v);
/* Is frame an allocation leaf ("malloc 32 B")? */
int view_frame_is_leaf(const struct view_data *d, uint32_t frame);
/* printf into the status line (error: shown as one). */
void view_say(struct view *v, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- view_keys.c ---- */

/* Open the source panel at file:line (string id, line number). */
void view_open_source(struct view *v, uint32_t file, uint32_t line);

/* ---- view_text.c ---- */

/*
 * A function name as the viewer shows it: C++ lambdas and Rust closures
 * shortened ("main::{lambda(int)#1}" to "main::λ#1", "{closure#0}" and
 * "{{closure}}" to λ, a lambda's "::operator()" dropped; "lambda" instead
 * of λ without UTF-8), control characters escaped. Returns buf.
 */
const char *view_short_name(const char *name, int utf8, char *buf, size_t len);
/*
 * Write UTF-8 text s at row y from column x, at most width columns (-1: to
 * the edge), with role attr; code points the screen cannot show (and any
 * control character) become '?'. Returns the columns used.
 */
int view_put(struct view_screen *s, int y, int x, int width, const char *text, uint8_t attr);
/* Same, text right-aligned in width columns. */
int view_put_right(struct view_screen *s, int y, int x, int width, const char *text, uint8_t attr);
/* Fill width columns of row y from x with ch and attr. */
void view_fill(struct view_screen *s, int y, int x, int width, uint32_t ch, uint8_t attr);
/* Set the role of width cells of row y from x, keeping their characters. */
void view_paint(struct view_screen *s, int y, int x, int width, uint8_t attr);
/* Columns text takes on the screen. */
int view_text_width(const struct view_screen *s, const char *text);
/* A cost bar of fraction (0..1) in width columns: blocks in eighths with UTF-8, '#' without. */
void view_bar(struct view_screen *s, int y, int x, int width, double fraction, uint8_t attr);

/* ---- view_flame.c ---- */

/* One box of the flame strip: a node at a level (0: the bottom row), columns [x, x + w). */
struct view_flame_box {
	uint32_t node;
	int level, x, w;
};
/* The boxes of node's subtree in width x levels (node fills the bottom row); their number (<= max). */
uint32_t view_flame_layout(struct view *v, uint32_t node, int width, int levels, struct view_flame_box *out,
			   uint32_t max);
/* Draw the strip of node in rows [y, y + levels) of s. */
void view_flame_draw(struct view *v, struct view_screen *s, int y, int levels, uint32_t node);

/* ---- view_alloc.c ---- */

/* Is p an allocation profile (load_allocs.c's, or one with alloc_space)? */
int view_is_alloc(const struct profile *p);
/* Is type one of an allocation's (X_space or X_objects)? */
int view_is_alloc_type(const struct profile *p, uint32_t type);
/* The views L cycles through beyond all of p, into out (room for 3): those of leaks, peak
 * and temporary whose types p has; their number (0 for a profile without allocations). */
uint32_t view_alloc_views(const struct profile *p, enum filter_view *out);
/* p's view (filter.h; p is unchanged), its name and what it holds, and which of its types
 * stands for each type of p (type_map[t]: leaks maps alloc_space to inuse_space). */
struct profile *view_alloc_profile(const struct profile *p, enum filter_view view, const char **name,
				   const char **about, uint32_t *type_map);

#endif
