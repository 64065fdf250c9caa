/*
 * load_alloc_leaves.c - the frames of allocation profiles (load_allocs.c
 * builds its rows on these): what was allocated, and whose frames are the
 * allocator's.
 *
 * Leaves: below each stack's deepest frame, a frame naming what was
 * allocated ("malloc 32 B", "calloc 1 MiB", "realloc 4-8 KiB"; "new" or
 * "new[]" when the allocation came through C++'s operator new), flagged
 * PROFILE_FUNCTION_ALLOC_LEAF so that flat charges it to the frame above.
 * Allocator frames at the leaf side (libc's malloc family and internals,
 * operator new/new[]/delete, their PLT stubs) are stripped, so a branch ends
 * at the program's allocating frame: the answer to "which line of my code
 * allocates", for every report and exporter alike.
 */
#include "load_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

static const char *const kind_names[] = {
	[TRACE_HEAP_MALLOC] = "malloc",
	[TRACE_HEAP_CALLOC] = "calloc",
	[TRACE_HEAP_REALLOC] = "realloc",
	[TRACE_HEAP_REALLOCARRAY] = "reallocarray",
	[TRACE_HEAP_POSIX_MEMALIGN] = "posix_memalign",
	[TRACE_HEAP_ALIGNED_ALLOC] = "aligned_alloc",
	[TRACE_HEAP_MEMALIGN] = "memalign",
	[TRACE_HEAP_VALLOC] = "valloc",
	[TRACE_HEAP_PVALLOC] = "pvalloc",
};

int alloc_allocator_function(const char *name, const char **new_kind)
{
	static const char *const names[] = {
		"malloc", "calloc", "realloc", "reallocarray", "free", "posix_memalign", "aligned_alloc",
		"memalign", "valloc", "pvalloc", "cfree", "__libc_malloc", "__libc_calloc", "__libc_realloc",
		"__libc_free", "__libc_memalign", "__libc_valloc", "__libc_pvalloc", "__posix_memalign",
		"_int_malloc", "_int_realloc", "_int_memalign", "_int_free", "_mid_memalign", "tcache_init",
		"malloc_hook_ini", "realloc_hook_ini", "__libc_reallocarray", "__libc_alloc_buffer_allocate",
	};
	size_t len = strlen(name);
	if (len > 4 && !strcmp(name + len - 4, "@plt"))
		len -= 4;
	if (!strncmp(name, "operator new[]", 14) || !strncmp(name, "operator new [", 14)) {
		*new_kind = "new[]";
		return 1;
	}
	if (!strncmp(name, "operator new", 12)) {
		if (!*new_kind)
			*new_kind = "new";
		return 1;
	}
	if (!strncmp(name, "operator delete", 15))
		return 1;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == len && !strncmp(name, names[i], len))
			return 1;
	return 0;
}

static void format_size(char *buf, size_t len, uint64_t size)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	int u = 0;
	while (u < 6 && size >= 1024 && size % 1024 == 0) {
		size /= 1024;
		u++;
	}
	snprintf(buf, len, "%" PRIu64 " %s", size, units[u]);
}

/* "4-8 KiB", "512 B-1 KiB": the range [2^k, 2^(k+1)). */
static void format_range(char *buf, size_t len, int k)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	int u = k / 10, lo = k % 10, hi_u = (k + 1) / 10, hi = (k + 1) % 10;
	if (u == hi_u)
		snprintf(buf, len, "%llu-%llu %s", 1ull << lo, 1ull << hi, units[u]);
	else
		snprintf(buf, len, "%llu %s-%llu %s", 1ull << lo, units[u], 1ull << hi, units[hi_u]);
}

/* The leaf of an allocation: "malloc 32 B", "realloc 4-8 KiB", "new 24 B". */
static void leaf_name(uint32_t kind, uint64_t size_key, const char *new_kind, char *buf, size_t len)
{
	const char *what = new_kind ? new_kind : kind < sizeof(kind_names) / sizeof(kind_names[0]) &&
						      kind_names[kind] ? kind_names[kind] : "alloc";
	char size[48];
	if (size_key & ALLOC_SIZE_CLASS)
		format_range(size, sizeof(size), (int)(size_key & 63));
	else
		format_size(size, sizeof(size), size_key);
	snprintf(buf, len, "%s %s", what, size);
}

static const char *function_name(const struct profile *p, uint32_t loc)
{
	const struct profile_location *l = &p->locations[loc];
	const struct profile_line *line = &p->lines[l->first_line + l->nlines - 1];
	return profile_string(p, p->functions[line->function].name);
}

/* A leaf's location, with a line of its own (each location's lines are its own). */
static uint32_t leaf_location(struct profile *p, uint32_t function)
{
	struct profile_line line = { .function = function };
	uint32_t first = profile_add_line(p, &line);
	struct profile_location loc = { .address = 0, .module = UINT32_MAX, .first_line = first, .nlines = 1 };
	return profile_add_location(p, &loc);
}

/* Whether a sample's stack is the marker's: one frame, in the agent's module (unsymbolized, as
 * analyze info loads, its name is unknown; nothing else the agent writes is one agent frame). */
static int marker_stack(const struct profile *p, const struct profile_stack *s)
{
	if (s->depth != 1)
		return 0;
	const struct profile_location *l = &p->locations[p->stack_locations[s->first]];
	if (l->module == UINT32_MAX || l->module >= p->nmodules)
		return 0;
	return trace_path_is_agent(profile_string(p, p->modules[l->module].path));
}

/* The time spent in the agent's hooks is the profiler's: a frame of its own, shown with -C off. */
void alloc_name_marker(struct profile *p, struct load_stats *stats)
{
	int named = 0;
	uint32_t marker = 0;
	for (uint32_t f = 0; f < p->nfunctions; f++)
		if (!strcmp(profile_string(p, p->functions[f].name), TRACE_AGENT_ALLOC_MARKER)) {
			marker = profile_intern(p, "[ipscope: recording allocations]");
			p->functions[f].name = marker;
			p->functions[f].flags &= ~PROFILE_FUNCTION_SYSTEM;
			named = 1;
		}
	/* Decided once per stack: per sample, the four look-ups behind it were
	 * a sixth of analyze flat on a CPU trace of 10 million samples. */
	uint8_t *is_marker = calloc_or_abort(p->nstacks ? p->nstacks : 1, 1);
	for (uint32_t k = 0; k < p->nstacks; k++) {
		const struct profile_stack *s = &p->stacks[k];
		if (!s->depth)
			continue;
		uint32_t loc = p->stack_locations[s->first];
		const struct profile_location *l = &p->locations[loc];
		uint32_t f = p->lines[l->first_line].function;
		is_marker[k] = named ? p->functions[f].name == marker : marker_stack(p, s);
	}
	for (uint64_t i = 0; i < p->nsamples; i++)
		if (is_marker[p->samples[i].stack])
			stats->hook_samples += (uint64_t)p->values[i * p->ncolumns];
	free(is_marker);
}

uint32_t alloc_leaf_stack(struct profile *p, uint32_t stack, uint32_t kind, uint64_t size_key, int no_leaves,
			  struct hashmap *memo, uint32_t **locs, uint32_t *cap)
{
	const struct profile_stack *ps = &p->stacks[stack];
	const char *new_kind = NULL;
	uint32_t skip = 0;
	while (skip < ps->depth && skip + 1 < ps->depth + 1 &&
	       alloc_allocator_function(function_name(p, p->stack_locations[ps->first + skip]), &new_kind))
		skip++;
	if (skip == ps->depth && skip)
		skip--; /* nothing but the allocator: keep its outermost frame */
	if (no_leaves && !skip)
		return stack;
	uint32_t leaf = UINT32_MAX;
	if (!no_leaves) {
		char name[96];
		leaf_name(kind, size_key, new_kind, name, sizeof(name));
		leaf = profile_intern(p, name);
	}
	/* Keys are exact: (UINT32_MAX, leaf) for a leaf's location (no stack has that id), (stack, leaf)
	 * for a stack. Each slot is filled before the next look-up, which may move the table.
	 * One function and location per leaf name, shared by every stack that ends in it: a tree merges
	 * frames by function, and stacks that differ only in stripped allocator frames (a handler's
	 * malloc interrupting different libc calls) end in one leaf, not in several "malloc 200 B". */
	uint32_t leaf_loc = UINT32_MAX;
	if (leaf != UINT32_MAX) {
		uint32_t *leaf_slot = hashmap_slot(memo, (uint64_t)UINT32_MAX << 32 | leaf);
		if (*leaf_slot == HASHMAP_NONE) {
			struct profile_function f = { .name = leaf, .system_name = leaf, .module = UINT32_MAX,
						      .flags = PROFILE_FUNCTION_ALLOC_LEAF };
			*leaf_slot = leaf_location(p, profile_add_function(p, &f));
		}
		leaf_loc = *leaf_slot;
	}
	uint32_t *slot = hashmap_slot(memo, (uint64_t)stack << 32 | leaf);
	if (*slot != HASHMAP_NONE)
		return *slot;
	uint32_t depth = ps->depth - skip + (leaf != UINT32_MAX);
	ALLOC_GROW(*locs, depth ? depth : 1, *cap);
	uint32_t n = 0;
	if (leaf_loc != UINT32_MAX)
		(*locs)[n++] = leaf_loc;
	for (uint32_t i = skip; i < ps->depth; i++)
		(*locs)[n++] = p->stack_locations[ps->first + i];
	/* profile_add_stack may move p->stacks: ps is not used after this. */
	return *slot = profile_add_stack(p, *locs, n);
}
