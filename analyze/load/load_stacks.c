/*
 * load_stacks.c - passes 2 and 3 of the loader (see load.c): the distinct
 * addresses of every raw stack resolved once, then each raw stack turned
 * into a profile stack of locations.
 *
 * Addresses are resolved in the address space of the stack's process (the
 * pid of the samples that use it: collect never merges stacks across
 * processes). Where two modules' ranges overlap (one dlclosed, another
 * dlopened at the same place; an exec), a raw stack touching the overlap
 * means different code at different times: its samples get one profile
 * stack per epoch (resolve.c), the addresses being resolved in the module
 * mapped then. A stack the agent cut at max frames gets a [truncated]
 * frame at its root, so reports show where the missing part would be.
 * Empty and never-defined stacks get one frame at address 0, which resolves
 * to "[unknown]". The agent's own frames (thread_trampoline under every
 * thread, its allocation wrappers) are the profiler's, not the program's:
 * they never enter a profile stack, -C or not, so stacks read as they
 * would without the profiler.
 */
#include "load_internal.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"

/* The one frame of an empty or undefined stack: resolves to "[unknown]". */
static const uint64_t no_frames[1] = { 0 };

/* A raw stack's frames (never none) and whether frame i is a return address. */
static const uint64_t *raw_frames(const struct loader *L, const struct raw_stack *rs, uint32_t *depth)
{
	*depth = rs->depth ? rs->depth : 1;
	return rs->depth ? L->ips + rs->first : no_frames;
}

static int frame_is_return(const struct raw_stack *rs, uint32_t i)
{
	/* Only an exact leaf is looked up as is; every other ip is a return
	 * address: its call is the instruction before. */
	return rs->depth && (i > 0 || !(rs->flags & TRACE_STACK_LEAF_EXACT));
}

/* Distinct-address index of each frame of raw stack s, resolved in process pid as of epoch. */
static void add_frames(struct loader *L, uint32_t s, uint32_t pid, uint32_t epoch, uint32_t *out)
{
	const struct raw_stack *rs = &L->raw[s];
	uint32_t depth;
	const uint64_t *ips = raw_frames(L, rs, &depth);
	for (uint32_t i = 0; i < depth; i++)
		out[i] = resolver_add_address(L->resolver, pid, ips[i], frame_is_return(rs, i), epoch);
}

static int touches_overlap(const struct loader *L, uint32_t s, uint32_t pid)
{
	const struct raw_stack *rs = &L->raw[s];
	uint32_t depth;
	const uint64_t *ips = raw_frames(L, rs, &depth);
	for (uint32_t i = 0; i < depth; i++)
		if (resolver_is_ambiguous(L->resolver, pid, ips[i], frame_is_return(rs, i)))
			return 1;
	return 0;
}

/*
 * One more profile stack per (raw stack, process, epoch) for samples that
 * touch an overlap, or whose process is not the one the stack was first
 * seen in (collect never merges stacks of two processes; a crafted trace
 * may).
 */
struct variant {
	uint32_t raw, pid, epoch;
	uint64_t first; /* its frames' addresses in addresses[] */
};

struct epoch_stacks {
	struct hashmap index; /* by hash of (raw, pid, epoch) */
	struct variant *variants;
	uint32_t count, cap;
	uint32_t *addresses;
	uint64_t naddresses, addresses_cap;
	const struct variant *seek;
};

static int variant_equal(const void *ctx, uint32_t id)
{
	const struct epoch_stacks *v = ctx;
	const struct variant *a = &v->variants[id], *b = v->seek;
	return a->raw == b->raw && a->pid == b->pid && a->epoch == b->epoch;
}

static uint32_t variant_of(struct loader *L, struct epoch_stacks *v, uint32_t raw, uint32_t pid, uint32_t epoch)
{
	struct variant key = { raw, pid, epoch, 0 };
	uint64_t h = hash_combine(hash_combine(hash_u64(raw), pid), epoch);
	v->seek = &key;
	uint32_t id = hashmap_find(&v->index, h, variant_equal, v);
	if (id != HASHMAP_NONE)
		return id;
	uint32_t depth;
	raw_frames(L, &L->raw[raw], &depth);
	ALLOC_GROW(v->variants, (uint64_t)v->count + 1, v->cap);
	ALLOC_GROW(v->addresses, v->naddresses + depth, v->addresses_cap);
	key.first = v->naddresses;
	v->variants[v->count] = key;
	add_frames(L, raw, pid, epoch, v->addresses + v->naddresses);
	v->naddresses += depth;
	hashmap_insert(&v->index, h, v->count);
	return v->count++;
}

static void split_by_epoch(struct loader *L, struct epoch_stacks *v)
{
	struct profile *p = L->p;
	uint8_t *touches = NULL;
	for (uint32_t s = 0; s < L->nraw; s++)
		if (touches_overlap(L, s, L->raw[s].pid)) {
			if (!touches)
				touches = calloc_or_abort(L->nraw, 1);
			touches[s] = 1;
		}
	if (!touches && !L->many_pid_stacks)
		return;
	for (uint64_t i = 0; i < p->nsamples; i++) {
		struct profile_sample *sm = &p->samples[i];
		if (sm->stack >= L->nraw)
			continue;
		uint32_t pid = p->threads[sm->thread].pid;
		int other = pid != L->raw[sm->stack].pid;
		int overlap = touches && (other ? touches_overlap(L, sm->stack, pid) : touches[sm->stack]);
		if (!other && !overlap)
			continue;
		uint32_t epoch = overlap ? resolver_epoch(L->resolver, sm->time_ns) : RESOLVE_ANY_EPOCH;
		sm->stack = L->nraw + variant_of(L, v, sm->stack, pid, epoch);
	}
	free(touches);
}

/* A frame of no module that says something of a stack (text), made once into *made. */
static uint32_t pseudo_location(struct loader *L, uint32_t *made, const char *text)
{
	struct profile *p = L->p;
	if (*made != UINT32_MAX)
		return *made;
	uint32_t name = profile_intern(p, text);
	struct profile_function f = { .name = name, .system_name = name, .module = UINT32_MAX };
	struct profile_line line = { .function = profile_add_function(p, &f) };
	struct profile_location loc = { .address = 0, .module = UINT32_MAX, .first_line = profile_add_line(p, &line),
					.nlines = 1 };
	return *made = profile_add_location(p, &loc);
}

/* The frame that marks a stack cut at max frames: its root end is missing. */
static uint32_t truncated_location(struct loader *L)
{
	return pseudo_location(L, &L->truncated_location, "[truncated]");
}

/* 1 for each module that is the agent itself. */
static uint8_t *agent_modules(const struct profile *p)
{
	uint8_t *agent = calloc_or_abort(p->nmodules ? p->nmodules : 1, 1);
	for (uint32_t i = 0; i < p->nmodules; i++) {
		agent[i] = trace_path_is_agent(profile_string(p, p->modules[i].path)) != 0;
	}
	return agent;
}

/* The "[thread exit: unsampled]" leaf of a charge (TRACE_STACK_EXIT_CHARGE). */
static uint32_t exit_charge_location(struct loader *L)
{
	return pseudo_location(L, &L->exit_charge_location, "[thread exit: unsampled]");
}

/* Append the profile stack whose frames have these distinct-address indexes,
 * without the agent's frames (unless nothing else is left), under a
 * [thread exit: unsampled] leaf for a charge, and a [truncated] root when
 * the agent cut it at max frames. */
static void add_profile_stack(struct loader *L, const uint8_t *agent, const uint32_t *addresses,
			      uint32_t depth, uint32_t flags, uint32_t **locs, uint32_t *cap)
{
	ALLOC_GROW(*locs, (uint64_t)depth + 2, *cap);
	uint32_t kept = 0;
	if (flags & TRACE_STACK_EXIT_CHARGE)
		(*locs)[kept++] = exit_charge_location(L);
	uint32_t first = kept;
	for (uint32_t i = 0; i < depth; i++) {
		uint32_t loc = resolver_location(L->resolver, addresses[i]);
		uint32_t module = L->p->locations[loc].module;
		if (module == UINT32_MAX || !agent[module])
			(*locs)[kept++] = loc;
	}
	if (kept == first)
		for (uint32_t i = 0; i < depth; i++)
			(*locs)[kept++] = resolver_location(L->resolver, addresses[i]);
	int truncated = (flags & TRACE_STACK_TRUNCATED) != 0;
	if (truncated)
		(*locs)[kept++] = truncated_location(L);
	profile_add_stack(L->p, *locs, kept);
}

/*
 * Reports that hide system frames (tree, flat without -C, --focus or
 * --ignore: load_options.system_names_only) show a system frame only where
 * a stack has no other frame to show: its innermost hidden frame then
 * stands for it (report/filter.c). The program's addresses are resolved
 * first; a stack none of whose frames outside system modules names a
 * function of the program's (every one a startup function, or none at all)
 * has its system modules opened whole, every other system module by its
 * symbol tables alone (resolver_system_names_only). Off-CPU samples show the
 * call they wait in (a system frame): such traces are resolved whole.
 * Allocation stacks lose their leaf-side frames named as the allocator's
 * (load_alloc_leaves.c), a program's function too (an atexit handler named
 * tcache_init): in a trace with allocations such a frame is not counted as
 * one that shows. System frames are named the same by their symbol tables as
 * by their DWARF where the stripping reads them (malloc, operator new).
 */
static void resolve_for_hidden_system(struct loader *L, const uint32_t *frame_address, const uint64_t *frame_at,
				      const struct epoch_stacks *v)
{
	struct resolver *R = L->resolver;
	resolver_resolve(R, RESOLVE_PROGRAM);
	resolver_system_names_only(R);
	uint8_t *agent = agent_modules(L->p);
	for (uint32_t s = 0; s < L->nraw + v->count; s++) {
		const struct raw_stack *rs = &L->raw[s < L->nraw ? s : v->variants[s - L->nraw].raw];
		const uint32_t *addresses = s < L->nraw ? frame_address + frame_at[s]
							: v->addresses + v->variants[s - L->nraw].first;
		uint32_t depth, shown = 0;
		raw_frames(L, rs, &depth);
		for (uint32_t i = 0; i < depth && !shown; i++) {
			int system;
			uint32_t m = resolver_address_module(R, addresses[i], &system);
			if (system || (m != UINT32_MAX && agent[m]))
				continue;
			/* Its outermost line, shown with --no-inline too (filter.c's first_kept). */
			const struct profile_location *loc = &L->p->locations[resolver_location(R, addresses[i])];
			if (!loc->nlines)
				continue;
			const struct profile_function *f =
				&L->p->functions[L->p->lines[loc->first_line + loc->nlines - 1].function];
			const char *new_kind = NULL;
			shown = !(f->flags & PROFILE_FUNCTION_SYSTEM) &&
				!(L->saw_allocs && alloc_allocator_function(profile_string(L->p, f->name), &new_kind));
		}
		for (uint32_t i = 0; i < depth && !shown; i++) {
			int system;
			uint32_t m = resolver_address_module(R, addresses[i], &system);
			if (m != UINT32_MAX && (system || agent[m]))
				resolver_module_detail(R, m);
		}
	}
	free(agent);
	resolver_resolve(R, RESOLVE_SYSTEM); /* last: it tells overloads apart, every function known */
}

void loader_build_stacks(struct loader *L)
{
	struct resolver *R = L->resolver;
	/* Remember, per raw frame, which distinct address it is (empty stacks have one frame). */
	uint64_t *frame_at = realloc_or_abort(NULL, (L->nraw ? L->nraw : 1) * sizeof(*frame_at));
	uint64_t nframes = 0;
	for (uint32_t s = 0; s < L->nraw; s++) {
		frame_at[s] = nframes;
		nframes += L->raw[s].depth ? L->raw[s].depth : 1;
	}
	uint32_t *frame_address = realloc_or_abort(NULL, (nframes ? nframes : 1) * sizeof(*frame_address));
	for (uint32_t s = 0; s < L->nraw; s++)
		add_frames(L, s, L->raw[s].pid, RESOLVE_ANY_EPOCH, frame_address + frame_at[s]);
	struct epoch_stacks v = { 0 };
	hashmap_init(&v.index, 64);
	split_by_epoch(L, &v);
	const char *mode = profile_string(L->p, L->p->mode);
	if (L->o->system_names_only && !L->stats->off_cpu_samples &&
	    strncmp(mode ? mode : "", "wall", 4))
		resolve_for_hidden_system(L, frame_address, frame_at, &v);
	else
		resolver_resolve(R, RESOLVE_PROGRAM | RESOLVE_SYSTEM);

	uint32_t *locs = NULL, cap = 0, depth;
	uint8_t *agent = agent_modules(L->p);
	for (uint32_t s = 0; s < L->nraw; s++) {
		raw_frames(L, &L->raw[s], &depth);
		add_profile_stack(L, agent, frame_address + frame_at[s], depth, L->raw[s].flags, &locs, &cap);
	}
	for (uint32_t i = 0; i < v.count; i++) {
		const struct raw_stack *rs = &L->raw[v.variants[i].raw];
		raw_frames(L, rs, &depth);
		add_profile_stack(L, agent, v.addresses + v.variants[i].first, depth, rs->flags, &locs, &cap);
	}
	free(agent);
	hashmap_free(&v.index);
	free(v.variants);
	free(v.addresses);
	free(locs);
	free(frame_address);
	free(frame_at);
	L->stats->distinct_addresses = resolver_distinct(R);
	L->stats->unresolved_addresses = resolver_unresolved(R);
}

