/*
 * trace_records.c - the payload of each record type (TRACE_FORMAT.md is the
 * authority), parsed through a bounds-checked cursor: every length and
 * count is checked against what is left before it is used, so a corrupt or
 * hostile record gets a one-line message naming the record and field,
 * never a read past its end. Strings and arrays go into buffers the reader
 * owns and reuses ("valid until the next call"). The allocation records'
 * payloads are trace_allocs.c's.
 */
#include "trace_reader_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>


static int parse_meta(struct cursor *c, struct trace_meta *m)
{
	size_t used = 0;
	if (cursor_string(c, &m->key, &used, "key") < 0)
		return -1;
	return cursor_string(c, &m->value, &used, "value");
}

static int parse_module(struct cursor *c, struct trace_module *m)
{
	struct trace_reader *r = c->r;
	size_t used = 0;
	uint32_t nsegments, entry_size;
	if (cursor_u32(c, &m->pid, "pid") < 0 || cursor_u32(c, &m->id, "id") < 0 ||
	    cursor_u64(c, &m->time_ns, "time_ns") < 0 || cursor_u64(c, &m->load_bias, "load_bias") < 0 ||
	    cursor_string(c, &m->path, &used, "path") < 0 ||
	    cursor_bytes(c, &m->build_id, &m->build_id_len, "build_id") < 0 ||
	    cursor_array(c, &nsegments, &entry_size, TRACE_SEGMENT_ENTRY_SIZE, "segments") < 0)
		return -1;
	if (m->build_id_len == 0)
		m->build_id = NULL;
	if (trace_reader_reserve(r, (void **)&r->segments, &r->segments_cap, nsegments, sizeof *r->segments) < 0)
		return -1;
	const uint8_t *p = c->p + c->at;
	for (uint32_t i = 0; i < nsegments; i++, p += entry_size) {
		struct trace_segment *s = &r->segments[i];
		s->vaddr = trace_get_u64(p);
		s->memsz = trace_get_u64(p + 8);
		s->file_offset = trace_get_u64(p + 16);
		s->flags = trace_get_u32(p + 24);
	}
	m->nsegments = nsegments;
	m->segments = r->segments;
	return 0;
}

static int parse_unload(struct cursor *c, struct trace_module_unload *u)
{
	if (cursor_u32(c, &u->pid, "pid") < 0 || cursor_u32(c, &u->id, "id") < 0)
		return -1;
	return cursor_u64(c, &u->time_ns, "time_ns");
}

static int parse_thread(struct cursor *c, struct trace_thread *t)
{
	size_t used = 0;
	if (cursor_u32(c, &t->pid, "pid") < 0 || cursor_u32(c, &t->tid, "tid") < 0 ||
	    cursor_u64(c, &t->time_ns, "time_ns") < 0 || cursor_u32(c, &t->flags, "flags") < 0 ||
	    cursor_string(c, &t->name, &used, "name") < 0)
		return -1;
	t->cpu_ns = 0;
	/* 1.2 appended the thread's measured CPU time. */
	return c->r->minor >= 2 ? cursor_u64(c, &t->cpu_ns, "cpu_ns") : 0;
}

static int parse_stack(struct cursor *c, struct trace_stack *s)
{
	struct trace_reader *r = c->r;
	if (cursor_u32(c, &s->id, "id") < 0 || cursor_u32(c, &s->flags, "flags") < 0 ||
	    cursor_u32(c, &s->nframes, "nframes") < 0)
		return -1;
	if (s->nframes > (c->size - c->at) / 8)
		return trace_reader_corrupt(r, c->offset, "STACK record (%zu bytes): %" PRIu32 " frames do not fit",
			       c->size, s->nframes);
	if (trace_reader_reserve(r, (void **)&r->ips, &r->ips_cap, s->nframes, sizeof *r->ips) < 0)
		return -1;
	const uint8_t *p = c->p + c->at;
	for (uint32_t i = 0; i < s->nframes; i++)
		r->ips[i] = trace_get_u64(p + 8 * (size_t)i);
	s->ips = r->ips;
	return 0;
}

/* The hot loop of analyze: decode a batch into the reused sample array. */
static int parse_samples(struct cursor *c, struct trace_samples *s)
{
	struct trace_reader *r = c->r;
	uint32_t count, entry_size;
	/* 1.4 appended the system call: required from then on. */
	int has_syscall = r->minor >= 4;
	if (cursor_array(c, &count, &entry_size, has_syscall ? TRACE_SAMPLE_ENTRY_SIZE : TRACE_SAMPLE_ENTRY_SIZE_1_0,
		       "samples") < 0)
		return -1;
	if (trace_reader_reserve(r, (void **)&r->samples, &r->samples_cap, count, sizeof *r->samples) < 0)
		return -1;
	const uint8_t *p = c->p + c->at;
	struct trace_sample *out = r->samples;
	uint64_t time_ns = 0; /* entries carry the delta from the previous one */
	for (uint32_t i = 0; i < count; i++, p += entry_size) {
		time_ns += trace_get_u64(p);
		out[i].time_ns = time_ns;
		out[i].pid = trace_get_u32(p + 8);
		out[i].tid = trace_get_u32(p + 12);
		out[i].stack_id = trace_get_u32(p + 16);
		out[i].weight = trace_get_u32(p + 20);
		out[i].state = trace_get_u32(p + 24);
		out[i].syscall = has_syscall ? (int32_t)trace_get_u32(p + 28) : -1;
	}
	s->count = count;
	s->samples = out;
	return 0;
}

static int parse_loss(struct cursor *c, struct trace_loss *l)
{
	if (cursor_u32(c, &l->pid, "pid") < 0 || cursor_u32(c, &l->tid, "tid") < 0 ||
	    cursor_u64(c, &l->time_ns, "time_ns") < 0)
		return -1;
	return cursor_u64(c, &l->samples, "samples");
}

static int parse_end(struct cursor *c, struct trace_end *e)
{
	uint32_t status;
	if (cursor_u64(c, &e->time_ns, "time_ns") < 0 || cursor_u32(c, &status, "wait_status") < 0 ||
	    cursor_u32(c, &e->flags, "flags") < 0 || cursor_u64(c, &e->samples, "samples") < 0 ||
	    cursor_u64(c, &e->weight, "weight") < 0)
		return -1;
	e->wait_status = (int32_t)status;
	e->agent_ns = e->agent_signals = e->exited_unsampled = 0;
	if (cursor_u64(c, &e->lost_samples, "lost_samples") < 0)
		return -1;
	/* 1.2 appended what the agent's signal handler cost. */
	if (c->r->minor < 2)
		return 0;
	if (cursor_u64(c, &e->agent_ns, "agent_ns") < 0 || cursor_u64(c, &e->agent_signals, "agent_signals") < 0)
		return -1;
	/* 1.4 appended the wall sampler's count of threads gone before their sample. */
	return c->r->minor >= 4 ? cursor_u64(c, &e->exited_unsampled, "exited_unsampled") : 0;
}

static int parse_process(struct cursor *c, struct trace_process *p)
{
	size_t used = 0;
	uint32_t status;
	if (cursor_u32(c, &p->pid, "pid") < 0 || cursor_u32(c, &p->parent_pid, "parent_pid") < 0 ||
	    cursor_u64(c, &p->time_ns, "time_ns") < 0 || cursor_u32(c, &p->kind, "kind") < 0 ||
	    cursor_u32(c, &status, "wait_status") < 0 || cursor_string(c, &p->path, &used, "path") < 0 ||
	    cursor_string(c, &p->command, &used, "command") < 0 || cursor_u32(c, &p->flags, "flags") < 0)
		return -1;
	p->wait_status = (int32_t)status;
	return cursor_string(c, &p->reason, &used, "reason");
}

static int parse_jit_map(struct cursor *c, struct trace_jit_map *j)
{
	size_t used = 0;
	uint32_t flags;
	if (cursor_u32(c, &j->pid, "pid") < 0 || cursor_u32(c, &flags, "flags") < 0 ||
	    cursor_u64(c, &j->time_ns, "time_ns") < 0 || cursor_string(c, &j->path, &used, "path") < 0)
		return -1;
	return cursor_bytes(c, &j->text, &j->text_len, "text");
}

static const char *const record_names[] = {
	[TRACE_META] = "META",         [TRACE_MODULE] = "MODULE", [TRACE_MODULE_UNLOAD] = "MODULE_UNLOAD",
	[TRACE_THREAD] = "THREAD",     [TRACE_STACK] = "STACK",   [TRACE_SAMPLES] = "SAMPLES",
	[TRACE_LOSS] = "LOSS",         [TRACE_END] = "END",       [TRACE_JIT_MAP] = "JIT_MAP",
	[TRACE_PROCESS] = "PROCESS",
	[TRACE_ALLOCS] = "ALLOCS",     [TRACE_ALLOCS_PACKED] = "ALLOCS_PACKED", [TRACE_ALLOCS_IDS] = "ALLOCS_IDS",
};

int trace_path_is_agent(const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	size_t n = strlen(TRACE_AGENT_FILE_NAME);
	return strncmp(base, TRACE_AGENT_FILE_NAME, n) == 0 && (base[n] == '\0' || base[n] == '.');
}

const char *trace_record_name(enum trace_type type)
{
	return (size_t)type < sizeof record_names / sizeof record_names[0] ? record_names[type] : NULL;
}

int trace_parse_record(struct cursor *c, enum trace_type type, struct trace_record *rec)
{
	switch (type) {
	case TRACE_META:
		return parse_meta(c, &rec->u.meta);
	case TRACE_MODULE:
		return parse_module(c, &rec->u.module);
	case TRACE_MODULE_UNLOAD:
		return parse_unload(c, &rec->u.unload);
	case TRACE_THREAD:
		return parse_thread(c, &rec->u.thread);
	case TRACE_STACK:
		return parse_stack(c, &rec->u.stack);
	case TRACE_SAMPLES:
		return parse_samples(c, &rec->u.samples);
	case TRACE_LOSS:
		return parse_loss(c, &rec->u.loss);
	case TRACE_END:
		return parse_end(c, &rec->u.end);
	case TRACE_JIT_MAP:
		return parse_jit_map(c, &rec->u.jit_map);
	case TRACE_PROCESS:
		return parse_process(c, &rec->u.process);
	case TRACE_ALLOCS:
		return trace_parse_allocs(c, &rec->u.allocs);
	case TRACE_ALLOCS_PACKED:
	case TRACE_ALLOCS_IDS:
		if (trace_parse_allocs_packed(c, &rec->u.allocs, type == TRACE_ALLOCS_IDS) < 0)
			return -1;
		rec->type = TRACE_ALLOCS; /* the same events, however encoded */
		return 0;
	}
	return -1;
}

