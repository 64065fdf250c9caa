/*
 * load_stacks.c - passes 2 and 3 of the loader (see load.c): the distinct
 * addresses of every raw stack resolved once, then each raw stack turned
 * into a profile stack of locations.
 *
 * Where two modules' ranges overlap (one dlclosed, another dlopened at the
 * same place; an exec), a raw stack touching the overlap means different
 * code at different times: its samples get one profile stack per epoch
 * (resolve.c), the addresses being resolved in the module mapped then.
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

/* Distinct-address index of each frame of raw stack s, resolved as of epoch. */
static void add_frames(struct loader *L, uint32_t s, uint32_t epoch, uint32_t *out)
{
	const struct raw_stack *rs = &L->raw[s];
	uint32_t depth;
	const uint64_t *ips = raw_frames(L, rs, &depth);
	for (uint32_t i = 0; i < depth; i++)
		out[i] = resolver_add_address(L->resolver, ips[i], frame_is_return(rs, i), epoch);
}

static int touches_overlap(const struct loader *L, uint32_t s)
{
	const struct raw_stack *rs = &L->raw[s];
	uint32_t depth;
	const uint64_t *ips = raw_frames(L, rs, &depth);
	for (uint32_t i = 0; i < depth; i++)
		if (resolver_is_ambiguous(L->resolver, ips[i], frame_is_return(rs, i)))
			return 1;
	return 0;
}

/* One more profile stack per (raw stack, epoch) for samples that touch an overlap. */
struct epoch_stacks {
	struct hashmap index; /* raw stack << 32 | epoch -> variant */
	uint32_t *raw;       /* variant -> raw stack */
	uint64_t *first;     /* variant -> its frames' addresses in addresses[] */
	uint32_t count, raw_cap, first_cap;
	uint32_t *addresses;
	uint64_t naddresses, addresses_cap;
};

static void split_by_epoch(struct loader *L, struct epoch_stacks *v)
{
	struct profile *p = L->p;
	uint8_t *touches = NULL;
	for (uint32_t s = 0; s < L->nraw; s++)
		if (touches_overlap(L, s)) {
			if (!touches)
				touches = calloc_or_abort(L->nraw, 1);
			touches[s] = 1;
		}
	if (!touches)
		return;
	for (uint64_t i = 0; i < p->nsamples; i++) {
		struct profile_sample *sm = &p->samples[i];
		if (sm->stack >= L->nraw || !touches[sm->stack])
			continue;
		uint32_t epoch = resolver_epoch(L->resolver, sm->time_ns);
		uint32_t *slot = hashmap_slot(&v->index, (uint64_t)sm->stack << 32 | epoch);
		if (*slot == HASHMAP_NONE) {
			uint32_t depth;
			raw_frames(L, &L->raw[sm->stack], &depth);
			ALLOC_GROW(v->raw, (uint64_t)v->count + 1, v->raw_cap);
			ALLOC_GROW(v->first, (uint64_t)v->count + 1, v->first_cap);
			ALLOC_GROW(v->addresses, v->naddresses + depth, v->addresses_cap);
			v->raw[v->count] = sm->stack;
			v->first[v->count] = v->naddresses;
			add_frames(L, sm->stack, epoch, v->addresses + v->naddresses);
			v->naddresses += depth;
			*slot = v->count++;
		}
		sm->stack = L->nraw + *slot;
	}
	free(touches);
}

/* 1 for each module that is the agent itself (libipscope-agent.so). */
static uint8_t *agent_modules(const struct profile *p)
{
	uint8_t *agent = calloc_or_abort(p->nmodules ? p->nmodules : 1, 1);
	for (uint32_t i = 0; i < p->nmodules; i++) {
		const char *path = profile_string(p, p->modules[i].path);
		const char *slash = strrchr(path, '/');
		agent[i] = !strncmp(slash ? slash + 1 : path, "libipscope-agent", 16);
	}
	return agent;
}

/* Append the profile stack whose frames have these distinct-address indexes,
 * without the agent's frames (unless nothing else is left). */
static void add_profile_stack(struct loader *L, const uint8_t *agent, const uint32_t *addresses,
			      uint32_t depth, uint32_t **locs, uint32_t *cap)
{
	ALLOC_GROW(*locs, depth, *cap);
	uint32_t kept = 0;
	for (uint32_t i = 0; i < depth; i++) {
		uint32_t loc = resolver_location(L->resolver, addresses[i]);
		uint32_t module = L->p->locations[loc].module;
		if (module == UINT32_MAX || !agent[module])
			(*locs)[kept++] = loc;
	}
	if (kept == 0)
		for (; kept < depth; kept++)
			(*locs)[kept] = resolver_location(L->resolver, addresses[kept]);
	profile_add_stack(L->p, *locs, kept);
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
		add_frames(L, s, RESOLVE_ANY_EPOCH, frame_address + frame_at[s]);
	struct epoch_stacks v = { 0 };
	hashmap_init(&v.index, 64);
	split_by_epoch(L, &v);
	resolver_resolve(R);

	uint32_t *locs = NULL, cap = 0, depth;
	uint8_t *agent = agent_modules(L->p);
	for (uint32_t s = 0; s < L->nraw; s++) {
		raw_frames(L, &L->raw[s], &depth);
		add_profile_stack(L, agent, frame_address + frame_at[s], depth, &locs, &cap);
	}
	for (uint32_t i = 0; i < v.count; i++) {
		raw_frames(L, &L->raw[v.raw[i]], &depth);
		add_profile_stack(L, agent, v.addresses + v.first[i], depth, &locs, &cap);
	}
	free(agent);
	hashmap_free(&v.index);
	free(v.raw);
	free(v.first);
	free(v.addresses);
	free(locs);
	free(frame_address);
	free(frame_at);
	L->stats->distinct_addresses = resolver_distinct(R);
	L->stats->unresolved_addresses = resolver_unresolved(R);
}

