/*
 * resolve.c - module maps, distinct addresses and their symbolization into
 * profile functions, lines and locations (see resolve.h).
 *
 * Costs scale with distinct addresses: each (ip, is-return) pair is hashed
 * once, looked up once, and the names the symbolizer returns are interned
 * through a cache keyed by the name's pointer (the symbolizer keeps each
 * string once), so most frames cost no string hashing at all. Each module
 * is opened for the addresses that will be looked up in it
 * (symbolizer_module_for), so that it reads the debug info of those only.
 *
 * Every process has its own address space: a module's ranges belong to the
 * pid of its record, and an address is looked up among its sample's
 * process's ranges. Equal module records of several processes (a fork
 * child records its parent's modules again under its own pid) share one
 * profile module, so each file is opened once and each distinct (module,
 * address) pair is symbolized once, however many processes ran it. A trace
 * of one process (every trace before 1.4) pays nothing for this.
 *
 * Modules live from their record's time to their unload record's. Where two
 * modules' ranges overlap in one process (one dlclosed, another dlopened at
 * the same place; an exec), time decides: the run is cut into epochs at
 * every unload, and an address in an overlapped range is resolved in the
 * module live in the epoch of the sample (load.c makes one stack per epoch
 * for such samples). Traces without overlaps never pay for this.
 */
#include "resolve.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "diagnostics.h"
#include "hashmap.h"
#include "jitmap.h"
#include "overloads.h"
#include "symbolize.h"

#define MAX_INLINE_CHAIN 64

struct module_info {
	uint8_t build_id[64];
	uint32_t build_id_len;
	struct symbol_module *sm; /* NULL until opened */
	int opened;
	uint64_t key; /* hash of path, build-id, bias and segments: equal records share the module */
};

struct range {
	uint64_t start, end;
	uint32_t module;
	uint32_t order; /* without time to decide, later records win where ranges overlap */
	uint32_t overlapped; /* another module's range shares addresses with this one */
	uint32_t pid, trace_id; /* the record it came from, for unload records */
	uint64_t load_ns, unload_ns; /* live interval; unload_ns UINT64_MAX while mapped */
};

struct address {
	uint64_t ip;
	uint32_t is_return;
	uint32_t location;
	uint32_t module; /* decided when added (overlapping or multi-process traces), else RESOLVE_ANY_MODULE */
	uint32_t pid;
};

#define RESOLVE_ANY_MODULE (UINT32_MAX - 1)

struct resolver {
	struct profile *p;
	const struct load_options *o;
	struct symbolizer *sym;
	struct module_info *modules;
	uint32_t modules_cap;
	struct range *ranges;
	uint32_t nranges, ranges_cap;
	uint32_t first_pid; /* the pid of the first module record */
	int many_pids; /* module records of more than one process */
	struct hashmap module_keys; /* module_info key -> module index */
	struct address *addresses;
	uint32_t naddresses, addresses_cap;
	struct hashmap leaf_index, return_index; /* ip -> address index */
	int overlaps;                           /* some ranges overlap: modules chosen by epoch */
	uint64_t *unloads;                      /* sorted unload times: epoch boundaries */
	uint32_t nunloads;
	struct hashmap module_index;             /* (module, ip, is_return) -> address index */
	struct hashmap string_cache;             /* symbolizer string pointer -> string id */
	struct hashmap functions;                 /* profile functions by key */
	const struct profile_function *seek;
	uint32_t *parameters;                   /* function -> name with C++ parameters */
	uint32_t parameters_cap;
	int downloading;                        /* a debuginfod download under way */
	char **warned;                          /* warnings said so far */
	uint32_t nwarned, warned_cap;
	uint64_t unresolved;
	struct jit_symbols *jit;                /* JIT code outside every module, or NULL (owned) */
};

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

static uint64_t module_key(const struct trace_module *m, uint32_t idlen)
{
	uint64_t h = hash_bytes(m->path, strlen(m->path));
	h = hash_combine(h, idlen ? hash_bytes(m->build_id, idlen) : 0);
	h = hash_combine(h, m->load_bias);
	for (uint32_t i = 0; i < m->nsegments; i++)
		h = hash_combine(hash_combine(h, m->segments[i].vaddr), m->segments[i].memsz);
	return h ? h : 1;
}

/* The profile module this record describes: an equal one of another process, or a new one. */
static uint32_t module_index(struct resolver *R, const struct trace_module *m, uint32_t idlen, const char *hex)
{
	struct profile *p = R->p;
	uint64_t key = module_key(m, idlen);
	uint32_t *slot = hashmap_slot(&R->module_keys, key);
	if (*slot != HASHMAP_NONE && R->modules[*slot].key == key &&
	    !strcmp(profile_string(p, p->modules[*slot].path), m->path))
		return *slot;
	struct profile_module pm = {
		.path = profile_intern(p, m->path),
		.build_id = profile_intern(p, hex),
		.load_bias = m->load_bias,
		.flags = symbol_path_is_system(m->path) ? PROFILE_MODULE_SYSTEM : 0,
	};
	int any_exec = 0;
	for (uint32_t i = 0; i < m->nsegments; i++)
		any_exec |= (m->segments[i].flags & TRACE_SEGMENT_EXEC) != 0;
	for (uint32_t i = 0; i < m->nsegments && pm.limit == 0; i++) {
		const struct trace_segment *sg = &m->segments[i];
		if (any_exec && !(sg->flags & TRACE_SEGMENT_EXEC))
			continue;
		pm.start = m->load_bias + sg->vaddr;
		pm.limit = pm.start + sg->memsz;
		pm.file_offset = sg->file_offset;
	}
	uint32_t index = profile_add_module(p, &pm);
	ALLOC_GROW(R->modules, p->nmodules, R->modules_cap);
	struct module_info *mi = &R->modules[index];
	memset(mi, 0, sizeof(*mi));
	if (idlen)
		memcpy(mi->build_id, m->build_id, idlen);
	mi->build_id_len = idlen;
	mi->key = key;
	if (*slot == HASHMAP_NONE)
		*slot = index;
	return index;
}

void resolver_add_module(struct resolver *R, const struct trace_module *m)
{
	char hex[2 * sizeof(R->modules[0].build_id) + 1];
	uint32_t idlen = m->build_id_len;
	if (idlen > sizeof(R->modules[0].build_id))
		idlen = sizeof(R->modules[0].build_id);
	for (uint32_t i = 0; i < idlen; i++)
		snprintf(hex + 2 * i, 3, "%02x", m->build_id[i]);
	hex[2 * idlen] = '\0';
	if (!R->nranges && !R->p->nmodules)
		R->first_pid = m->pid;
	else if (m->pid != R->first_pid)
		R->many_pids = 1;
	uint32_t index = module_index(R, m, idlen, hex);
	/* Address ranges: executable segments (all segments if none is marked), in this record's process. */
	int any_exec = 0;
	for (uint32_t i = 0; i < m->nsegments; i++)
		any_exec |= (m->segments[i].flags & TRACE_SEGMENT_EXEC) != 0;
	for (uint32_t i = 0; i < m->nsegments; i++) {
		const struct trace_segment *sg = &m->segments[i];
		if (any_exec && !(sg->flags & TRACE_SEGMENT_EXEC))
			continue;
		uint64_t start = m->load_bias + sg->vaddr;
		ALLOC_GROW(R->ranges, (uint64_t)R->nranges + 1, R->ranges_cap);
		R->ranges[R->nranges] = (struct range){ start, start + sg->memsz, index, R->nranges, 0,
							m->pid, m->id, m->time_ns, UINT64_MAX };
		R->nranges++;
	}
}

void resolver_unload_module(struct resolver *R, const struct trace_module_unload *u)
{
	/* Before resolver_finish_modules ranges are in record order: a record's are consecutive, the latest last. */
	int found = 0;
	for (uint32_t i = R->nranges; i-- > 0;) {
		struct range *r = &R->ranges[i];
		int match = r->pid == u->pid && r->trace_id == u->id && r->unload_ns == UINT64_MAX;
		if (match)
			r->unload_ns = u->time_ns;
		else if (found)
			return;
		found |= match;
	}
}

int resolver_many_processes(const struct resolver *R)
{
	return R->many_pids;
}

static int range_order(const void *a, const void *b)
{
	const struct range *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Say a symbolizer warning unless the same line was said already. */
static void warn_once(struct resolver *R, const char *warning)
{
	for (uint32_t i = 0; i < R->nwarned; i++)
		if (!strcmp(R->warned[i], warning))
			return;
	ALLOC_GROW(R->warned, (uint64_t)R->nwarned + 1, R->warned_cap);
	R->warned[R->nwarned++] = strdup_or_abort(warning);
	diag(R->o->diag, DIAG_WARNING, "%s", warning);
}

/* Open module index (once); want: the sorted addresses to be looked up in it (NULL: any). */
static struct symbol_module *open_module(struct resolver *R, uint32_t index, const uint64_t *want, size_t nwant)
{
	struct module_info *mi = &R->modules[index];
	if (mi->opened || !R->sym)
		return mi->sm;
	mi->opened = 1;
	struct profile_module *pm = &R->p->modules[index];
	char warning[1024] = "";
	mi->sm = symbolizer_module_for(R->sym, profile_string(R->p, pm->path), mi->build_id, mi->build_id_len,
				       want, nwant, warning, sizeof(warning));
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

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Mark overlapping ranges of a process and, if there are any, cut time into epochs at the unloads. */
static void find_overlaps(struct resolver *R)
{
	for (uint32_t i = 0; i < R->nranges; i++)
		for (uint32_t j = i + 1; j < R->nranges && R->ranges[j].pid == R->ranges[i].pid &&
					 R->ranges[j].start < R->ranges[i].end; j++)
			if (R->ranges[j].module != R->ranges[i].module)
				R->ranges[i].overlapped = R->ranges[j].overlapped = R->overlaps = 1;
	if (!R->overlaps)
		return;
	R->unloads = realloc_or_abort(NULL, (R->nranges + 1) * sizeof(*R->unloads));
	for (uint32_t i = 0; i < R->nranges; i++)
		if (R->ranges[i].unload_ns != UINT64_MAX)
			R->unloads[R->nunloads++] = R->ranges[i].unload_ns;
	qsort(R->unloads, R->nunloads, sizeof(*R->unloads), compare_u64);
}

void resolver_finish_modules(struct resolver *R)
{
	if (R->nranges)
		qsort(R->ranges, R->nranges, sizeof(*R->ranges), range_order);
	find_overlaps(R);
	if (!R->o->symbolize && R->o->open_modules)
		for (uint32_t i = 0; i < R->p->nmodules; i++)
			open_module(R, i, NULL, 0);
}

uint32_t resolver_epoch(const struct resolver *R, uint64_t time_ns)
{
	uint32_t lo = 0, hi = R->nunloads; /* unloads at or before time_ns */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (R->unloads[mid] <= time_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Was range r mapped at some time within epoch e? */
static int live_in_epoch(const struct resolver *R, const struct range *r, uint32_t e)
{
	uint64_t begin = e ? R->unloads[e - 1] : 0;
	uint64_t end = e < R->nunloads ? R->unloads[e] : UINT64_MAX;
	return r->load_ns < end && r->unload_ns > begin;
}

/* The process whose ranges an address of pid is looked up in (a one-process trace: its one; pid 0, a
 * stack no sample and no allocation used: the first process). */
static uint32_t space_of(const struct resolver *R, uint32_t pid)
{
	return R->many_pids && pid ? pid : R->first_pid;
}

/* Index of the first range of process pid starting after addr. */
static uint32_t range_after(const struct resolver *R, uint32_t pid, uint64_t addr)
{
	uint32_t lo = 0, hi = R->nranges;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const struct range *r = &R->ranges[mid];
		if (r->pid < pid || (r->pid == pid && r->start <= addr))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Index of the module whose range holds addr in process pid, or UINT32_MAX.
 * With an epoch, a module mapped in that epoch is preferred; otherwise (and
 * among equals) the one recorded last.
 */
static uint32_t find_module(const struct resolver *R, uint32_t pid, uint64_t addr, uint32_t epoch)
{
	uint32_t best = UINT32_MAX, best_order = 0;
	int best_live = 0;
	pid = space_of(R, pid);
	/* Ranges rarely overlap; look back a few for ones that hold addr. */
	for (uint32_t i = range_after(R, pid, addr), tries = 0; i > 0 && tries < 16; i--, tries++) {
		const struct range *r = &R->ranges[i - 1];
		if (r->pid != pid)
			break;
		if (addr >= r->end)
			continue;
		int live = epoch != RESOLVE_ANY_EPOCH && live_in_epoch(R, r, epoch);
		if (best == UINT32_MAX || live > best_live || (live == best_live && r->order > best_order)) {
			best = r->module;
			best_order = r->order;
			best_live = live;
		}
	}
	return best;
}

int resolver_is_ambiguous(const struct resolver *R, uint32_t pid, uint64_t ip, int is_return)
{
	if (!R->overlaps)
		return 0;
	uint64_t addr = ip - (is_return != 0);
	pid = space_of(R, pid);
	for (uint32_t i = range_after(R, pid, addr), tries = 0; i > 0 && tries < 16; i--, tries++) {
		const struct range *r = &R->ranges[i - 1];
		if (r->pid != pid)
			break;
		if (addr < r->end && r->overlapped)
			return 1;
	}
	return 0;
}

uint32_t resolver_add_address(struct resolver *R, uint32_t pid, uint64_t ip, int is_return, uint32_t epoch)
{
	uint32_t module = RESOLVE_ANY_MODULE;
	uint32_t *slot;
	int ambiguous = epoch != RESOLVE_ANY_EPOCH && resolver_is_ambiguous(R, pid, ip, is_return);
	if (ambiguous || R->many_pids) {
		/* The module decides what an address means: its process's map (at that time) says which.
		 * User-space addresses fit in 47 bits: module, ip and the flag make one key. */
		module = find_module(R, pid, ip - (is_return != 0), ambiguous ? epoch : RESOLVE_ANY_EPOCH);
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

/* The location of an address nothing could name: "module+0xoffset". */
static uint32_t unknown_location(struct resolver *R, const struct address *a, uint32_t module,
				 uint64_t lookup)
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
		snprintf(name, sizeof(name), "%s+0x%llx", slash ? slash + 1 : path,
			 (unsigned long long)(lookup - p->modules[module].load_bias));
	}
	uint32_t id = profile_intern(p, name);
	struct profile_function f = {
		.name = id, .system_name = id, .module = module, .flags = PROFILE_FUNCTION_UNKNOWN};
	struct profile_line line = {.function = function_index(R, &f, 0)};
	struct profile_location loc = {
		.address = a->ip, .module = module, .first_line = profile_add_line(p, &line), .nlines = 1};
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
		/* V8's tiers of one function are one function (jitmap.c) */
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
		.address = a->ip, .module = UINT32_MAX, .first_line = profile_add_line(p, &line), .nlines = 1};
	return profile_add_location(p, &loc);
}

/* Address a's module (UINT32_MAX: none). */
static uint32_t module_of(const struct resolver *R, const struct address *a)
{
	return a->module != RESOLVE_ANY_MODULE ? a->module
					       : find_module(R, a->pid, a->ip - a->is_return, RESOLVE_ANY_EPOCH);
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
		sm = open_module(R, module, want, nwant);
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

void resolver_resolve(struct resolver *R)
{
	uint32_t *order = realloc_or_abort(NULL, (R->naddresses ? R->naddresses : 1) * sizeof(*order));
	for (uint32_t i = 0; i < R->naddresses; i++)
		order[i] = i;
	/* Address order: the symbolizer's tables are then walked forward. */
	qsort_r(order, R->naddresses, sizeof(*order), address_order, R);
	/* Each module's addresses (module-relative, sorted: the address order),
	 * so that it reads only the debug info they need (symbolizer_module_for). */
	uint32_t nmodules = R->p->nmodules;
	uint32_t *module = realloc_or_abort(NULL, (R->naddresses ? R->naddresses : 1) * sizeof(*module));
	uint64_t *first = calloc_or_abort((size_t)nmodules + 1, sizeof(*first));
	for (uint32_t i = 0; i < R->naddresses; i++) {
		module[i] = module_of(R, &R->addresses[order[i]]);
		if (module[i] != UINT32_MAX)
			first[module[i] + 1]++;
	}
	for (uint32_t m = 0; m < nmodules; m++)
		first[m + 1] += first[m];
	uint64_t *want = realloc_or_abort(NULL, (first[nmodules] ? first[nmodules] : 1) * sizeof(*want));
	uint64_t *fill = realloc_or_abort(NULL, ((size_t)nmodules + 1) * sizeof(*fill));
	memcpy(fill, first, ((size_t)nmodules + 1) * sizeof(*fill));
	for (uint32_t i = 0; i < R->naddresses; i++) {
		const struct address *a = &R->addresses[order[i]];
		if (module[i] != UINT32_MAX)
			want[fill[module[i]]++] = a->ip - a->is_return - R->p->modules[module[i]].load_bias;
	}
	for (uint32_t i = 0; i < R->naddresses; i++) {
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
