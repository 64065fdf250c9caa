/*
 * view_alloc_test.c - the viewer's model (analyze/view/view.h) on a hand-built
 * allocation profile in the shape analyze/load/load_allocs.c gives one
 * (profile_builder.h: known answers there): the rows by bytes, by counts
 * (u), down to the "what was allocated" leaves, the source panel opened on
 * a leaf, the flat rows charging leaves to the allocating frame (s), the
 * views L cycles through (leaks, peak, temporary) and --leaks starting in
 * one. e2e_view_alloc does the same on a real collect --allocs trace.
 */
#include <locale.h>

#include "filter.h"
#include "profile_builder.h"
#include "view_driver.h"

static void test_alloc(void)
{
	struct view *v = new_view(build_alloc_workload());
	draw(v);
	/* By bytes: the big allocations lead; the header has both units. */
	EXPECT_ROW("alloc start", "alloc_objects 103, alloc_space 3.0 MiB", "by alloc_space");
	EXPECT_ROW("alloc start", "3.0 MiB  99.9%", "main  app.c:6");
	EXPECT_ROW("alloc start", "3.1 KiB   0.1%", "main  app.c:5");
	CHECK(selected_has("main  app.c:6"));
	/* u: by counts the small ones lead, every percentage recomputed. */
	keys(v, "u");
	draw(v);
	EXPECT_ROW("alloc u", "by alloc_objects");
	EXPECT_ROW("alloc u", "100  97.1%", "main  app.c:5");
	EXPECT_ROW("alloc u", "3   2.9%", "main  app.c:6");
	CHECK(selected_has("main  app.c:6")); /* the selection stays, its row moved */
	/* Down to the leaves: main:5, make_small, then what was allocated. */
	key(v, VIEW_KEY_HOME);
	key(v, VIEW_KEY_RIGHT);
	key(v, VIEW_KEY_RIGHT);
	key(v, VIEW_KEY_RIGHT);
	draw(v);
	EXPECT_ROW("leaves", "100  97.1%", "make_small  app.c:11");
	EXPECT_ROW("leaves", "100  97.1%", "malloc 32 B");
	keys(v, "u");
	draw(v);
	EXPECT_ROW("leaf bytes", "3.1 KiB   0.1%", "malloc 32 B");
	/* Enter on a leaf: the allocating line's source (app.c is not on disk: a note, costs by line). */
	key(v, VIEW_KEY_DOWN);
	key(v, VIEW_KEY_DOWN);
	draw(v);
	CHECK(selected_has("malloc 32 B"));
	key(v, VIEW_KEY_ENTER);
	draw(v);
	EXPECT_ROW("leaf source", "source file not found: app.c");
	EXPECT_ROW("leaf source", "11", "3.1 KiB   0.1%");
	EXPECT_ROW("leaf source", "21", "3.0 MiB  99.9%");
	keys(v, "q");
	/* s: the leaves' costs are the allocating frames' self. */
	keys(v, "s");
	draw(v);
	EXPECT_ROW("alloc flat", "3.0 MiB  99.9%", "make_big  app.c:21");
	EXPECT_ROW("alloc flat", "3.1 KiB   0.1%", "make_small  app.c:11");
	EXPECT_NO_ROW("alloc flat", "malloc 32 B");
	keys(v, "u");
	draw(v);
	EXPECT_ROW("alloc flat counts", "100  97.1%", "make_small  app.c:11");
	keys(v, "su");
	/* L: leaks (41 blocks, 1 MiB + 1280 B), the peak (all 103 live), temporary (none), then all. */
	keys(v, "L");
	draw(v);
	EXPECT_ROW("leaks", "leaks", "tree");
	EXPECT_ROW("leaks", "never freed: inuse_objects 41, inuse_space 1.0 MiB", "by inuse_space");
	EXPECT_ROW("leaks", "1.0 MiB  99.9%", "main  app.c:6");
	EXPECT_ROW("leaks", "1.2 KiB   0.1%", "main  app.c:5");
	keys(v, "u");
	draw(v);
	EXPECT_ROW("leaks by count", "40  97.6%", "main  app.c:5");
	EXPECT_ROW("leaks by count", "1   2.4%", "main  app.c:6");
	keys(v, "uL");
	draw(v);
	EXPECT_ROW("peak", "live at the peak of the heap: peak_objects 103, peak_space 3.0 MiB");
	EXPECT_ROW("peak", "3.0 MiB  99.9%", "main  app.c:6");
	/* s in a view: the view's bytes at the allocating lines. */
	keys(v, "s");
	draw(v);
	EXPECT_ROW("peak flat", "3.0 MiB  99.9%", "make_big  app.c:21");
	keys(v, "s");
	keys(v, "L");
	draw(v);
	EXPECT_ROW("temporary", "temporary", "freed at once: temporary_objects 0, temporary_space 0 B");
	EXPECT_NO_ROW("temporary", "main  app.c:");
	keys(v, "u");
	key(v, VIEW_KEY_DOWN);
	key(v, VIEW_KEY_RIGHT);
	keys(v, "seu");
	draw(v); /* nothing to show is no crash */
	keys(v, "s");
	keys(v, "L");
	draw(v);
	EXPECT_ROW("all", "alloc_objects 103, alloc_space 3.0 MiB");
	EXPECT_NO_ROW("all", "never freed");
	view_free(v);
	/* --leaks: the viewer starts on that view, L still cycles. */
	struct view_options o = {.trace = "allocs.zst", .value = PROFILE_NO_VALUE, .combine = 1,
				 .view = FILTER_VIEW_LEAKS};
	v = view_new(build_alloc_workload(), &o);
	draw(v);
	EXPECT_ROW("--leaks", "never freed: inuse_objects 41, inuse_space 1.0 MiB");
	keys(v, "L");
	draw(v);
	EXPECT_ROW("--leaks L", "live at the peak of the heap");
	view_free(v);
}

int main(void)
{
	setlocale(LC_CTYPE, "C.UTF-8");
	view_screen_init(&screen, 30, 100, 1);
	test_alloc();
	view_screen_free(&screen);
	return check_exit_status();
}
