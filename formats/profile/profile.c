/*
 * profile.c - the profile data model's storage: growable tables and string
 * interning (see profile.h for the model itself), value types and their
 * totals, and the walks every report and exporter shares: a stack as
 * root-first frames, a thread's title.
 *
 * Interning is on the hot path of loading (every symbolized frame interns its
 * function and file names) and of every filter that rebuilds a profile: the
 * one hash table keyed by the string's 64-bit hash, so a probe compares bytes
 * only on a full hash match. String bytes live in large arena blocks, not one
 * malloc per string.
 */
#include "profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "arith.h"
#include "hashmap.h"

#define ARENA_BLOCK_SIZE (256u * 1024u)

struct arena_block {
	struct arena_block *next;
	size_t used;
	size_t size;
	char data[];
};

/* Strings by hash (hashmap.h); bytes in arena blocks, not one malloc each. */
struct string_index {
	struct hashmap map;
	struct arena_block *arena;
	const char *seek;
	size_t seek_len;
	const struct profile *p;
};

/* Abort with a message when a 32-bit table would overflow its ids. */
static void check_id_room(uint32_t n, const char *table)
{
	if (n >= UINT32_MAX - 1)
		abort_with_message("profile %s table overflow", table);
}

static char *arena_copy(struct string_index *ix, const char *s, size_t n)
{
	struct arena_block *b = ix->arena;
	if (!b || b->size - b->used < n + 1) {
		size_t size = n + 1 > ARENA_BLOCK_SIZE ? n + 1 : ARENA_BLOCK_SIZE;
		b = malloc(sizeof(*b) + size);
		if (!b)
			abort_out_of_memory();
		b->next = ix->arena;
		b->used = 0;
		b->size = size;
		ix->arena = b;
	}
	char *dst = b->data + b->used;
	memcpy(dst, s, n);
	dst[n] = '\0';
	b->used += n + 1;
	return dst;
}

struct profile *profile_new(void)
{
	struct profile *p = calloc(1, sizeof(*p));
	struct string_index *ix = calloc(1, sizeof(*ix));
	if (!p || !ix) {
		free(p);
		free(ix);
		return NULL;
	}
	p->string_index = ix;
	ix->p = p;
	hashmap_init(&ix->map, 512);
	ALLOC_GROW(p->strings, 1024, p->strings_capacity);
	p->strings[0] = arena_copy(ix, "", 0);
	p->nstrings = 1;
	p->default_value = PROFILE_NO_VALUE;
	p->period_type = PROFILE_NO_VALUE;
	return p;
}

void profile_free(struct profile *p)
{
	if (!p)
		return;
	struct string_index *ix = p->string_index;
	if (ix) {
		for (struct arena_block *b = ix->arena, *next; b; b = next) {
			next = b->next;
			free(b);
		}
		hashmap_free(&ix->map);
		free(ix);
	}
	free(p->strings);
	free(p->modules);
	free(p->functions);
	free(p->lines);
	free(p->locations);
	free(p->stacks);
	free(p->stack_locations);
	free(p->threads);
	free(p->samples);
	free(p->values);
	free(p);
}

static int string_equal(const void *ctx, uint32_t id)
{
	const struct string_index *ix = ctx;
	const char *str = ix->p->strings[id];
	return !strncmp(str, ix->seek, ix->seek_len) && str[ix->seek_len] == '\0';
}

uint32_t profile_intern_n(struct profile *p, const char *s, size_t n)
{
	if (n == 0)
		return 0;
	if (n > UINT32_MAX - 1)
		abort_with_message("string too long to intern");
	struct string_index *ix = p->string_index;
	uint64_t h = hash_bytes(s, n);
	ix->seek = s;
	ix->seek_len = n;
	uint32_t id = hashmap_find(&ix->map, h, string_equal, ix);
	if (id != HASHMAP_NONE)
		return id;
	id = p->nstrings;
	check_id_room(id, "string");
	ALLOC_GROW(p->strings, (uint64_t)id + 1, p->strings_capacity);
	p->strings[id] = arena_copy(ix, s, n);
	p->nstrings = id + 1;
	hashmap_insert(&ix->map, h, id);
	return id;
}

uint32_t profile_intern(struct profile *p, const char *s)
{
	return s ? profile_intern_n(p, s, strlen(s)) : 0;
}

uint32_t profile_add_module(struct profile *p, const struct profile_module *m)
{
	check_id_room(p->nmodules, "module");
	ALLOC_GROW(p->modules, (uint64_t)p->nmodules + 1, p->modules_cap);
	p->modules[p->nmodules] = *m;
	return p->nmodules++;
}

uint32_t profile_add_function(struct profile *p, const struct profile_function *f)
{
	check_id_room(p->nfunctions, "function");
	ALLOC_GROW(p->functions, (uint64_t)p->nfunctions + 1, p->functions_cap);
	p->functions[p->nfunctions] = *f;
	return p->nfunctions++;
}

uint32_t profile_add_line(struct profile *p, const struct profile_line *l)
{
	check_id_room(p->nlines, "line");
	ALLOC_GROW(p->lines, (uint64_t)p->nlines + 1, p->lines_cap);
	p->lines[p->nlines] = *l;
	return p->nlines++;
}

uint32_t profile_add_location(struct profile *p, const struct profile_location *l)
{
	check_id_room(p->nlocations, "location");
	ALLOC_GROW(p->locations, (uint64_t)p->nlocations + 1, p->locations_cap);
	p->locations[p->nlocations] = *l;
	return p->nlocations++;
}

uint32_t profile_add_thread(struct profile *p, const struct profile_thread *t)
{
	check_id_room(p->nthreads, "thread");
	ALLOC_GROW(p->threads, (uint64_t)p->nthreads + 1, p->threads_cap);
	p->threads[p->nthreads] = *t;
	return p->nthreads++;
}

uint32_t profile_add_stack(struct profile *p, const uint32_t *locations, uint32_t depth)
{
	uint32_t first = p->nstack_locations;
	if ((uint64_t)first + depth >= UINT32_MAX)
		abort_with_message("profile stack table overflow");
	ALLOC_GROW(p->stack_locations, (uint64_t)first + depth, p->stack_locations_cap);
	if (depth)
		memcpy(p->stack_locations + first, locations, depth * sizeof(*locations));
	p->nstack_locations = first + depth;
	check_id_room(p->nstacks, "stack");
	ALLOC_GROW(p->stacks, (uint64_t)p->nstacks + 1, p->stacks_cap);
	p->stacks[p->nstacks].first = first;
	p->stacks[p->nstacks].depth = depth;
	return p->nstacks++;
}

uint64_t profile_locations_hash(const uint32_t *locations, uint32_t depth)
{
	uint64_t h = depth;
	for (uint32_t i = 0; i < depth; i++)
		h = hash_combine(h, locations[i]);
	return h;
}

int profile_stack_is(const struct profile *p, uint32_t stack, const uint32_t *locations, uint32_t depth)
{
	const struct profile_stack *s = &p->stacks[stack];
	return s->depth == depth &&
	       (!depth || !memcmp(p->stack_locations + s->first, locations, depth * sizeof(*locations)));
}

void profile_add_sample(struct profile *p, const struct profile_sample *s, const int64_t *values)
{
	if (!p->ncolumns)
		abort_with_message("profile_add_sample: the profile has no value types");
	ALLOC_GROW(p->samples, p->nsamples + 1, p->samples_cap);
	ALLOC_GROW(p->values, (p->nsamples + 1) * p->ncolumns, p->values_cap);
	p->samples[p->nsamples] = *s;
	if (p->ncolumns == 1) /* a CPU trace: spare the loader a memcpy call per sample */
		p->values[p->nsamples] = values[0];
	else
		memcpy(p->values + p->nsamples * p->ncolumns, values, p->ncolumns * sizeof(*values));
	p->nsamples++;
}

void profile_reserve_samples(struct profile *p, uint64_t n)
{
	if (!p->ncolumns)
		abort_with_message("profile_reserve_samples: the profile has no value types");
	if (n <= p->samples_cap)
		return;
	if (n > SIZE_MAX / sizeof(*p->values) / p->ncolumns)
		abort_out_of_memory();
	p->samples = realloc_or_abort(p->samples, n * sizeof(*p->samples));
	p->values = realloc_or_abort(p->values, n * p->ncolumns * sizeof(*p->values));
	p->samples_cap = n;
	p->values_cap = n * p->ncolumns;
}

/* ---- value types ---- */

static uint32_t add_type(struct profile *p, const char *type, const char *unit, uint32_t column,
			 int64_t scale)
{
	if (p->nvalue_types == PROFILE_MAX_VALUE_TYPES)
		abort_with_message("too many value types");
	struct profile_value_type *t = &p->value_types[p->nvalue_types];
	t->type = profile_intern(p, type);
	t->unit = profile_intern(p, unit);
	t->column = column;
	t->scale = scale;
	if (p->default_value == PROFILE_NO_VALUE)
		p->default_value = p->nvalue_types;
	return p->nvalue_types++;
}

uint32_t profile_add_value_type(struct profile *p, const char *type, const char *unit)
{
	if (p->nsamples) {
		/* Widen every row by a zero column (an allocation trace's types come
		 * after its CPU samples). */
		uint32_t old = p->ncolumns, now = old + 1;
		int64_t *values = calloc_or_abort(p->nsamples * now, sizeof(*values));
		for (uint64_t i = 0; i < p->nsamples; i++)
			memcpy(values + i * now, p->values + i * old, old * sizeof(*values));
		free(p->values);
		p->values = values;
		p->values_cap = p->nsamples * now;
	}
	return add_type(p, type, unit, p->ncolumns++, 1);
}

uint32_t profile_add_scaled_value_type(struct profile *p, const char *type, const char *unit,
				       uint32_t of, int64_t scale)
{
	return add_type(p, type, unit, p->value_types[of].column, p->value_types[of].scale * scale);
}

void profile_set_cpu_value_types(struct profile *p, int64_t period_ns)
{
	uint32_t samples = profile_add_value_type(p, "samples", "count");
	p->period_type = profile_add_scaled_value_type(p, "cpu", "nanoseconds", samples, period_ns);
	p->period = period_ns;
	p->default_value = samples;
}

void profile_set_period(struct profile *p, int64_t period)
{
	if (p->period_type == PROFILE_NO_VALUE)
		return;
	/* The period type, and any type derived like it, read a stored count
	 * times the period: rescale them all. */
	int64_t old = p->period;
	for (uint32_t v = 0; v < p->nvalue_types; v++) {
		struct profile_value_type *t = &p->value_types[v];
		if (t->scale != 1 && t->scale == old)
			t->scale = period;
	}
	p->value_types[p->period_type].scale = period;
	p->period = period;
}

uint32_t profile_find_value_type(const struct profile *p, const char *name)
{
	for (uint32_t v = 0; v < p->nvalue_types; v++)
		if (!strcmp(profile_string(p, p->value_types[v].type), name))
			return v;
	return PROFILE_NO_VALUE;
}

const char *profile_value_type_names(const struct profile *p, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (uint32_t v = 0; v < p->nvalue_types && used < len; v++) {
		int n = snprintf(buf + used, len - used, "%s%s", v ? ", " : "",
				 profile_string(p, p->value_types[v].type));
		if (n < 0)
			break;
		used += (size_t)n;
	}
	return buf;
}

uint32_t profile_display_value(const struct profile *p, uint32_t value)
{
	uint32_t t = p->period_type;
	if (t != PROFILE_NO_VALUE && t != value && value < p->nvalue_types && p->period > 0 &&
	    p->value_types[value].scale == 1 && p->value_types[t].column == p->value_types[value].column)
		return t;
	return value;
}

int64_t profile_scale_value(const struct profile *p, uint32_t v, int64_t column_total, int *saturated)
{
	return sat_mul_i64(column_total, p->value_types[v].scale, saturated);
}

int64_t profile_value_total(const struct profile *p, uint32_t v, int *saturated)
{
	uint32_t col = p->value_types[v].column, stride = p->ncolumns;
	int64_t sum = 0;
	for (uint64_t i = 0; i < p->nsamples; i++)
		sum = sat_add_i64(sum, p->values[i * stride + col], saturated);
	return profile_scale_value(p, v, sum, saturated);
}

void profile_totals(const struct profile *p, int64_t *totals, int *saturated)
{
	int64_t columns[PROFILE_MAX_VALUE_TYPES] = { 0 };
	uint32_t stride = p->ncolumns;
	for (uint64_t i = 0; i < p->nsamples; i++)
		for (uint32_t c = 0; c < stride; c++)
			columns[c] = sat_add_i64(columns[c], p->values[i * stride + c], saturated);
	for (uint32_t v = 0; v < p->nvalue_types; v++)
		totals[v] = profile_scale_value(p, v, columns[p->value_types[v].column], saturated);
}

uint32_t profile_period_count(const struct profile *p)
{
	if (p->period_type == PROFILE_NO_VALUE)
		return PROFILE_NO_VALUE;
	uint32_t column = p->value_types[p->period_type].column;
	for (uint32_t v = 0; v < p->nvalue_types; v++)
		if (v != p->period_type && p->value_types[v].column == column && p->value_types[v].scale == 1)
			return v;
	return PROFILE_NO_VALUE;
}

uint32_t profile_count_type(const struct profile *p, uint32_t v)
{
	const struct profile_value_type *t = &p->value_types[v];
	if (t->scale == 1 && !strcmp(profile_string(p, t->unit), "count"))
		return v;
	for (uint32_t u = 0; u < p->nvalue_types; u++)
		if (p->value_types[u].column == t->column && p->value_types[u].scale == 1 &&
		    !strcmp(profile_string(p, p->value_types[u].unit), "count"))
			return u;
	const char *name = profile_string(p, t->type);
	size_t n = strlen(name);
	if (n > 6 && !strcmp(name + n - 6, "_space") && n < 64) {
		char objects[80];
		snprintf(objects, sizeof(objects), "%.*s_objects", (int)(n - 6), name);
		uint32_t u = profile_find_value_type(p, objects);
		if (u != PROFILE_NO_VALUE && !strcmp(profile_string(p, p->value_types[u].unit), "count"))
			return u;
	}
	return PROFILE_NO_VALUE;
}

uint64_t profile_samples_total(const struct profile *p)
{
	uint64_t n = 0;
	for (uint64_t i = 0; i < p->nsamples; i++)
		n += profile_sample_count(&p->samples[i]);
	return n;
}

void profile_thread_totals(const struct profile *p, uint32_t v, int64_t *out, uint64_t *rows)
{
	memset(out, 0, p->nthreads * sizeof(*out));
	if (rows)
		memset(rows, 0, p->nthreads * sizeof(*rows));
	uint32_t col = p->value_types[v].column, stride = p->ncolumns;
	for (uint64_t i = 0; i < p->nsamples; i++) {
		uint32_t t = p->samples[i].thread;
		if (t >= p->nthreads)
			continue;
		out[t] = sat_add_i64(out[t], p->values[i * stride + col], NULL);
		if (rows)
			rows[t] += profile_sample_count(&p->samples[i]);
	}
	for (uint32_t t = 0; t < p->nthreads; t++)
		out[t] = profile_scale_value(p, v, out[t], NULL);
}

uint32_t profile_stack_nframes(const struct profile *p, uint32_t stack)
{
	const struct profile_stack *st = &p->stacks[stack];
	uint32_t n = 0;
	for (uint32_t i = 0; i < st->depth; i++)
		n += p->locations[p->stack_locations[st->first + i]].nlines;
	return n;
}

uint32_t profile_max_stack_frames(const struct profile *p)
{
	uint32_t max = 0;
	for (uint32_t s = 0; s < p->nstacks; s++) {
		uint32_t n = profile_stack_nframes(p, s);
		if (n > max)
			max = n;
	}
	return max;
}

uint32_t profile_stack_frames(const struct profile *p, uint32_t stack, uint32_t *frames)
{
	const struct profile_stack *st = &p->stacks[stack];
	uint32_t n = 0;
	/* Locations are stored leaf first and each inline chain innermost
	 * first, so root first means walking both backwards. */
	for (uint32_t i = st->depth; i-- > 0;) {
		const struct profile_location *loc = &p->locations[p->stack_locations[st->first + i]];
		for (uint32_t l = loc->nlines; l-- > 0;)
			frames[n++] = loc->first_line + l;
	}
	return n;
}

int profile_is_diff(const struct profile *p)
{
	for (uint32_t t = 0; t < p->nthreads; t++)
		if (p->threads[t].flags & PROFILE_THREAD_DIFF_BASE)
			return 1;
	return 0;
}

int profile_many_programs(const struct profile *p)
{
	for (uint32_t i = 1; i < p->nthreads; i++)
		if (p->threads[i].command != p->threads[0].command)
			return 1;
	return 0;
}

int profile_many_processes(const struct profile *p)
{
	/* A diff's two runs are two processes of one program: each run is judged alone. */
	uint32_t first[2] = {UINT32_MAX, UINT32_MAX};
	for (uint32_t i = 0; i < p->nthreads; i++) {
		int run = (p->threads[i].flags & PROFILE_THREAD_DIFF_BASE) != 0;
		if (first[run] == UINT32_MAX)
			first[run] = i;
		else if (p->threads[i].pid != p->threads[first[run]].pid)
			return 1;
	}
	return 0;
}

const char *profile_module_name(const struct profile *p, uint32_t m)
{
	const char *path = m < p->nmodules ? profile_string(p, p->modules[m].path) : "";
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

const char *profile_thread_title(const struct profile *p, uint32_t thread, char *buf, size_t len)
{
	const struct profile_thread *t = &p->threads[thread];
	/* Id 0 is the one empty string: interning "" always gives 0. */
	if (t->name)
		snprintf(buf, len, "%u (%s)", t->tid, profile_string(p, t->name));
	else
		snprintf(buf, len, "%u", t->tid);
	return buf;
}
