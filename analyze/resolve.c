/*
 * resolve.c - module maps, distinct addresses and their symbolization into
 * profile functions, lines and locations (see resolve.h).
 *
 * Costs scale with distinct addresses: each (ip, is-return) pair is hashed
 * once, looked up once, and the names the symbolizer returns are interned
 * through a cache keyed by the name's pointer (the symbolizer keeps each
 * string once), so most frames cost no string hashing at all.
 */
#include "resolve.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "hashmap.h"
#include "symbolize.h"

#define MAX_INLINE_CHAIN 64

struct module_info {
	uint8_t build_id[64];
	uint32_t build_id_len;
	struct symbol_module *sm; /* NULL until opened */
	int opened;
};

struct range {
	uint64_t start, end;
	uint32_t module;
	uint32_t order; /* later records win where ranges overlap (dlclose + dlopen) */
};

struct address {
	uint64_t ip;
	uint32_t is_return;
	uint32_t location;
};

struct resolver {
	struct profile *p;
	const struct load_options *o;
	struct symbolizer *sym;
	struct module_info *modules;
	uint32_t modules_cap;
	struct range *ranges;
	uint32_t nranges, ranges_cap;
	struct address *addresses;
	uint32_t naddresses, addresses_cap;
	struct u64map leaf_index, return_index; /* ip -> address index */
	struct u64map string_cache;             /* symbolizer string pointer -> string id */
	struct idmap functions;                 /* profile functions by key */
	const struct profile_function *seek;
	char **warned;                          /* warnings printed so far */
	uint32_t nwarned;
	uint64_t unresolved;
};

struct resolver *resolver_new(struct profile *p, const struct load_options *o)
{
	struct resolver *R = calloc_or_abort(1, sizeof(*R));
	R->p = p;
	R->o = o;
	u64map_init(&R->leaf_index, 4096);
	u64map_init(&R->return_index, 4096);
	u64map_init(&R->string_cache, 4096);
	idmap_init(&R->functions, 4096);
	if (o->symbolize || o->open_modules) {
		struct symbolizer_options so = {
			.debug_dirs = o->debug_dirs,
			.ndebug_dirs = o->ndebug_dirs,
			.demangle = o->demangle,
			.keep_clones = o->keep_clones,
		};
		R->sym = symbolizer_new(&so);
		if (!R->sym)
			abort_out_of_memory();
	}
	return R;
}

void resolver_free(struct resolver *R)
{
	if (!R)
		return;
	if (R->sym)
		symbolizer_free(R->sym);
	for (uint32_t i = 0; i < R->nwarned; i++)
		free(R->warned[i]);
	free(R->warned);
	free(R->modules);
	free(R->ranges);
	free(R->addresses);
	u64map_free(&R->leaf_index);
	u64map_free(&R->return_index);
	u64map_free(&R->string_cache);
	idmap_free(&R->functions);
	free(R);
}

void resolver_add_module(struct resolver *R, const struct trace_module *m)
{
	struct profile *p = R->p;
	char hex[2 * sizeof(R->modules[0].build_id) + 1];
	uint32_t idlen = m->build_id_len;
	if (idlen > sizeof(R->modules[0].build_id))
		idlen = sizeof(R->modules[0].build_id);
	for (uint32_t i = 0; i < idlen; i++)
		snprintf(hex + 2 * i, 3, "%02x", m->build_id[i]);
	hex[2 * idlen] = '\0';

	struct profile_module pm = {
		.path = profile_intern(p, m->path),
		.build_id = profile_intern(p, hex),
		.load_bias = m->load_bias,
		.flags = symbol_path_is_system(m->path) ? PROFILE_MODULE_SYSTEM : 0,
	};
	/* Address ranges: executable segments (all segments if none is marked). */
	int any_exec = 0;
	for (uint32_t i = 0; i < m->nsegments; i++)
		any_exec |= (m->segments[i].flags & TRACE_SEGMENT_EXEC) != 0;
	uint32_t index = p->nmodules;
	for (uint32_t i = 0; i < m->nsegments; i++) {
		const struct trace_segment *sg = &m->segments[i];
		if (any_exec && !(sg->flags & TRACE_SEGMENT_EXEC))
			continue;
		uint64_t start = m->load_bias + sg->vaddr;
		if (pm.limit == 0) {
			pm.start = start;
			pm.limit = start + sg->memsz;
			pm.file_offset = sg->file_offset;
		}
		if (R->nranges == R->ranges_cap) {
			R->ranges_cap = R->ranges_cap ? 2 * R->ranges_cap : 64;
			R->ranges = realloc_or_abort(R->ranges, R->ranges_cap * sizeof(*R->ranges));
		}
		R->ranges[R->nranges] = (struct range){start, start + sg->memsz, index, R->nranges};
		R->nranges++;
	}
	profile_add_module(p, &pm);
	if (p->nmodules > R->modules_cap) {
		R->modules_cap = R->modules_cap ? 2 * R->modules_cap : 64;
		R->modules = realloc_or_abort(R->modules, R->modules_cap * sizeof(*R->modules));
	}
	struct module_info *mi = &R->modules[index];
	memset(mi, 0, sizeof(*mi));
	memcpy(mi->build_id, m->build_id, idlen);
	mi->build_id_len = idlen;
}

static int range_order(const void *a, const void *b)
{
	const struct range *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Print a symbolizer warning unless the same line was printed already. */
static void warn_once(struct resolver *R, const char *warning)
{
	for (uint32_t i = 0; i < R->nwarned; i++)
		if (!strcmp(R->warned[i], warning))
			return;
	R->warned = realloc_or_abort(R->warned, (R->nwarned + 1) * sizeof(*R->warned));
	R->warned[R->nwarned++] = strdup(warning);
	fprintf(stderr, "analyze: warning: %s\n", warning);
}

static struct symbol_module *open_module(struct resolver *R, uint32_t index)
{
	struct module_info *mi = &R->modules[index];
	if (mi->opened || !R->sym)
		return mi->sm;
	mi->opened = 1;
	struct profile_module *pm = &R->p->modules[index];
	char warning[1024] = "";
	mi->sm = symbolizer_module(R->sym, profile_string(R->p, pm->path), mi->build_id,
				   mi->build_id_len, warning, sizeof(warning));
	if (!mi->sm)
		abort_out_of_memory();
	pm->flags |= symbol_module_flags(mi->sm);
	/*
	 * Missing files and build-id mismatches always deserve a line. No debug
	 * info is worth one only where names are being resolved and only for
	 * the program's own modules: a system library without its debug
	 * package is the normal case, and analyze info lists it anyway.
	 */
	int serious = pm->flags & (PROFILE_MODULE_MISSING | PROFILE_MODULE_BUILD_ID_MISMATCH);
	int wanted = serious || (R->o->symbolize && !(pm->flags & PROFILE_MODULE_SYSTEM));
	if (warning[0] && wanted)
		warn_once(R, warning);
	return mi->sm;
}

void resolver_finish_modules(struct resolver *R)
{
	qsort(R->ranges, R->nranges, sizeof(*R->ranges), range_order);
	if (!R->o->symbolize && R->o->open_modules)
		for (uint32_t i = 0; i < R->p->nmodules; i++)
			open_module(R, i);
}

/* Index of the module whose range holds addr, or UINT32_MAX. */
static uint32_t find_module(const struct resolver *R, uint64_t addr)
{
	uint32_t lo = 0, hi = R->nranges;
	while (lo < hi) { /* first range starting after addr */
		uint32_t mid = lo + (hi - lo) / 2;
		if (R->ranges[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Ranges rarely overlap; look back a few for one that holds addr. */
	for (uint32_t i = lo, tries = 0; i > 0 && tries < 16; i--, tries++)
		if (addr < R->ranges[i - 1].end)
			return R->ranges[i - 1].module;
	return UINT32_MAX;
}

uint32_t resolver_add_address(struct resolver *R, uint64_t ip, int is_return)
{
	uint32_t *slot = u64map_slot(is_return ? &R->return_index : &R->leaf_index, ip);
	if (*slot != HASHMAP_NONE)
		return *slot;
	if (R->naddresses == R->addresses_cap) {
		R->addresses_cap = R->addresses_cap ? 2 * R->addresses_cap : 4096;
		R->addresses = realloc_or_abort(R->addresses, R->addresses_cap * sizeof(*R->addresses));
	}
	R->addresses[R->naddresses] = (struct address){ip, (uint32_t)(is_return != 0), UINT32_MAX};
	return *slot = R->naddresses++;
}

static uint32_t intern_cached(struct resolver *R, const char *s)
{
	if (!s || !*s)
		return 0;
	uint32_t *slot = u64map_slot(&R->string_cache, (uint64_t)(uintptr_t)s);
	if (*slot == HASHMAP_NONE)
		*slot = profile_intern(R->p, s);
	return *slot;
}

/* The key of a function: every field before flags. */
#define FUNCTION_KEY_SIZE offsetof(struct profile_function, flags)

static int function_equal(const void *ctx, uint32_t id)
{
	const struct resolver *R = ctx;
	return !memcmp(&R->p->functions[id], R->seek, FUNCTION_KEY_SIZE);
}

static int is_startup_function(const char *name)
{
	static const char *const startup[] = {
		"_start", "__libc_start_main", "__libc_start_main_impl", "__libc_start_call_main", "_dl_start",
		"_dl_start_user", "__libc_csu_init", "_init", "_fini",
	};
	for (size_t i = 0; i < sizeof(startup) / sizeof(startup[0]); i++)
		if (!strcmp(name, startup[i]))
			return 1;
	return 0;
}

static uint32_t function_index(struct resolver *R, const struct profile_function *f)
{
	uint64_t h = hash_u64(((uint64_t)f->name << 32) ^ f->system_name);
	h = hash_combine(h, ((uint64_t)f->file << 32) ^ f->start_line);
	h = hash_combine(h, f->module);
	R->seek = f;
	uint32_t id = idmap_find(&R->functions, h, function_equal, R);
	if (id != HASHMAP_NONE)
		return id;
	struct profile_function nf = *f;
	if (f->module != UINT32_MAX && (R->p->modules[f->module].flags & PROFILE_MODULE_SYSTEM))
		nf.flags |= PROFILE_FUNCTION_SYSTEM;
	if (is_startup_function(profile_string(R->p, f->name)))
		nf.flags |= PROFILE_FUNCTION_SYSTEM;
	id = profile_add_function(R->p, &nf);
	idmap_insert(&R->functions, h, id);
	return id;
}

/* The location of an address nothing could name: "module+0xoffset". */
static uint32_t unknown_location(struct resolver *R, const struct address *a, uint32_t module,
				 uint64_t lookup)
{
	struct profile *p = R->p;
	char name[512];
	if (module == UINT32_MAX) {
		snprintf(name, sizeof(name), "[unknown]+0x%llx", (unsigned long long)lookup);
	} else {
		const char *path = profile_string(p, p->modules[module].path);
		const char *slash = strrchr(path, '/');
		snprintf(name, sizeof(name), "%s+0x%llx", slash ? slash + 1 : path,
			 (unsigned long long)(lookup - p->modules[module].load_bias));
	}
	uint32_t id = profile_intern(p, name);
	struct profile_function f = {
		.name = id, .system_name = id, .module = module, .flags = PROFILE_FUNCTION_UNKNOWN};
	struct profile_line line = {.function = function_index(R, &f)};
	struct profile_location loc = {
		.address = a->ip, .module = module, .first_line = profile_add_line(p, &line), .nlines = 1};
	R->unresolved++;
	return profile_add_location(p, &loc);
}

static uint32_t resolve_one(struct resolver *R, const struct address *a)
{
	uint64_t lookup = a->ip - a->is_return;
	uint32_t module = find_module(R, lookup);
	struct symbol_module *sm = NULL;
	if (module != UINT32_MAX && R->o->symbolize)
		sm = open_module(R, module);
	struct symbol_frame frames[MAX_INLINE_CHAIN];
	int n = sm ? symbol_module_lookup(sm, lookup - R->p->modules[module].load_bias, frames,
					  MAX_INLINE_CHAIN)
		   : 0;
	if (n <= 0)
		return unknown_location(R, a, module, lookup);

	struct profile *p = R->p;
	struct profile_location loc = {
		.address = a->ip, .module = module, .first_line = p->nlines, .nlines = (uint32_t)n};
	for (int i = 0; i < n; i++) {
		const struct symbol_frame *fr = &frames[i];
		struct profile_function f = {
			.name = intern_cached(R, fr->function),
			.system_name = intern_cached(R, fr->linkage_name ? fr->linkage_name
									 : fr->function),
			.file = intern_cached(R, fr->function_file),
			.start_line = fr->function_line,
			.module = module,
		};
		struct profile_line line = {
			.function = function_index(R, &f),
			.file = intern_cached(R, fr->file),
			.line = fr->line,
			.inlined = fr->inlined != 0,
		};
		profile_add_line(p, &line);
	}
	return profile_add_location(p, &loc);
}

static const struct resolver *sort_resolver;

static int address_order(const void *a, const void *b)
{
	const struct address *x = &sort_resolver->addresses[*(const uint32_t *)a];
	const struct address *y = &sort_resolver->addresses[*(const uint32_t *)b];
	uint64_t lx = x->ip - x->is_return, ly = y->ip - y->is_return;
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return (int)x->is_return - (int)y->is_return;
}

void resolver_resolve(struct resolver *R)
{
	uint32_t *order = realloc_or_abort(NULL, (R->naddresses ? R->naddresses : 1) * sizeof(*order));
	for (uint32_t i = 0; i < R->naddresses; i++)
		order[i] = i;
	/* Address order: the symbolizer's tables are then walked forward. */
	sort_resolver = R;
	qsort(order, R->naddresses, sizeof(*order), address_order);
	sort_resolver = NULL;
	for (uint32_t i = 0; i < R->naddresses; i++) {
		struct address *a = &R->addresses[order[i]];
		a->location = resolve_one(R, a);
	}
	free(order);
}

uint32_t resolver_location(const struct resolver *R, uint32_t address)
{
	return R->addresses[address].location;
}

uint64_t resolver_distinct(const struct resolver *R)
{
	return R->naddresses;
}

uint64_t resolver_unresolved(const struct resolver *R)
{
	return R->unresolved;
}
