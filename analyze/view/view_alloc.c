/*
 * view_alloc.c - the allocation views the viewer's L key cycles through:
 * leaks (live at exit), peak (live at the moment of the highest live heap)
 * and temporary (freed before the allocating thread allocated again). Each
 * is the shared filters' view (filter.h: --leaks, --peak, --temporary), a
 * dataset of its own; the viewer ranks the same types in every dataset
 * (alloc_space, alloc_objects), which in a view count its blocks only
 * (leaks: alloc_space is the leaked bytes), and a view's type map says which
 * of its types stands for each (leaks: inuse_space, the same figures named
 * for the view; a view's profile lacks some types), so every ranking, percentage, flat row and source line of the
 * viewer reads the view with no code of its own.
 */
#include "view_internal.h"

#include <stdio.h>
#include <string.h>

#include "filter.h"

static const struct {
	enum filter_view view;
	const char *name, *about, *prefix;
} views[] = {
	{FILTER_VIEW_LEAKS, "leaks", "never freed", "inuse_"},
	{FILTER_VIEW_PEAK, "peak", "live at the peak of the heap", "peak_"},
	{FILTER_VIEW_TEMPORARY, "temporary", "freed at once", "temporary_"},
};

int view_is_alloc(const struct profile *p)
{
	return p->alloc_scheme || profile_find_value_type(p, "alloc_space") != PROFILE_NO_VALUE;
}

int view_is_alloc_type(const struct profile *p, uint32_t type)
{
	const char *name = profile_string(p, p->value_types[type].type);
	size_t n = strlen(name);
	return (n > 6 && !strcmp(name + n - 6, "_space")) || (n > 8 && !strcmp(name + n - 8, "_objects"));
}

/* The type of q that stands for p's type: prefix + what follows "alloc_" in
 * its name (the same figures in the view, named for it), else the type of
 * the same name, else q's view type (its default) when q has none. */
static uint32_t view_type_of(const struct profile *p, uint32_t type, const struct profile *q, const char *prefix)
{
	const char *name = profile_string(p, p->value_types[type].type);
	uint32_t u = PROFILE_NO_VALUE;
	if (!strncmp(name, "alloc_", 6)) {
		char want[80];
		snprintf(want, sizeof(want), "%s%s", prefix, name + 6);
		u = profile_find_value_type(q, want);
	}
	if (u == PROFILE_NO_VALUE)
		u = profile_find_value_type(q, name);
	return u == PROFILE_NO_VALUE ? q->default_value : u;
}

/* Does p have view k's bytes and objects? */
static int has_view(const struct profile *p, size_t k)
{
	char objects[80];
	const char *space = filter_view_type(views[k].view);
	snprintf(objects, sizeof(objects), "%sobjects", views[k].prefix);
	return profile_find_value_type(p, space) != PROFILE_NO_VALUE &&
	       profile_find_value_type(p, objects) != PROFILE_NO_VALUE;
}

uint32_t view_alloc_views(const struct profile *p, enum filter_view *out)
{
	uint32_t n = 0;
	if (!view_is_alloc(p))
		return 0;
	for (size_t k = 0; k < sizeof(views) / sizeof(views[0]); k++)
		if (has_view(p, k))
			out[n++] = views[k].view;
	return n;
}

struct profile *view_alloc_profile(const struct profile *p, enum filter_view view, const char **name,
				   const char **about, uint32_t *type_map)
{
	size_t k = 0;
	while (k + 1 < sizeof(views) / sizeof(views[0]) && views[k].view != view)
		k++;
	*name = views[k].name;
	*about = views[k].about;
	struct filter_options f = {.show_system = 1, .view = view};
	struct profile *q = filter_profile(p, &f);
	for (uint32_t t = 0; t < p->nvalue_types; t++)
		type_map[t] = view_type_of(p, t, q, views[k].prefix);
	return q;
}
