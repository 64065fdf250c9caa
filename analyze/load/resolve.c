/*
 * resolve.c - distinct addresses and their symbolization into profile
 * functions, lines and locations (see resolve.h; the module maps an address
 * is looked up in are resolve_modules.c's).
 *
 * Costs scale with distinct addresses: each (ip, is-return) pair is hashed
 * once, looked up once, and the names the symbolizer returns are interned
 * through a cache keyed by the name's pointer (the symbolizer keeps each
 * string once), so most frames cost no string hashing at all. Each module
 * is opened for the addresses that will be looked up in it
 * (symbolizer_module_for), so that it reads the debug info of those only.
 * Each distinct (module, address) pair is symbolized once, however many
 * processes ran it.
 */
#include "resolve_internal.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "diagnostics.h"
#include "hashmap.h"
#include "jitmap_parse.h"
#include "overloads.h"
#include "symbolize.h"

#define MAX_INLINE_CHAIN 64

/* A debuginfod download's progress note (the sink draws it on a terminal
 * when the download takes over a second). */
static void download_progress(void *ctx, const char *what, uint64_t done, uint64_t total,
			      int finished)
{
	struct resolver *R = ctx;
	if (finished || !R->downloading) /* "" ends a note, and restarts the sink's clock */
		diag_progress(R->o->diag, "%s", "");
	R->downloading = !finished;
	if (finished)
		return;
	const char *slash = strrchr(what, '/');
	if (total > 0)
		diag_progress(R->o->diag, "debuginfod: debug info of %s: %.1f of %.1f MiB",
			      slash ? slash + 1 : what, (double)done / 1048576.0, (double)total / 1048576.0);
	else
		diag_progress(R->o->diag, "debuginfod: debug info of %s: %.1f MiB",
			      slash ? slash + 1 : what, (double)done / 1048576.0);
}

struct resolver *resolver_new(struct profile *p, const struct load_options *o)
{
	struct resolver *R = calloc_or_abort(1, sizeof(*R));
	R->p = p;
	R->o = o;
	hashmap_init(&R->leaf_index, 4096);
	hashmap_init(&R->return_index, 4096);
	hashmap_init(&R->string_cache, 4096);
	hashmap_init(&R->module_index, 64);
	hashmap_init(&R->functions, 4096);
	hashmap_init(&R->module_keys, 64);
	if (o->symbolize || o->open_modules) {
		struct symbolizer_options so = {
			.debug_dirs = o->debug_dirs,
			.ndebug_dirs = o->ndebug_dirs,
			.search_dirs = o->search_dirs,
			.nsearch_dirs = o->nsearch_dirs,
			.demangle = o->demangle,
			.keep_clones = o->keep_clones,
			.full_names = o->full_names,
			.raw_names = o->raw_names,
			.offline = o->offline,
			.debuginfod_timeout = o->debuginfod_timeout,
			.progress = download_progress,
			.progress_ctx = R,
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
	free(R->parameters);
	if (R->jit) {
		jit_symbols_free(R->jit);
		free(R->jit);
	}
	free(R->modules);
	free(R->ranges);
	free(R->addresses);
	free(R->unloads);
	hashmap_free(&R->module_index);
	hashmap_free(&R->module_keys);
	hashmap_free(&R->leaf_index);
	hashmap_free(&R->return_index);
	hashmap_free(&R->string_cache);
	hashmap_free(&R->functions);
	free(R);
}

uint32_t resolver_add_address(struct resolver *R, uint32_t pid, uint64_t ip, int is_return, uint32_t epoch)
{
	uint32_t module = RESOLVE_ANY_MODULE;
	uint32_t *slot;
	int ambiguous = epoch != RESOLVE_ANY_EPOCH && resolver_is_ambiguous(R, pid, ip, is_return);
	if (ambiguous || R->many_pids) {
		/* The module decides what an address means: its process's map (at that time) says which.
		 * User-space addresses fit in 47 bits: module, ip and the flag make one key. */
		module = resolve_find_module(R, pid, ip - (is_return != 0), ambiguous ? epoch : RESOLVE_ANY_EPOCH);
		uint64_t key = ((uint64_t)(module + 1) << 49) ^ (ip << 1) ^ (uint64_t)(is_return != 0);
		slot = hashmap_slot(&R->module_index, key);
	} else {
		slot = hashmap_slot(is_return ? &R->return_index : &R->leaf_index, ip);
	}
	if (*slot != HASHMAP_NONE)
		return *slot;
	ALLOC_GROW(R->addresses, (uint64_t)R->naddresses + 1, R->addresses_cap);
	R->addresses[R->naddresses] = (struct address){ip, (uint32_t)(is_return != 0), UINT32_MAX, module, pid};
	return *slot = R->naddresses++;
}

static uint32_t intern_cached(struct resolver *R, const char *s)
{
	if (!s || !*s)
		return 0;
	uint32_t *slot = hashmap_slot(&R->string_cache, (uint64_t)(uintptr_t)s);
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

static uint32_t function_index(struct resolver *R, const struct profile_function *f,
			       uint32_t parameters)
{
	uint64_t h = hash_u64(((uint64_t)f->name << 32) ^ f->system_name);
	h = hash_combine(h, ((uint64_t)f->file << 32) ^ f->start_line);
	h = hash_combine(h, f->module);
	R->seek = f;
	uint32_t id = hashmap_find(&R->functions, h, function_equal, R);
	if (id != HASHMAP_NONE)
		return id;
	struct profile_function nf = *f;
	if (f->module != UINT32_MAX && (R->p->modules[f->module].flags & PROFILE_MODULE_SYSTEM))
		nf.flags |= PROFILE_FUNCTION_SYSTEM;
	if (is_startup_function(profile_string(R->p, f->name)))
		nf.flags |= PROFILE_FUNCTION_SYSTEM;
	id = profile_add_function(R->p, &nf);
	hashmap_insert(&R->functions, h, id);
	ALLOC_GROW(R->parameters, (uint64_t)id + 1, R->parameters_cap);
	R->parameters[id] = parameters ? parameters : nf.name;
	return id;
}

/*
 * The location of an address nothing could name: "module+0xoffset", the
 * offset an ELF virtual address (runtime address - load bias). Where the
 * module's FDEs bound the function holding it (sm: the module, when open),
 * the offset is the function's start, so that the addresses of one
 * stripped function are one function; the location keeps its address.
 */
static uint32_t unknown_location(struct resolver *R, const struct address *a, uint32_t module,
				 uint64_t lookup, struct symbol_module *sm)
{
	struct profile *p = R->p;
	char name[512];
	if (module == UINT32_MAX && !a->ip) {
		snprintf(name, sizeof(name), "[unknown]"); /* a sample without a stack */
	} else if (module == UINT32_MAX) {
		snprintf(name, sizeof(name), "[unknown]+0x%llx", (unsigned long long)lookup);
	} else {
		const char *path = profile_string(p, p->modules[module].path);
		const char *slash = strrchr(path, '/');
		uint64_t offset = lookup - p->modules[module].load_bias, start, end;
		if (sm != NULL && symbol_module_code_extent(sm, offset, &start, &end))
			offset = start;
		snprintf(name, sizeof(name), "%s+0x%llx", slash ? slash + 1 : path,
			 (unsigned long long)offset);
	}
	uint32_t id = profile_intern(p, name);
	struct profile_function f = {
		.name = id, .system_name = id, .module = module, .flags = PROFILE_FUNCTION_UNKNOWN};
	struct profile_line line = {.function = function_index(R, &f, 0)};
	struct profile_location loc = {
		.address = a->ip, .module = module, .first_line = profile_add_line(p, &line), .nlines = 1,
		.flags = a->is_return ? PROFILE_LOCATION_RETURN : 0};
	R->unresolved++;
	return profile_add_location(p, &loc);
}

void resolver_set_jit(struct resolver *R, struct jit_symbols *jit)
{
	R->jit = jit;
}

/* The location of JIT code a perf map names (outside every module). */
static uint32_t jit_location(struct resolver *R, const struct address *a,
			     const struct jit_symbol *sym)
{
	struct profile *p = R->p;
	struct profile_function f = {
		.name = profile_intern(p, sym->function),
		/* V8's tiers of one function are one function (jitmap_parse.c) */
		.system_name = profile_intern(p, sym->file ? sym->function : sym->name),
		.file = sym->file ? profile_intern(p, sym->file) : 0,
		.start_line = sym->line,
		.module = UINT32_MAX,
	};
	struct profile_line line = {
		.function = function_index(R, &f, 0),
		.file = f.file,
		.line = sym->line,
	};
	struct profile_location loc = {
		.address = a->ip, .module = UINT32_MAX, .first_line = profile_add_line(p, &line), .nlines = 1,
		.flags = a->is_return ? PROFILE_LOCATION_RETURN : 0};
	return profile_add_location(p, &loc);
}

/* Address a's module (UINT32_MAX: none). */
static uint32_t module_of(const struct resolver *R, const struct address *a)
{
	return a->module != RESOLVE_ANY_MODULE ? a->module
					       : resolve_find_module(R, a->pid, a->ip - a->is_return, RESOLVE_ANY_EPOCH);
}

/* Resolve a, in module (module_of); want: the module's sorted lookup addresses. */
static uint32_t resolve_one(struct resolver *R, const struct address *a, uint32_t module, const uint64_t *want,
			    size_t nwant)
{
	uint64_t lookup = a->ip - a->is_return;
	const struct jit_symbol *jit;
	if (module == UINT32_MAX && a->ip && R->jit && R->o->symbolize &&
	    (jit = jit_symbols_find(R->jit, lookup)) != NULL)
		return jit_location(R, a, jit);
	struct symbol_module *sm = NULL;
	if (module != UINT32_MAX && R->o->symbolize)
		sm = resolve_open_module(R, module, want, nwant);
	struct symbol_frame frames[MAX_INLINE_CHAIN];
	int n = sm ? symbol_module_lookup(sm, lookup - R->p->modules[module].load_bias, frames,
					  MAX_INLINE_CHAIN)
		   : 0;
	if (n <= 0)
		return unknown_location(R, a, module, lookup, sm);

	struct profile *p = R->p;
	struct profile_location loc = {
		.address = a->ip, .module = module, .first_line = p->nlines, .nlines = (uint32_t)n,
		.flags = a->is_return ? PROFILE_LOCATION_RETURN : 0};
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
			.function = function_index(R, &f, intern_cached(R, fr->function_parameters)),
			.file = intern_cached(R, fr->file),
			.line = fr->line,
			.inlined = fr->inlined != 0,
		};
		profile_add_line(p, &line);
	}
	return profile_add_location(p, &loc);
}

static int address_order(const void *a, const void *b, void *ctx)
{
	const struct resolver *R = ctx;
	const struct address *x = &R->addresses[*(const uint32_t *)a];
	const struct address *y = &R->addresses[*(const uint32_t *)b];
	uint64_t lx = x->ip - x->is_return, ly = y->ip - y->is_return;
	if (lx != ly)
		return lx < ly ? -1 : 1;
	if (x->is_return != y->is_return)
		return (int)x->is_return - (int)y->is_return;
	return x->module < y->module ? -1 : x->module > y->module;
}

/* Whether module (UINT32_MAX: none) is a system module. */
static int system_module(const struct resolver *R, uint32_t module)
{
	return module != UINT32_MAX && (R->p->modules[module].flags & PROFILE_MODULE_SYSTEM);
}

uint32_t resolver_address_module(const struct resolver *R, uint32_t address, int *system)
{
	uint32_t m = module_of(R, &R->addresses[address]);
	*system = system_module(R, m);
	return m;
}

void resolver_resolve(struct resolver *R, unsigned which)
{
	uint32_t *order = realloc_or_abort(NULL, (R->naddresses ? R->naddresses : 1) * sizeof(*order));
	uint32_t norder = 0;
	for (uint32_t i = 0; i < R->naddresses; i++) {
		int sys = system_module(R, module_of(R, &R->addresses[i]));
		if (which & (sys ? RESOLVE_SYSTEM : RESOLVE_PROGRAM))
			order[norder++] = i;
	}
	/* Address order: the symbolizer's tables are then walked forward. */
	qsort_r(order, norder, sizeof(*order), address_order, R);
	/* Each module's addresses (module-relative, sorted: the address order),
	 * so that it reads only the debug info they need (symbolizer_module_for). */
	uint32_t nmodules = R->p->nmodules;
	uint32_t *module = realloc_or_abort(NULL, (norder ? norder : 1) * sizeof(*module));
	uint64_t *first = calloc_or_abort((size_t)nmodules + 1, sizeof(*first));
	for (uint32_t i = 0; i < norder; i++) {
		module[i] = module_of(R, &R->addresses[order[i]]);
		if (module[i] != UINT32_MAX)
			first[module[i] + 1]++;
	}
	for (uint32_t m = 0; m < nmodules; m++)
		first[m + 1] += first[m];
	uint64_t *want = realloc_or_abort(NULL, (first[nmodules] ? first[nmodules] : 1) * sizeof(*want));
	uint64_t *fill = realloc_or_abort(NULL, ((size_t)nmodules + 1) * sizeof(*fill));
	memcpy(fill, first, ((size_t)nmodules + 1) * sizeof(*fill));
	for (uint32_t i = 0; i < norder; i++) {
		const struct address *a = &R->addresses[order[i]];
		if (module[i] != UINT32_MAX)
			want[fill[module[i]]++] = a->ip - a->is_return - R->p->modules[module[i]].load_bias;
	}
	for (uint32_t i = 0; i < norder; i++) {
		struct address *a = &R->addresses[order[i]];
		uint32_t m = module[i];
		a->location = m == UINT32_MAX ? resolve_one(R, a, m, NULL, 0)
					      : resolve_one(R, a, m, want + first[m], first[m + 1] - first[m]);
	}
	free(fill);
	free(want);
	free(first);
	free(module);
	free(order);
	if (which & RESOLVE_SYSTEM)
		overloads_tell_apart(R->p, R->parameters);
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
