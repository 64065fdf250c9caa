/*
 * load.c - trace -> profile (see load.h).
 *
 * Three passes, so that the costly part scales with distinct addresses, not
 * with samples:
 *   1. read: every record through the streaming reader; raw stacks are kept
 *      as instruction pointers, samples go straight into the profile, their
 *      stack index being the raw stack's index (one profile stack per raw one);
 *   2. resolve: hash the distinct (address, is-return-address) pairs, sort
 *      them by address, find each one's module by its PT_LOAD segments and
 *      symbolize them in address order (the symbolizer's index is walked
 *      forward, one module at a time), interning functions and lines;
 *   3. translate every raw stack into profile locations.
 *
 * Where two modules' ranges overlap (one dlclosed, another dlopened at the
 * same place; an exec), a raw stack touching the overlap means different
 * code at different times: its samples get one profile stack per epoch
 * (resolve.c), the addresses being resolved in the module mapped then.
 * Samples whose stack is empty or never defined get an "[unknown]" frame, so
 * every report adds up to the same total. The agent's own frames
 * (thread_trampoline under every thread, its allocation wrappers) are the
 * profiler's, not the program's: they never enter a profile stack, -C or
 * not, so stacks read as they would without the profiler.
 */
#include "load.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "hashmap.h"
#include "jitmap.h"
#include "resolve.h"
#include "terminal.h"
#include "trace.h"

struct raw_stack {
	uint64_t first; /* into loader.ips */
	uint32_t depth;
	uint32_t flags; /* TRACE_STACK_* */
	uint32_t defined; /* a STACK record gave its frames */
};

/* The one frame of an empty or undefined stack: resolves to "[unknown]". */
static const uint64_t no_frames[1] = { 0 };

struct loader {
	struct profile *p;
	struct load_stats *stats;
	struct resolver *resolver;
	/*
	 * trace stack id -> raw stack index. collect numbers stacks 1, 2, 3...
	 * so small ids go through a plain array (one load per sample, not a
	 * hash probe); other ids through the map.
	 */
	uint32_t *stack_by_id;
	uint32_t stack_by_id_cap;
	struct u64map stack_ids;
	struct raw_stack *raw;
	uint32_t nraw, raw_cap;
	uint64_t *ips;
	uint64_t nips, ips_cap;
	struct u64map threads; /* pid << 32 | tid -> thread index */
	/* Samples of a few threads interleave: remember the last few. */
	uint64_t recent_thread_key[4];
	uint32_t recent_thread[4];
	uint32_t recent_next;
	uint64_t last_time_ns;
	uint64_t loss_samples;
	/* JIT_MAP records: the symbols, and per map file its lines and bad lines */
	struct jit_symbols jit;
	struct jit_file {
		char *path;
		uint32_t pid;
		uint64_t lines, bad, first_bad;
	} *jit_files;
	uint32_t njit_files;
};

void load_options_init(struct load_options *o)
{
	memset(o, 0, sizeof(*o));
	o->demangle = 1;
	o->symbolize = 1;
	o->open_modules = 1;
}

void load_stats_free(struct load_stats *stats)
{
	if (stats) {
		free(stats->meta);
		stats->meta = NULL;
		stats->nmeta = 0;
	}
}

static uint32_t thread_index(struct loader *L, uint32_t pid, uint32_t tid)
{
	uint64_t key = (uint64_t)pid << 32 | tid;
	for (int i = 0; i < 4; i++)
		if (L->recent_thread_key[i] == key && L->recent_thread[i] != HASHMAP_NONE)
			return L->recent_thread[i];
	uint32_t *slot = u64map_slot(&L->threads, key);
	if (*slot == HASHMAP_NONE) {
		struct profile_thread t = {.pid = pid, .tid = tid};
		*slot = profile_add_thread(L->p, &t);
	}
	uint32_t i = L->recent_next++ & 3;
	L->recent_thread_key[i] = key;
	return L->recent_thread[i] = *slot;
}

#define DENSE_STACK_IDS (1u << 24)

static uint32_t new_raw_stack(struct loader *L)
{
	if (L->nraw == L->raw_cap) {
		L->raw_cap = L->raw_cap ? L->raw_cap * 2 : 1024;
		L->raw = realloc_or_abort(L->raw, L->raw_cap * sizeof(*L->raw));
	}
	L->raw[L->nraw] = (struct raw_stack){0};
	return L->nraw++;
}

/* Raw stack index of a trace stack id; a placeholder if not defined yet. */
static uint32_t stack_index(struct loader *L, uint32_t id)
{
	if (id < DENSE_STACK_IDS) {
		if (id >= L->stack_by_id_cap) {
			uint32_t cap = L->stack_by_id_cap ? L->stack_by_id_cap : 4096;
			while (cap <= id)
				cap *= 2;
			L->stack_by_id = realloc_or_abort(L->stack_by_id, cap * sizeof(*L->stack_by_id));
			memset(L->stack_by_id + L->stack_by_id_cap, 0xff,
			       (cap - L->stack_by_id_cap) * sizeof(*L->stack_by_id));
			L->stack_by_id_cap = cap;
		}
		if (L->stack_by_id[id] == HASHMAP_NONE)
			L->stack_by_id[id] = new_raw_stack(L);
		return L->stack_by_id[id];
	}
	uint32_t *slot = u64map_slot(&L->stack_ids, id);
	if (*slot == HASHMAP_NONE)
		*slot = new_raw_stack(L);
	return *slot;
}

static void add_stack(struct loader *L, const struct trace_stack *s)
{
	uint32_t i = stack_index(L, s->id);
	if (L->nips + s->nframes > L->ips_cap) {
		while (L->nips + s->nframes > L->ips_cap)
			L->ips_cap = L->ips_cap ? L->ips_cap * 2 : 65536;
		L->ips = realloc_or_abort(L->ips, L->ips_cap * sizeof(*L->ips));
	}
	memcpy(L->ips + L->nips, s->ips, s->nframes * sizeof(*s->ips));
	L->raw[i].first = L->nips;
	L->raw[i].depth = s->nframes;
	L->raw[i].flags = s->flags;
	L->raw[i].defined = 1;
	L->nips += s->nframes;
	if (L->stats) {
		L->stats->stack_records++;
		L->stats->truncated_stacks += (s->flags & TRACE_STACK_TRUNCATED) != 0;
	}
}

static void add_samples(struct loader *L, const struct trace_samples *b)
{
	struct profile *p = L->p;
	for (uint32_t i = 0; i < b->count; i++) {
		const struct trace_sample *ts = &b->samples[i];
		struct profile_sample s = {
			.stack = stack_index(L, ts->stack_id),
			.thread = thread_index(L, ts->pid, ts->tid),
			.time_ns = ts->time_ns,
			.weight = ts->weight,
		};
		profile_add_sample(p, &s);
		if (ts->time_ns > L->last_time_ns)
			L->last_time_ns = ts->time_ns;
	}
}

static void add_meta(struct loader *L, const struct trace_meta *m)
{
	struct profile *p = L->p;
	uint32_t value = profile_intern(p, m->value);
	if (!strcmp(m->key, TRACE_META_COMMAND))
		p->command = value;
	else if (!strcmp(m->key, TRACE_META_MODE))
		p->mode = value;
	else if (!strcmp(m->key, TRACE_META_SOURCE))
		p->source = value;
	else if (!strcmp(m->key, TRACE_META_INTERVAL_NS))
		p->interval_ns = strtoull(m->value, NULL, 10);
	else if (!strcmp(m->key, TRACE_META_START_REALTIME_NS))
		p->start_realtime_ns = strtoull(m->value, NULL, 10);
	else if (!strcmp(m->key, TRACE_META_START_MONOTONIC_NS))
		p->start_ns = strtoull(m->value, NULL, 10);
	struct load_stats *st = L->stats;
	if (st) {
		st->meta = realloc_or_abort(st->meta, (st->nmeta + 1) * sizeof(*st->meta));
		st->meta[st->nmeta].key = profile_intern(p, m->key);
		st->meta[st->nmeta].value = value;
		st->nmeta++;
	}
}

static void add_thread_record(struct loader *L, const struct trace_thread *t)
{
	uint32_t i = thread_index(L, t->pid, t->tid);
	if (t->name && *t->name)
		L->p->threads[i].name = profile_intern(L->p, t->name);
}

/* A JIT_MAP record: its lines into the JIT symbols, bad ones counted per map. */
static void add_jit_map(struct loader *L, const struct trace_jit_map *j)
{
	struct jit_file *f = NULL;
	for (uint32_t i = 0; i < L->njit_files && !f; i++)
		if (L->jit_files[i].pid == j->pid && !strcmp(L->jit_files[i].path, j->path))
			f = &L->jit_files[i];
	if (!f) {
		L->jit_files = realloc_or_abort(L->jit_files, (L->njit_files + 1) * sizeof(*L->jit_files));
		f = &L->jit_files[L->njit_files++];
		*f = (struct jit_file){.path = strdup(j->path), .pid = j->pid};
		if (!f->path)
			abort_out_of_memory();
	}
	uint64_t first_bad = 0;
	size_t bad = jit_symbols_add(&L->jit, j->text, j->text_len, f->lines, &first_bad);
	if (bad && !f->bad)
		f->first_bad = first_bad;
	f->bad += bad;
	for (uint32_t i = 0; i < j->text_len; i++)
		f->lines += j->text[i] == '\n';
}

/* One warning per map with lines that are not "START SIZE name". */
static void finish_jit_maps(struct loader *L)
{
	for (uint32_t i = 0; i < L->njit_files; i++) {
		const struct jit_file *f = &L->jit_files[i];
		if (f->bad)
			fprintf(stderr, "analyze: warning: %s (pid %u, copied into the trace): %" PRIu64
					" of %" PRIu64 " lines are not 'START SIZE name' in hex (the first: line %"
					PRIu64 "): skipped\n",
				f->path, f->pid, f->bad, f->lines, f->first_bad);
		free(f->path);
	}
	free(L->jit_files);
	jit_symbols_finish(&L->jit);
	if (L->jit.n)
		resolver_set_jit(L->resolver, &L->jit);
}

static void add_end(struct loader *L, const struct trace_end *e)
{
	struct profile *p = L->p;
	p->ended = 1;
	p->wait_status = e->wait_status;
	if (e->time_ns > L->last_time_ns)
		L->last_time_ns = e->time_ns;
	if (e->lost_samples > L->loss_samples)
		L->loss_samples = e->lost_samples;
	if (L->stats) {
		L->stats->end_samples = e->samples;
		L->stats->end_weight = e->weight;
		L->stats->end_flags = e->flags;
	}
}

/* A sample naming a stack no record defined is kept (as [unknown]), and said once. */
static void warn_undefined_stacks(struct loader *L, const char *path)
{
	uint32_t undefined = 0;
	for (uint32_t s = 0; s < L->nraw; s++)
		undefined += !L->raw[s].defined;
	if (!undefined)
		return;
	uint64_t samples = 0;
	for (uint64_t i = 0; i < L->p->nsamples; i++)
		samples += !L->raw[L->p->samples[i].stack].defined;
	fprintf(stderr, "analyze: warning: %s: %" PRIu64 " samples refer to %u stacks the trace never "
			"defines: shown as [unknown]\n", path, samples, undefined);
}

/* Pass 1. Returns 0, or -1 after printing the reader's error. */
static int read_trace(struct loader *L, const char *path)
{
	char err[512];
	struct trace_reader *r = trace_reader_open(path, err, sizeof(err));
	if (!r) {
		fprintf(stderr, "analyze: %s\n", err);
		return -1;
	}
	struct trace_record rec;
	struct progress pr;
	progress_init(&pr);
	uint64_t records = 0;
	int got;
	while ((got = trace_reader_next(r, &rec)) == 1) {
		if ((++records & 4095) == 0)
			progress_update(&pr, "analyze: reading %s: %.0f MiB, %llu samples", path,
					(double)trace_reader_compressed_bytes(r) / 1048576.0,
					(unsigned long long)L->p->nsamples);
		switch (rec.type) {
		case TRACE_META:
			add_meta(L, &rec.u.meta);
			break;
		case TRACE_MODULE:
			resolver_add_module(L->resolver, &rec.u.module);
			break;
		case TRACE_MODULE_UNLOAD:
			resolver_unload_module(L->resolver, &rec.u.unload);
			break;
		case TRACE_THREAD:
			add_thread_record(L, &rec.u.thread);
			break;
		case TRACE_STACK:
			add_stack(L, &rec.u.stack);
			break;
		case TRACE_SAMPLES:
			add_samples(L, &rec.u.samples);
			break;
		case TRACE_LOSS:
			L->loss_samples += rec.u.loss.samples;
			break;
		case TRACE_END:
			add_end(L, &rec.u.end);
			break;
		case TRACE_JIT_MAP:
			add_jit_map(L, &rec.u.jit_map);
			break;
		default: /* types newer than us: nothing to do */
			break;
		}
	}
	progress_done(&pr);
	if (got < 0) {
		fprintf(stderr, "analyze: %s\n", trace_reader_error(r));
		trace_reader_close(r);
		return -1;
	}
	int truncated = trace_reader_truncated(r);
	if (truncated)
		fprintf(stderr, "analyze: warning: %s\n", trace_reader_error(r));
	warn_undefined_stacks(L, path);
	finish_jit_maps(L);
	if (L->stats) {
		L->stats->truncated = truncated;
		L->stats->compressed_bytes = trace_reader_compressed_bytes(r);
		L->stats->raw_bytes = trace_reader_raw_bytes(r);
		trace_reader_version(r, &L->stats->version_major, &L->stats->version_minor);
	}
	trace_reader_close(r);
	struct profile *p = L->p;
	p->lost_samples = L->loss_samples;
	if (p->start_ns && L->last_time_ns > p->start_ns)
		p->duration_ns = L->last_time_ns - p->start_ns;
	return 0;
}

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
	struct u64map index; /* raw stack << 32 | epoch -> variant */
	uint32_t *raw;       /* variant -> raw stack */
	uint64_t *first;     /* variant -> its frames' addresses in addresses[] */
	uint32_t count, cap;
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
		uint32_t *slot = u64map_slot(&v->index, (uint64_t)sm->stack << 32 | epoch);
		if (*slot == HASHMAP_NONE) {
			uint32_t depth;
			raw_frames(L, &L->raw[sm->stack], &depth);
			if (v->count == v->cap) {
				v->cap = v->cap ? 2 * v->cap : 16;
				v->raw = realloc_or_abort(v->raw, v->cap * sizeof(*v->raw));
				v->first = realloc_or_abort(v->first, v->cap * sizeof(*v->first));
			}
			while (v->naddresses + depth > v->addresses_cap) {
				v->addresses_cap = v->addresses_cap ? 2 * v->addresses_cap : 256;
				v->addresses = realloc_or_abort(v->addresses, v->addresses_cap * sizeof(*v->addresses));
			}
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
	if (depth > *cap) {
		*cap = depth;
		*locs = realloc_or_abort(*locs, *cap * sizeof(**locs));
	}
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

/* Passes 2 and 3: resolve the distinct addresses, then build the stacks. */
static void build_stacks(struct loader *L)
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
	u64map_init(&v.index, 64);
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
	u64map_free(&v.index);
	free(v.raw);
	free(v.first);
	free(v.addresses);
	free(locs);
	free(frame_address);
	free(frame_at);
	if (L->stats) {
		L->stats->distinct_addresses = resolver_distinct(R);
		L->stats->unresolved_addresses = resolver_unresolved(R);
	}
}

struct profile *load_trace(const char *path, const struct load_options *o, struct load_stats *stats)
{
	struct load_options defaults;
	if (!o) {
		load_options_init(&defaults);
		o = &defaults;
	}
	if (stats)
		memset(stats, 0, sizeof(*stats));
	struct loader L = {.stats = stats};
	memset(L.recent_thread, 0xff, sizeof(L.recent_thread));
	L.p = profile_new();
	if (!L.p) {
		fputs("ipscope: out of memory\n", stderr);
		return NULL;
	}
	L.resolver = resolver_new(L.p, o);
	u64map_init(&L.stack_ids, 1024);
	u64map_init(&L.threads, 64);

	int rc = read_trace(&L, path);
	if (rc == 0) {
		resolver_finish_modules(L.resolver);
		build_stacks(&L);
	}
	resolver_free(L.resolver);
	jit_symbols_free(&L.jit);
	u64map_free(&L.stack_ids);
	u64map_free(&L.threads);
	free(L.raw);
	free(L.ips);
	free(L.stack_by_id);
	if (rc) {
		profile_free(L.p);
		load_stats_free(stats);
		return NULL;
	}
	return L.p;
}
