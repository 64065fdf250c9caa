/*
 * remap.c - one profile's tables mapped into another (see remap.h).
 *
 * Each source table has an array from source id to dst id (UNMAPPED until
 * asked for). By name, dst entries are found through hash maps over keys
 * kept for every dst entry, including those dst had before this remapping
 * began, so that several sources line up in one dst.
 */
#include "remap.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "hashmap.h"

#define UNMAPPED UINT32_MAX

/* What a function means, in dst ids: its module's file name, its name and
 * (with lines) its file. */
struct function_key {
	uint32_t module_name; /* string id, 0 outside every module (merging: module + 1) */
	uint32_t name;
	uint32_t file;
};

struct profile_remap {
	struct profile *dst;
	const struct profile *src;
	unsigned flags;
	uint32_t *strings, *modules, *functions, *locations, *stacks, *threads;
	uint64_t *module_shift; /* merge: per src module, dst's start minus src's */
	/* by name: indexes of dst entries by meaning */
	struct hashmap module_index;   /* by hash of the file name */
	struct hashmap function_index; /* by hash of function_key */
	struct hashmap location_index; /* by hash of the line chain */
	struct hashmap stack_index;    /* by hash of the location ids */
	struct hashmap thread_index;   /* keyed: pid << 32 | tid (merging: by hash of thread_hash) */
	struct function_key *fkeys;    /* per dst function */
	uint64_t fkeys_cap;
	uint32_t indexed_functions, indexed_locations, indexed_stacks, indexed_threads; /* dst entries indexed so far */
	/* what the eq callbacks compare against */
	const void *seek;
	uint32_t seek_len;
	uint64_t seek_address; /* merge: the location's address and module */
	uint32_t seek_module;
};

static uint32_t *unmapped(uint64_t n)
{
	uint32_t *a = calloc_or_abort(n ? n : 1, sizeof(*a));
	memset(a, 0xff, (n ? n : 1) * sizeof(*a));
	return a;
}

static int by_name(const struct profile_remap *m)
{
	return (m->flags & PROFILE_REMAP_BY_NAME) != 0;
}

static int merging(const struct profile_remap *m)
{
	return (m->flags & PROFILE_REMAP_MERGE) != 0;
}

uint32_t profile_remap_string(struct profile_remap *m, uint32_t id)
{
	if (m->strings[id] == UNMAPPED)
		m->strings[id] = profile_intern(m->dst, profile_string(m->src, id));
	return m->strings[id];
}

/* The file name of a dst module's path, as a dst string id. */
static uint32_t module_name(struct profile *dst, uint32_t module)
{
	if (module == UINT32_MAX)
		return 0;
	const char *path = profile_string(dst, dst->modules[module].path);
	const char *slash = strrchr(path, '/');
	return profile_intern(dst, slash ? slash + 1 : path);
}

/* By name, a module is its file name; merging, its path and build-id
 * (dst string ids, packed in 64 bits). */
static uint64_t module_key(const struct profile_remap *m, uint32_t module)
{
	const struct profile_module *pm = &m->dst->modules[module];
	return merging(m) ? (uint64_t)pm->path << 32 | pm->build_id : module_name(m->dst, module);
}

static int module_equal(const void *ctx, uint32_t id)
{
	const struct profile_remap *m = ctx;
	return module_key(m, id) == *(const uint64_t *)m->seek;
}

uint32_t profile_remap_module(struct profile_remap *m, uint32_t id)
{
	if (id == UINT32_MAX)
		return id;
	if (m->modules[id] != UNMAPPED)
		return m->modules[id];
	struct profile_module pm = m->src->modules[id];
	pm.path = profile_remap_string(m, pm.path);
	pm.build_id = profile_remap_string(m, pm.build_id);
	if (!by_name(m))
		return m->modules[id] = profile_add_module(m->dst, &pm);
	uint64_t key;
	if (merging(m)) {
		key = (uint64_t)pm.path << 32 | pm.build_id;
	} else {
		const char *slash = strrchr(profile_string(m->dst, pm.path), '/');
		key = profile_intern(m->dst, slash ? slash + 1 : profile_string(m->dst, pm.path));
	}
	uint64_t h = hash_u64(key);
	m->seek = &key;
	uint32_t found = hashmap_find(&m->module_index, h, module_equal, m);
	if (found == HASHMAP_NONE) {
		/* Across runs of rebuilt programs addresses mean nothing: the
		 * module keeps its name only. A merge keeps the first run's. */
		if (!merging(m))
			pm.start = pm.limit = pm.file_offset = pm.load_bias = 0;
		found = profile_add_module(m->dst, &pm);
		hashmap_insert(&m->module_index, h, found);
	} else if (merging(m)) {
		/* Two runs of one module: what a later run saw at least as far
		 * as the first did, flags of what was found in either. */
		m->dst->modules[found].flags |= pm.flags;
	}
	if (merging(m))
		m->module_shift[id] = m->dst->modules[found].start - m->src->modules[id].start;
	return m->modules[id] = found;
}

static uint64_t function_hash(const struct function_key *k)
{
	return hash_combine(hash_u64((uint64_t)k->module_name << 32 | k->name), k->file);
}

static int function_equal(const void *ctx, uint32_t id)
{
	const struct profile_remap *m = ctx;
	return !memcmp(&m->fkeys[id], m->seek, sizeof(struct function_key));
}

/* Which module a function key names: its file name, or merging the dst module itself. */
static uint32_t function_module(struct profile_remap *m, uint32_t module)
{
	if (merging(m))
		return module == UINT32_MAX ? 0 : module + 1;
	return module_name(m->dst, module);
}

static struct function_key key_of_function(struct profile_remap *m, uint32_t f)
{
	const struct profile_function *fn = &m->dst->functions[f];
	struct function_key k = {function_module(m, fn->module), fn->name,
				 (m->flags & PROFILE_REMAP_LINES) ? fn->file : 0};
	return k;
}

/* By name: index the dst functions added since the last call. */
static void index_functions(struct profile_remap *m)
{
	for (; m->indexed_functions < m->dst->nfunctions; m->indexed_functions++) {
		uint32_t f = m->indexed_functions;
		ALLOC_GROW(m->fkeys, (uint64_t)f + 1, m->fkeys_cap);
		m->fkeys[f] = key_of_function(m, f);
		m->seek = &m->fkeys[f];
		if (hashmap_find(&m->function_index, function_hash(&m->fkeys[f]), function_equal, m) == HASHMAP_NONE)
			hashmap_insert(&m->function_index, function_hash(&m->fkeys[f]), f);
	}
}

uint32_t profile_remap_function(struct profile_remap *m, uint32_t id)
{
	if (m->functions[id] != UNMAPPED)
		return m->functions[id];
	struct profile_function f = m->src->functions[id];
	f.name = profile_remap_string(m, f.name);
	f.system_name = profile_remap_string(m, f.system_name);
	f.file = profile_remap_string(m, f.file);
	f.module = profile_remap_module(m, f.module);
	if (!by_name(m))
		return m->functions[id] = profile_add_function(m->dst, &f);
	index_functions(m);
	struct function_key k = {function_module(m, f.module), f.name,
				 (m->flags & PROFILE_REMAP_LINES) ? f.file : 0};
	m->seek = &k;
	uint32_t found = hashmap_find(&m->function_index, function_hash(&k), function_equal, m);
	if (found == HASHMAP_NONE) {
		if (!(m->flags & PROFILE_REMAP_LINES))
			f.start_line = 0;
		found = profile_add_function(m->dst, &f);
		index_functions(m);
	}
	return m->functions[id] = found;
}

/* The line chain a location stands for, as dst lines. */
static uint64_t chain_hash(const struct profile_line *lines, uint32_t n)
{
	uint64_t h = n;
	for (uint32_t i = 0; i < n; i++) {
		h = hash_combine(h, (uint64_t)lines[i].function << 32 | lines[i].file);
		h = hash_combine(h, (uint64_t)lines[i].line << 1 | lines[i].inlined);
	}
	return h;
}

static int location_equal(const void *ctx, uint32_t id)
{
	const struct profile_remap *m = ctx;
	const struct profile_location *l = &m->dst->locations[id];
	if (merging(m) && (l->address != m->seek_address || l->module != m->seek_module))
		return 0;
	return l->nlines == m->seek_len &&
	       !memcmp(&m->dst->lines[l->first_line], m->seek, l->nlines * sizeof(struct profile_line));
}

/* A location's hash: its chain's, and merging its address's too. */
static uint64_t location_hash(const struct profile_remap *m, const struct profile_line *lines, uint32_t n,
			      uint64_t address)
{
	uint64_t h = chain_hash(lines, n);
	return merging(m) ? hash_combine(h, address) : h;
}

static void index_locations(struct profile_remap *m)
{
	for (; m->indexed_locations < m->dst->nlocations; m->indexed_locations++) {
		const struct profile_location *l = &m->dst->locations[m->indexed_locations];
		const struct profile_line *lines = &m->dst->lines[l->first_line];
		m->seek = lines;
		m->seek_len = l->nlines;
		m->seek_address = l->address;
		m->seek_module = l->module;
		uint64_t h = location_hash(m, lines, l->nlines, l->address);
		if (hashmap_find(&m->location_index, h, location_equal, m) == HASHMAP_NONE)
			hashmap_insert(&m->location_index, h, m->indexed_locations);
	}
}

uint32_t profile_remap_location(struct profile_remap *m, uint32_t id)
{
	if (m->locations[id] != UNMAPPED)
		return m->locations[id];
	const struct profile_location *l = &m->src->locations[id];
	/* The chain in dst ids, built aside first (mapping a function may add
	 * dst rows, never lines). */
	struct profile_line chain[64], *lines = l->nlines <= 64 ? chain
								 : calloc_or_abort(l->nlines, sizeof(*lines));
	for (uint32_t i = 0; i < l->nlines; i++) {
		struct profile_line line = m->src->lines[l->first_line + i];
		line.function = profile_remap_function(m, line.function);
		line.file = profile_remap_string(m, line.file);
		/* Matched by function alone, a frame is in its function's file
		 * and at no line in particular. */
		if (by_name(m) && !(m->flags & PROFILE_REMAP_LINES)) {
			line.file = m->dst->functions[line.function].file;
			line.line = 0;
		}
		lines[i] = line;
	}
	uint32_t module = profile_remap_module(m, l->module);
	/* Merging, the address moves with its module (outside every module it stays). */
	uint64_t address = !by_name(m) ? l->address
			 : !merging(m) ? 0
			 : l->address + (module == UINT32_MAX ? 0 : m->module_shift[l->module]);
	uint32_t found = HASHMAP_NONE;
	if (by_name(m)) {
		index_locations(m);
		m->seek = lines;
		m->seek_len = l->nlines;
		m->seek_address = address;
		m->seek_module = module;
		found = hashmap_find(&m->location_index, location_hash(m, lines, l->nlines, address), location_equal, m);
	}
	if (found == HASHMAP_NONE) {
		struct profile_location nl = {
			.address = address,
			.module = module,
			.first_line = m->dst->nlines,
			.nlines = l->nlines,
			.flags = by_name(m) && !merging(m) ? 0 : l->flags,
		};
		for (uint32_t i = 0; i < l->nlines; i++)
			profile_add_line(m->dst, &lines[i]);
		found = profile_add_location(m->dst, &nl);
		if (by_name(m))
			index_locations(m);
	}
	if (lines != chain)
		free(lines);
	return m->locations[id] = found;
}

static int stack_equal(const void *ctx, uint32_t id)
{
	const struct profile_remap *m = ctx;
	return profile_stack_is(m->dst, id, m->seek, m->seek_len);
}

static void index_stacks(struct profile_remap *m)
{
	for (; m->indexed_stacks < m->dst->nstacks; m->indexed_stacks++) {
		const struct profile_stack *s = &m->dst->stacks[m->indexed_stacks];
		const uint32_t *locs = m->dst->stack_locations + s->first;
		m->seek = locs;
		m->seek_len = s->depth;
		uint64_t h = profile_locations_hash(locs, s->depth);
		if (hashmap_find(&m->stack_index, h, stack_equal, m) == HASHMAP_NONE)
			hashmap_insert(&m->stack_index, h, m->indexed_stacks);
	}
}

uint32_t profile_remap_stack(struct profile_remap *m, uint32_t id)
{
	if (m->stacks[id] != UNMAPPED)
		return m->stacks[id];
	const struct profile_stack *s = &m->src->stacks[id];
	uint32_t buf[256], *locs = s->depth <= 256 ? buf : calloc_or_abort(s->depth, sizeof(*locs));
	for (uint32_t i = 0; i < s->depth; i++)
		locs[i] = profile_remap_location(m, m->src->stack_locations[s->first + i]);
	uint32_t found = HASHMAP_NONE;
	if (by_name(m)) {
		index_stacks(m);
		m->seek = locs;
		m->seek_len = s->depth;
		found = hashmap_find(&m->stack_index, profile_locations_hash(locs, s->depth), stack_equal, m);
	}
	if (found == HASHMAP_NONE) {
		found = profile_add_stack(m->dst, locs, s->depth);
		if (by_name(m))
			index_stacks(m);
	}
	if (locs != buf)
		free(locs);
	return m->stacks[id] = found;
}

/* Merging, a thread is its process, its id and the program it runs. */
static uint64_t thread_hash(const struct profile_thread *t)
{
	return hash_combine(hash_u64((uint64_t)t->pid << 32 | t->tid), t->command);
}

static int thread_equal(const void *ctx, uint32_t id)
{
	const struct profile_remap *m = ctx;
	const struct profile_thread *t = &m->dst->threads[id], *s = m->seek;
	return t->pid == s->pid && t->tid == s->tid && t->command == s->command;
}

static void index_threads(struct profile_remap *m)
{
	for (; m->indexed_threads < m->dst->nthreads; m->indexed_threads++) {
		m->seek = &m->dst->threads[m->indexed_threads];
		uint64_t h = thread_hash(m->seek);
		if (hashmap_find(&m->thread_index, h, thread_equal, m) == HASHMAP_NONE)
			hashmap_insert(&m->thread_index, h, m->indexed_threads);
	}
}

uint32_t profile_remap_thread(struct profile_remap *m, uint32_t id)
{
	if (m->threads[id] != UNMAPPED)
		return m->threads[id];
	struct profile_thread t = m->src->threads[id];
	t.name = profile_remap_string(m, t.name);
	t.command = profile_remap_string(m, t.command);
	if (!by_name(m) || (m->flags & PROFILE_REMAP_THREADS_APART))
		return m->threads[id] = profile_add_thread(m->dst, &t);
	if (merging(m)) {
		/* A thread of one process before and after an exec is two. */
		index_threads(m);
		m->seek = &t;
		uint64_t h = thread_hash(&t);
		uint32_t found = hashmap_find(&m->thread_index, h, thread_equal, m);
		if (found == HASHMAP_NONE) {
			found = profile_add_thread(m->dst, &t);
			index_threads(m);
		}
		return m->threads[id] = found;
	}
	for (uint32_t i = 0; i < m->dst->nthreads; i++) /* index the ones dst had */
		*hashmap_slot(&m->thread_index, (uint64_t)m->dst->threads[i].pid << 32 | m->dst->threads[i].tid) = i;
	uint32_t *slot = hashmap_slot(&m->thread_index, (uint64_t)t.pid << 32 | t.tid);
	if (*slot == HASHMAP_NONE)
		*slot = profile_add_thread(m->dst, &t);
	return m->threads[id] = *slot;
}

void profile_remap_tables(struct profile_remap *m)
{
	for (uint32_t i = 1; i < m->src->nstrings; i++)
		profile_remap_string(m, i);
	for (uint32_t i = 0; i < m->src->nmodules; i++)
		profile_remap_module(m, i);
	for (uint32_t i = 0; i < m->src->nfunctions; i++)
		profile_remap_function(m, i);
}

void profile_remap_run(struct profile_remap *m)
{
	struct profile *dst = m->dst;
	const struct profile *src = m->src;
	if (!dst->nvalue_types) {
		for (uint32_t v = 0; v < src->nvalue_types; v++) {
			dst->value_types[v] = src->value_types[v];
			dst->value_types[v].type = profile_remap_string(m, src->value_types[v].type);
			dst->value_types[v].unit = profile_remap_string(m, src->value_types[v].unit);
		}
		dst->nvalue_types = src->nvalue_types;
		dst->ncolumns = src->ncolumns;
		dst->default_value = src->default_value;
		dst->period_type = src->period_type;
		dst->period = src->period;
	}
	dst->command = profile_remap_string(m, src->command);
	dst->mode = profile_remap_string(m, src->mode);
	dst->source = profile_remap_string(m, src->source);
	dst->start_realtime_ns = src->start_realtime_ns;
	dst->start_ns = src->start_ns;
	dst->duration_ns = src->duration_ns;
	dst->lost_samples = src->lost_samples;
	dst->wait_status = src->wait_status;
	dst->ended = src->ended;
	dst->end_unknown = src->end_unknown;
	dst->ntraces = src->ntraces;
	dst->exact = src->exact;
	dst->rows_are_signals = src->rows_are_signals;
	dst->time_resolution_ns = src->time_resolution_ns;
	dst->sample_bin_ns = src->sample_bin_ns;
	dst->alloc_scheme = src->alloc_scheme;
	dst->alloc_parameter = src->alloc_parameter;
	dst->alloc_scaled = src->alloc_scaled;
	dst->alloc_peak_ns = src->alloc_peak_ns;
	dst->alloc_view = profile_remap_string(m, src->alloc_view);
	memcpy(dst->alloc_run, src->alloc_run, sizeof(dst->alloc_run));
}

struct profile_remap *profile_remap_new(struct profile *dst, const struct profile *src, unsigned flags)
{
	struct profile_remap *m = calloc_or_abort(1, sizeof(*m));
	m->dst = dst;
	m->src = src;
	/* A merge matches by name, with lines. */
	m->flags = flags & PROFILE_REMAP_MERGE ? flags | PROFILE_REMAP_BY_NAME | PROFILE_REMAP_LINES : flags;
	m->strings = unmapped(src->nstrings);
	m->strings[0] = 0; /* "" is 0 everywhere */
	m->modules = unmapped(src->nmodules);
	m->functions = unmapped(src->nfunctions);
	m->locations = unmapped(src->nlocations);
	m->stacks = unmapped(src->nstacks);
	m->threads = unmapped(src->nthreads);
	if (merging(m))
		m->module_shift = calloc_or_abort(src->nmodules ? src->nmodules : 1, sizeof(*m->module_shift));
	if (by_name(m)) {
		hashmap_init(&m->module_index, dst->nmodules + src->nmodules);
		for (uint32_t i = 0; i < dst->nmodules; i++) {
			uint64_t key = module_key(m, i);
			m->seek = &key;
			if (hashmap_find(&m->module_index, hash_u64(key), module_equal, m) == HASHMAP_NONE)
				hashmap_insert(&m->module_index, hash_u64(key), i);
		}
		hashmap_init(&m->function_index, dst->nfunctions + src->nfunctions);
		hashmap_init(&m->location_index, dst->nlocations + src->nlocations);
		hashmap_init(&m->stack_index, dst->nstacks + src->nstacks);
		hashmap_init(&m->thread_index, 16);
	}
	return m;
}

void profile_remap_free(struct profile_remap *m)
{
	if (!m)
		return;
	if (by_name(m)) {
		hashmap_free(&m->module_index);
		hashmap_free(&m->function_index);
		hashmap_free(&m->location_index);
		hashmap_free(&m->stack_index);
		hashmap_free(&m->thread_index);
	}
	free(m->fkeys);
	free(m->module_shift);
	free(m->strings);
	free(m->modules);
	free(m->functions);
	free(m->locations);
	free(m->stacks);
	free(m->threads);
	free(m);
}
