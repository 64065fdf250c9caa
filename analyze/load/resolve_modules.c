/*
 * resolve_modules.c - the module maps addresses are looked up in: module
 * records into profile modules and address ranges, unloads, and which
 * module an address of a process meant at the time of its sample (see
 * resolve.h); and each module's symbolizer, opened once, with its warning
 * said once.
 *
 * Every process has its own address space: a module's ranges belong to the
 * pid of its record, and an address is looked up among its sample's
 * process's ranges. Equal module records of several processes (a fork
 * child records its parent's modules again under its own pid) share one
 * profile module, so each file is opened once. A trace of one process
 * (every trace before 1.4) pays nothing for this.
 *
 * Modules live from their record's time to their unload record's. Where two
 * modules' ranges overlap in one process (one dlclosed, another dlopened at
 * the same place; an exec), time decides: the run is cut into epochs at
 * every unload, and an address in an overlapped range is resolved in the
 * module live in the epoch of the sample (load.c makes one stack per epoch
 * for such samples). Traces without overlaps never pay for this.
 */
#include "resolve_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "diagnostics.h"
#include "symbolize.h"
#include "search.h"

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
struct symbol_module *resolve_open_module(struct resolver *R, uint32_t index, const uint64_t *want, size_t nwant)
{
	struct module_info *mi = &R->modules[index];
	if (mi->opened || !R->sym)
		return mi->sm;
	mi->opened = 1;
	struct profile_module *pm = &R->p->modules[index];
	char warning[1024] = "";
	mi->sm = mi->names_only ? symbolizer_module_names(R->sym, profile_string(R->p, pm->path), mi->build_id,
							  mi->build_id_len, warning, sizeof(warning))
				: symbolizer_module_for(R->sym, profile_string(R->p, pm->path), mi->build_id,
							mi->build_id_len, want, nwant, warning, sizeof(warning));
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

void resolver_system_names_only(struct resolver *R)
{
	for (uint32_t i = 0; i < R->p->nmodules; i++)
		R->modules[i].names_only = (R->p->modules[i].flags & PROFILE_MODULE_SYSTEM) != 0;
}

void resolver_module_detail(struct resolver *R, uint32_t module)
{
	if (module >= R->p->nmodules || !R->modules[module].names_only)
		return;
	/* One symbolizer module serves every mapping of a file (the same libc in each process): all of them. */
	const struct module_info *mi = &R->modules[module];
	uint32_t path = R->p->modules[module].path;
	for (uint32_t i = 0; i < R->p->nmodules; i++)
		if (R->p->modules[i].path == path && R->modules[i].build_id_len == mi->build_id_len &&
		    !memcmp(R->modules[i].build_id, mi->build_id, mi->build_id_len))
			R->modules[i].names_only = 0;
}

void resolver_finish_modules(struct resolver *R)
{
	if (R->nranges)
		qsort(R->ranges, R->nranges, sizeof(*R->ranges), range_order);
	find_overlaps(R);
	if (!R->o->symbolize && R->o->open_modules)
		for (uint32_t i = 0; i < R->p->nmodules; i++)
			resolve_open_module(R, i, NULL, 0);
}

uint32_t resolver_epoch(const struct resolver *R, uint64_t time_ns)
{
	return (uint32_t)u64_first_above(R->unloads, 0, R->nunloads, time_ns); /* unloads at or before time_ns */
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
uint32_t resolve_find_module(const struct resolver *R, uint32_t pid, uint64_t addr, uint32_t epoch)
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
