/*
 * export_pprof.c - pprof's profile.proto (perftools.profiles.Profile),
 * gzip-compressed, as `go tool pprof` reads it.
 *
 * The model already has pprof's shape (profile.h), so tables map one to one:
 * module i is Mapping i+1, function i is Function i+1, location i is
 * Location i+1 with its inline chain as lines (innermost first), and the
 * model's string table is the start of the pprof string table (its id 0 is
 * already ""). A Sample, packed on its own after the rest (write_samples),
 * is one distinct (stack, thread) pair with labels "thread" (the name) and
 * "tid" (numeric), in a trace of many processes also "pid" (numeric) and
 * "command" (the program: pprof -tagfocus=command=cc1 keeps apart the mains
 * of a build's programs), and one value per value type of the profile, in the
 * profile's order: for a CPU trace samples/count (the weight in timer
 * periods) and cpu/nanoseconds (that times the interval), as Go writes them.
 * default_sample_type is the displayed type of the exported one, so a CPU
 * trace opens on cpu as Go's CPU profiles do. An allocation profile's
 * period_type is a heap profile's (space/bytes, see alloc_period), unless
 * its CPU samples are what is exported. A diff profile's base samples
 * (negated, their threads flagged PROFILE_THREAD_DIFF_BASE) also get the
 * label pprof::base=true: the profile `go tool pprof -diff_base` builds.
 */
#include "export.h"
#include "export_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "arith.h"

#include "profile.pb-c.h"

#ifndef IPSCOPE_VERSION
#define IPSCOPE_VERSION "unknown"
#endif

typedef Perftools__Profiles__Profile PprofProfile;
typedef Perftools__Profiles__ValueType PprofValueType;
typedef Perftools__Profiles__Sample PprofSample;
typedef Perftools__Profiles__Label PprofLabel;
typedef Perftools__Profiles__Mapping PprofMapping;
typedef Perftools__Profiles__Location PprofLocation;
typedef Perftools__Profiles__Line PprofLine;
typedef Perftools__Profiles__Function PprofFunction;

/* The strings pprof needs beyond the model's: appended after them. */
enum extra_string {
	STR_THREAD,
	STR_TID,
	STR_EXPORTER,
	STR_BASE,
	STR_TRUE,
	STR_ALLOCATION,
	STR_PID,
	STR_COMMAND,
	STR_SPACE,
	STR_BYTES,
	STR_OBJECTS,
	STR_COUNT,
	NEXTRA
};

static const char *const extra_strings[NEXTRA] = {
	"thread", "tid", ("ipscope@" IPSCOPE_VERSION), "pprof::base", "true", "allocation", "pid", "command",
	"space", "bytes", "objects", "count",
};

/* An allocation profile's leaf ("malloc 32 B") is a label in pprof, as Go
 * labels a heap sample with its bytes: pprof's flat then charges the
 * allocating frame, as analyze flat does. The leaf's function name, or 0. */
static uint32_t alloc_leaf(const struct profile *p, uint32_t stack)
{
	const struct profile_stack *s = &p->stacks[stack];
	if (s->depth < 2)
		return 0;
	const struct profile_location *l = &p->locations[p->stack_locations[s->first]];
	const struct profile_function *f = &p->functions[p->lines[l->first_line].function];
	return f->flags & PROFILE_FUNCTION_ALLOC_LEAF ? f->name : 0;
}

/* Labels per thread: thread, tid and, for a diff's base run, pprof::base. */
#define LABELS_PER_THREAD 5

/* All the message storage, allocated as a few arrays, freed together. */
struct pprof {
	PprofProfile profile;
	PprofValueType sample_type[PROFILE_MAX_VALUE_TYPES], period_type;
	PprofValueType *sample_type_ptrs[PROFILE_MAX_VALUE_TYPES];
	char **strings;
	int64_t comments[2];
	PprofMapping *mappings, **mapping_ptrs;
	PprofFunction *functions, **function_ptrs;
	PprofLine *lines, **line_ptrs;
	PprofLocation *locations, **location_ptrs;
	PprofLabel *labels, **label_ptrs; /* LABELS_PER_THREAD per thread, nlabels of them used */
	uint8_t *nlabels;                 /* per thread */
	/* Samples are not in the Profile message: they are packed one by one
	 * after it (see write_samples), from these. */
	struct export_stacks sums; /* one per Sample, those kept by --mincount first */
	uint64_t nkept;
	uint64_t *location_ids; /* each used stack once, leaf first, as ids */
	uint64_t *stack_ids;    /* per stack: its first entry in location_ids */
};

static size_t count_or_one(size_t n)
{
	return n ? n : 1;
}

static int fill_tables(struct pprof *x, const struct profile *p)
{
	x->mappings = calloc(count_or_one(p->nmodules), sizeof(*x->mappings));
	x->mapping_ptrs = calloc(count_or_one(p->nmodules), sizeof(*x->mapping_ptrs));
	x->functions = calloc(count_or_one(p->nfunctions), sizeof(*x->functions));
	x->function_ptrs = calloc(count_or_one(p->nfunctions), sizeof(*x->function_ptrs));
	x->lines = calloc(count_or_one(p->nlines), sizeof(*x->lines));
	x->line_ptrs = calloc(count_or_one(p->nlines), sizeof(*x->line_ptrs));
	x->locations = calloc(count_or_one(p->nlocations), sizeof(*x->locations));
	x->location_ptrs = calloc(count_or_one(p->nlocations), sizeof(*x->location_ptrs));
	if (!x->mappings || !x->mapping_ptrs || !x->functions || !x->function_ptrs || !x->lines ||
	    !x->line_ptrs || !x->locations || !x->location_ptrs)
		return -1;
	for (uint32_t i = 0; i < p->nmodules; i++) {
		const struct profile_module *m = &p->modules[i];
		PprofMapping *pm = &x->mappings[i];
		perftools__profiles__mapping__init(pm);
		pm->id = i + 1;
		pm->memory_start = m->start;
		pm->memory_limit = m->limit;
		pm->file_offset = m->file_offset;
		pm->filename = m->path;
		pm->build_id = m->build_id;
		/* pprof re-symbolizes a mapping unless has_functions says it is
		 * done, so these must say what the symbolizer really found. */
		pm->has_functions = !!(m->flags & PROFILE_MODULE_HAS_FUNCTIONS);
		pm->has_filenames = !!(m->flags & PROFILE_MODULE_HAS_FILENAMES);
		pm->has_line_numbers = !!(m->flags & PROFILE_MODULE_HAS_LINE_NUMBERS);
		pm->has_inline_frames = !!(m->flags & PROFILE_MODULE_HAS_INLINE_FRAMES);
		x->mapping_ptrs[i] = pm;
	}
	for (uint32_t i = 0; i < p->nfunctions; i++) {
		const struct profile_function *f = &p->functions[i];
		PprofFunction *pf = &x->functions[i];
		perftools__profiles__function__init(pf);
		pf->id = i + 1;
		pf->name = f->name;
		pf->system_name = f->system_name;
		pf->filename = f->file;
		pf->start_line = f->start_line;
		x->function_ptrs[i] = pf;
	}
	for (uint32_t i = 0; i < p->nlines; i++) {
		PprofLine *pl = &x->lines[i];
		perftools__profiles__line__init(pl);
		pl->function_id = p->lines[i].function + 1;
		pl->line = p->lines[i].line;
		x->line_ptrs[i] = pl;
	}
	for (uint32_t i = 0; i < p->nlocations; i++) {
		const struct profile_location *l = &p->locations[i];
		PprofLocation *pl = &x->locations[i];
		perftools__profiles__location__init(pl);
		pl->id = i + 1;
		pl->mapping_id = l->module == UINT32_MAX ? 0 : (uint64_t)l->module + 1;
		pl->address = l->address;
		/* The model keeps a location's chain contiguous and innermost
		 * first, as pprof wants it. */
		pl->n_line = l->nlines;
		pl->line = &x->line_ptrs[l->first_line];
		x->location_ptrs[i] = pl;
	}
	x->profile.n_mapping = p->nmodules;
	x->profile.mapping = x->mapping_ptrs;
	x->profile.n_function = p->nfunctions;
	x->profile.function = x->function_ptrs;
	x->profile.n_location = p->nlocations;
	x->profile.location = x->location_ptrs;
	return 0;
}

/* What the samples need: their (stack, thread) sums, each used stack's
 * location ids once (samples of one stack in several threads share them),
 * and the two labels of each thread. */
static int prepare_samples(struct pprof *x, const struct profile *p, const struct export_options *o)
{
	struct export_stacks *w = &x->sums;
	if (export_sum_stacks(p, 1, w))
		return -1;
	x->stack_ids = malloc(count_or_one(p->nstacks) * sizeof(*x->stack_ids));
	if (!x->stack_ids)
		return -1;
	uint64_t kept = 0, nids = 0;
	for (uint32_t st = 0; st < p->nstacks; st++)
		x->stack_ids[st] = UINT64_MAX;
	for (uint64_t i = 0; i < w->n; i++) {
		if (abs_i64(export_stack_value(p, w, i, o->value)) < o->mincount)
			continue; /* --mincount */
		w->stacks[kept] = w->stacks[i];
		memmove(w->columns + kept * w->ncolumns, w->columns + i * w->ncolumns,
			w->ncolumns * sizeof(*w->columns));
		kept++;
		uint32_t stack = w->stacks[kept - 1].stack;
		if (x->stack_ids[stack] == UINT64_MAX) {
			x->stack_ids[stack] = nids;
			nids += p->stacks[stack].depth - (alloc_leaf(p, stack) != 0);
		}
	}
	x->nkept = kept;
	x->location_ids = malloc(count_or_one(nids) * sizeof(*x->location_ids));
	x->labels = calloc(count_or_one(LABELS_PER_THREAD * (size_t)p->nthreads), sizeof(*x->labels));
	x->label_ptrs = calloc(count_or_one(LABELS_PER_THREAD * (size_t)p->nthreads), sizeof(*x->label_ptrs));
	x->nlabels = calloc(count_or_one(p->nthreads), sizeof(*x->nlabels));
	if (!x->location_ids || !x->labels || !x->label_ptrs || !x->nlabels)
		return -1;
	for (uint32_t st = 0; st < p->nstacks; st++) {
		if (x->stack_ids[st] == UINT64_MAX)
			continue;
		const struct profile_stack *stack = &p->stacks[st];
		uint32_t skip = alloc_leaf(p, st) != 0;
		for (uint32_t d = skip; d < stack->depth; d++)
			x->location_ids[x->stack_ids[st] + d - skip] =
				(uint64_t)p->stack_locations[stack->first + d] + 1;
	}
	int many = profile_many_processes(p); /* one program's export stays as it was */
	for (uint32_t t = 0; t < p->nthreads; t++) {
		PprofLabel *l = &x->labels[LABELS_PER_THREAD * t];
		for (int i = 0; i < LABELS_PER_THREAD; i++) {
			perftools__profiles__label__init(&l[i]);
			x->label_ptrs[LABELS_PER_THREAD * t + i] = &l[i];
		}
		l[0].key = p->nstrings + STR_THREAD;
		l[0].str = p->threads[t].name;
		l[1].key = p->nstrings + STR_TID;
		l[1].num = p->threads[t].tid;
		uint8_t n = 2;
		if (many) {
			l[n].key = p->nstrings + STR_PID;
			l[n++].num = p->threads[t].pid;
			l[n].key = p->nstrings + STR_COMMAND;
			l[n++].str = p->threads[t].command;
		}
		/* pprof's own mark of a diff's base samples (what -diff_base
		 * adds): its totals and percentages are then base's. */
		if (p->threads[t].flags & PROFILE_THREAD_DIFF_BASE) {
			l[n].key = p->nstrings + STR_BASE;
			l[n++].str = p->nstrings + STR_TRUE;
		}
		x->nlabels[t] = n;
	}
	return 0;
}

/* Whether the exported type is one of an allocation profile's (not its CPU samples'). */
static int exports_allocations(const struct profile *p, const struct export_options *o)
{
	uint32_t v = o->value < p->nvalue_types ? o->value : p->default_value;
	if (!p->alloc_scheme || v >= p->nvalue_types)
		return 0;
	uint32_t cpu = p->period_type;
	return cpu == PROFILE_NO_VALUE || p->value_types[v].column != p->value_types[cpu].column;
}

/*
 * An allocation profile's period, as pprof's heap profiles have it (Go
 * writes space/bytes and its MemProfileRate): byte-sampled, space/bytes and
 * the mean bytes between samples; every allocation, space/bytes 1 (every
 * byte, Go's MemProfileRate=1); each allocation with probability RATE,
 * objects/count and the allocations one recorded stands for, 1/RATE
 * rounded, since its unit of sampling is the allocation, not the byte.
 * The CPU period of the same trace would say the figures were timed.
 */
static void alloc_period(const struct profile *p, PprofValueType *type, int64_t *period)
{
	double q = p->alloc_parameter;
	type->type = p->nstrings + STR_SPACE;
	type->unit = p->nstrings + STR_BYTES;
	*period = 1;
	if (p->alloc_scheme == PROFILE_ALLOCS_BYTES && q >= 1 && q < 9e18) {
		*period = (int64_t)(q + 0.5);
	} else if (p->alloc_scheme == PROFILE_ALLOCS_RATE) {
		type->type = p->nstrings + STR_OBJECTS;
		type->unit = p->nstrings + STR_COUNT;
		if (q > 0 && q <= 1)
			*period = (int64_t)(1 / q + 0.5);
	}
}

static int fill_profile(struct pprof *x, const struct profile *p, const struct export_options *o)
{
	PprofProfile *pr = &x->profile;
	perftools__profiles__profile__init(pr);
	x->strings = malloc(((size_t)p->nstrings + NEXTRA) * sizeof(*x->strings));
	if (!x->strings)
		return -1;
	/* Messages only read the strings; protobuf-c's type is just not const. */
	for (uint32_t i = 0; i < p->nstrings; i++)
		x->strings[i] = (char *)p->strings[i];
	for (int i = 0; i < NEXTRA; i++)
		x->strings[p->nstrings + i] = (char *)extra_strings[i];
	pr->n_string_table = (size_t)p->nstrings + NEXTRA;
	pr->string_table = x->strings;

	for (uint32_t v = 0; v < p->nvalue_types; v++) {
		perftools__profiles__value_type__init(&x->sample_type[v]);
		x->sample_type[v].type = p->value_types[v].type;
		x->sample_type[v].unit = p->value_types[v].unit;
		x->sample_type_ptrs[v] = &x->sample_type[v];
	}
	pr->n_sample_type = p->nvalue_types;
	pr->sample_type = x->sample_type_ptrs;
	if (exports_allocations(p, o)) {
		perftools__profiles__value_type__init(&x->period_type);
		alloc_period(p, &x->period_type, &pr->period);
		pr->period_type = &x->period_type;
	} else if (p->period_type != PROFILE_NO_VALUE) {
		perftools__profiles__value_type__init(&x->period_type);
		x->period_type = x->sample_type[p->period_type];
		pr->period_type = &x->period_type;
		pr->period = p->period;
	}
	/* From the trace, never from now: the same trace gives the same bytes. */
	pr->time_nanos = (int64_t)p->start_realtime_ns;
	pr->duration_nanos = (int64_t)p->duration_ns;
	if (o->value < p->nvalue_types)
		pr->default_sample_type = p->value_types[profile_display_value(p, o->value)].type;
	x->comments[0] = p->nstrings + STR_EXPORTER;
	x->comments[1] = p->command;
	pr->n_comment = p->command ? 2 : 1;
	pr->comment = x->comments;
	return fill_tables(x, p) || prepare_samples(x, p, o) ? -1 : 0;
}

static void free_pprof(struct pprof *x)
{
	free(x->strings);
	free(x->mappings);
	free(x->mapping_ptrs);
	free(x->functions);
	free(x->function_ptrs);
	free(x->lines);
	free(x->line_ptrs);
	free(x->locations);
	free(x->location_ptrs);
	free(x->labels);
	free(x->label_ptrs);
	free(x->nlabels);
	export_stacks_free(&x->sums);
	free(x->location_ids);
	free(x->stack_ids);
}

/*
 * A protobuf-c output buffer that deflates what it is given straight into
 * the file, so the packed message never exists whole in memory. protobuf-c
 * appends a few bytes at a time (a tag, one varint), and a deflate() call
 * costs far more than that, so pieces are staged and deflated 64 KiB at once.
 */
struct gzip_sink {
	ProtobufCBuffer base;
	z_stream z;
	FILE *out;
	int failed;
	size_t staged;
	unsigned char stage[1 << 16];
	unsigned char chunk[1 << 16];
};

/* Feed deflate and write whatever it produces (zlib's zpipe.c loop). */
static void gzip_sink_run(struct gzip_sink *g, const uint8_t *data, size_t len, int flush)
{
	g->z.next_in = (Bytef *)data;
	g->z.avail_in = (uInt)len;
	do {
		g->z.next_out = g->chunk;
		g->z.avail_out = sizeof(g->chunk);
		if (deflate(&g->z, flush) == Z_STREAM_ERROR)
			g->failed = 1;
		size_t have = sizeof(g->chunk) - g->z.avail_out;
		if (have && fwrite(g->chunk, 1, have, g->out) != have)
			g->failed = 1;
	} while (!g->failed && g->z.avail_out == 0);
}

static void gzip_sink_append(ProtobufCBuffer *buffer, size_t len, const uint8_t *data)
{
	struct gzip_sink *g = (struct gzip_sink *)buffer;
	if (g->staged + len <= sizeof(g->stage)) {
		memcpy(g->stage + g->staged, data, len);
		g->staged += len;
		return;
	}
	gzip_sink_run(g, g->stage, g->staged, Z_NO_FLUSH);
	g->staged = 0;
	/* A big piece goes to deflate directly; uInt bounds one call. */
	while (len > sizeof(g->stage)) {
		size_t piece = len > (1u << 30) ? (1u << 30) : len;
		if (!g->failed)
			gzip_sink_run(g, data, piece, Z_NO_FLUSH);
		data += piece;
		len -= piece;
	}
	memcpy(g->stage, data, len);
	g->staged = len;
}

/* Deflate what is staged and end the gzip stream. */
static void gzip_sink_finish(struct gzip_sink *g)
{
	gzip_sink_run(g, g->stage, g->staged, Z_FINISH);
	g->staged = 0;
}

/*
 * Append the samples as Profile.sample (field 2) entries. A message's fields
 * may come in any order and repeated ones concatenate, so packing each Sample
 * on its own after the rest of the Profile is the same Profile to a reader,
 * without millions of Sample structs in memory at once.
 */
static void write_samples(const struct pprof *x, const struct profile *p, struct gzip_sink *g)
{
	PprofSample sample;
	int64_t values[PROFILE_MAX_VALUE_TYPES];
	perftools__profiles__sample__init(&sample);
	sample.n_value = p->nvalue_types;
	sample.value = values;
	PprofLabel leaf_label;
	PprofLabel *labels[LABELS_PER_THREAD + 1];
	perftools__profiles__label__init(&leaf_label);
	leaf_label.key = p->nstrings + STR_ALLOCATION;
	for (uint64_t i = 0; i < x->nkept && !g->failed; i++) {
		const struct export_stack *w = &x->sums.stacks[i];
		uint32_t leaf = alloc_leaf(p, w->stack);
		sample.n_location_id = p->stacks[w->stack].depth - (leaf != 0);
		sample.location_id = &x->location_ids[x->stack_ids[w->stack]];
		for (uint32_t v = 0; v < p->nvalue_types; v++)
			values[v] = export_stack_value(p, &x->sums, i, v);
		size_t nlabels = x->nlabels[w->thread];
		memcpy(labels, &x->label_ptrs[LABELS_PER_THREAD * (size_t)w->thread], nlabels * sizeof(*labels));
		if (leaf) {
			leaf_label.str = leaf;
			labels[nlabels++] = &leaf_label;
		}
		sample.label = labels;
		sample.n_label = nlabels;
		/* key (field 2, length-delimited), length, then the message */
		uint8_t head[1 + 10];
		size_t n = 0;
		head[n++] = 2 << 3 | 2;
		uint64_t len = perftools__profiles__sample__get_packed_size(&sample);
		do {
			head[n++] = (uint8_t)(len & 0x7f) | (len > 0x7f ? 0x80 : 0);
			len >>= 7;
		} while (len);
		gzip_sink_append(&g->base, n, head);
		perftools__profiles__sample__pack_to_buffer(&sample, &g->base);
	}
}

int export_pprof(const struct profile *p, const struct export_options *o, FILE *out)
{
	/* o->lines and o->thread_roots do not apply: pprof keeps lines and
	 * threads itself, and its consumers choose the view. */
	struct pprof x = { 0 };
	int ret = -1;
	errno = ENOMEM;
	if (fill_profile(&x, p, o))
		goto out;
	struct gzip_sink *g = calloc(1, sizeof(*g));
	if (!g)
		goto out;
	g->base.append = gzip_sink_append;
	g->out = out;
	/* windowBits 15 + 16 writes a gzip header; its mtime stays 0, so the
	 * bytes do not depend on when we ran. */
	if (deflateInit2(&g->z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(g);
		goto out;
	}
	perftools__profiles__profile__pack_to_buffer(&x.profile, &g->base);
	write_samples(&x, p, g);
	if (!g->failed)
		gzip_sink_finish(g);
	deflateEnd(&g->z);
	errno = EIO;
	ret = !g->failed && fflush(out) == 0 && !ferror(out) ? 0 : -1;
	free(g);
out:
	free_pprof(&x);
	return ret;
}
