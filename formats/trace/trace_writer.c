/*
 * trace_writer.c - writes an ipscope trace (formats/trace/TRACE_FORMAT.md) as one
 * zstd stream. collect calls it on its own core for millions of records per
 * second, so the hot path (trace_writer_sample) is a bounds check and a few
 * stores into a buffer that is reused for the whole trace: no malloc per record.
 *
 * Records are encoded into `raw`; every TRACE_WRITER_AUTOFLUSH bytes, and on
 * trace_writer_flush, the buffer is compressed with ZSTD_e_flush and written
 * out. ZSTD_e_flush ends a zstd block, so a file cut anywhere decodes up to the
 * last flush: that is what makes a killed program's trace readable.
 *
 * Samples are encoded straight into `raw` inside an open SAMPLES record whose
 * header is patched when the batch closes (before any other record, a flush or
 * close), so the stream keeps the order in which records were given.
 */
#include "trace.h"
#include "trace_internal.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

struct trace_writer {
	int fd;
	int error; /* first errno that failed the trace; every later call fails with it */
	ZSTD_CCtx *cctx;

	uint8_t *raw; /* encoded records not compressed yet */
	size_t raw_len;
	size_t raw_cap;

	uint8_t *out; /* compressed bytes on their way to fd */
	size_t out_cap;

	size_t batch_start; /* offset in raw of the open SAMPLES record; SIZE_MAX: none */
	uint32_t batch_count;
	uint64_t batch_time_ns; /* time of the batch's last sample: times are deltas */

	struct trace_heap_procs heap; /* live blocks per process: ALLOCS_IDS's references */
	uint64_t *refs; /* scratch: each free's reference in the batch being written */
	uint32_t *order; /* scratch: the batch's allocations' indexes, then its frees' (from refs_cap) */
	uint32_t refs_cap;
	uint32_t nallocs, nfrees; /* in order */

	uint64_t compressed_bytes;
	uint64_t raw_bytes_compressed; /* raw bytes already handed to zstd */
};

#define NO_BATCH SIZE_MAX

static int fail(struct trace_writer *w, int err)
{
	if (!w->error)
		w->error = err;
	errno = w->error;
	return -1;
}

/* write(2) until everything is out: a pipe reader may take partial writes,
 * and a stdout someone else made non-blocking may say EAGAIN: wait for it. */
static int write_all(struct trace_writer *w, const uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t done = write(w->fd, p, n);
		if (done < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				struct pollfd pfd = { .fd = w->fd, .events = POLLOUT };
				if (poll(&pfd, 1, -1) >= 0 || errno == EINTR)
					continue;
			}
			return fail(w, errno);
		}
		p += done;
		n -= (size_t)done;
		w->compressed_bytes += (uint64_t)done;
	}
	return 0;
}

/* Feed raw[] to zstd with `mode` (flush or end) and write every output byte. */
static int compress_raw(struct trace_writer *w, ZSTD_EndDirective mode)
{
	ZSTD_inBuffer in = { w->raw, w->raw_len, 0 };
	size_t remaining;
	do {
		ZSTD_outBuffer out = { w->out, w->out_cap, 0 };
		remaining = ZSTD_compressStream2(w->cctx, &out, &in, mode);
		if (ZSTD_isError(remaining))
			return fail(w, EIO);
		if (write_all(w, w->out, out.pos) < 0)
			return -1;
	} while (remaining != 0 || in.pos < in.size);
	w->raw_bytes_compressed += w->raw_len;
	w->raw_len = 0;
	return 0;
}

/* Patch the open SAMPLES record's count and length; it becomes an ordinary record. */
static void close_batch(struct trace_writer *w)
{
	if (w->batch_start == NO_BATCH)
		return;
	uint8_t *rec = w->raw + w->batch_start;
	size_t payload = w->raw_len - w->batch_start - TRACE_RECORD_HEADER_SIZE;
	trace_put_u32(rec + 4, (uint32_t)payload);
	trace_put_u32(rec + TRACE_RECORD_HEADER_SIZE, w->batch_count);
	w->batch_start = NO_BATCH;
	w->batch_count = 0;
}

static int grow_raw(struct trace_writer *w, size_t need)
{
	size_t cap = w->raw_cap;
	while (cap - w->raw_len < need)
		cap *= 2;
	uint8_t *p = realloc(w->raw, cap);
	if (!p)
		return fail(w, ENOMEM);
	w->raw = p;
	w->raw_cap = cap;
	return 0;
}

/*
 * Start a record of `type` with `payload` bytes (the caller fills them in
 * through the returned pointer). Closes an open samples batch first, so that
 * records stay in the order they were given.
 */
static uint8_t *begin_record(struct trace_writer *w, enum trace_type type, size_t payload)
{
	if (w->error) {
		errno = w->error;
		return NULL;
	}
	if (payload > TRACE_RECORD_MAX_PAYLOAD) {
		errno = EINVAL; /* the caller's record is wrong, not the trace */
		return NULL;
	}
	close_batch(w);
	size_t need = TRACE_RECORD_HEADER_SIZE + payload;
	if (w->raw_cap - w->raw_len < need && grow_raw(w, need) < 0)
		return NULL;
	uint8_t *rec = w->raw + w->raw_len;
	trace_put_u16(rec, (uint16_t)type);
	trace_put_u16(rec + 2, 0);
	trace_put_u32(rec + 4, (uint32_t)payload);
	w->raw_len += need;
	return rec + TRACE_RECORD_HEADER_SIZE;
}

/* After each record: compress once enough raw input has gathered. */
static int end_record(struct trace_writer *w)
{
	if (w->raw_len < TRACE_WRITER_AUTOFLUSH)
		return 0;
	close_batch(w);
	return compress_raw(w, ZSTD_e_flush);
}

static size_t string_size(const char *s)
{
	return 4 + (s ? strlen(s) : 0);
}

/* Strings are a u32 byte count and the bytes, without a terminating NUL. */
static uint8_t *put_string(uint8_t *p, const char *s)
{
	size_t len = s ? strlen(s) : 0;
	trace_put_u32(p, (uint32_t)len);
	if (len)
		memcpy(p + 4, s, len);
	return p + 4 + len;
}

struct trace_writer *trace_writer_open(int fd, int zstd_level)
{
	struct trace_writer *w = calloc(1, sizeof *w);
	if (!w)
		return NULL;
	w->fd = fd;
	w->batch_start = NO_BATCH;
	/* Room for one autoflush worth plus the largest ordinary record, so the
	 * buffer grows only for unusual records (huge paths, deep stacks). */
	w->raw_cap = TRACE_WRITER_AUTOFLUSH + (16u << 10);
	w->raw = malloc(w->raw_cap);
	w->out_cap = ZSTD_CStreamOutSize();
	w->out = malloc(w->out_cap);
	w->cctx = ZSTD_createCCtx();
	if (!w->raw || !w->out || !w->cctx) {
		ZSTD_freeCCtx(w->cctx);
		free(w->out);
		free(w->raw);
		free(w);
		errno = ENOMEM;
		return NULL;
	}
	size_t r = ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, zstd_level);
	/* The content checksum lets a reader catch corruption zstd itself would not. */
	if (!ZSTD_isError(r))
		r = ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1);
	if (ZSTD_isError(r)) {
		ZSTD_freeCCtx(w->cctx);
		free(w->out);
		free(w->raw);
		free(w);
		errno = EINVAL;
		return NULL;
	}

	uint8_t *h = w->raw;
	memcpy(h, TRACE_MAGIC, TRACE_MAGIC_LEN);
	trace_put_u16(h + 8, TRACE_VERSION_MAJOR);
	trace_put_u16(h + 10, TRACE_VERSION_MINOR);
	trace_put_u32(h + 12, TRACE_FILE_HEADER_SIZE);
	w->raw_len = TRACE_FILE_HEADER_SIZE;
	/* Out right away: even a trace cut a moment later is recognisably ours. */
	if (compress_raw(w, ZSTD_e_flush) < 0) {
		int err = errno;
		ZSTD_freeCCtx(w->cctx);
		free(w->out);
		free(w->raw);
		free(w);
		errno = err;
		return NULL;
	}
	return w;
}

int trace_writer_meta(struct trace_writer *w, const char *key, const char *value)
{
	uint8_t *p = begin_record(w, TRACE_META, string_size(key) + string_size(value));
	if (!p)
		return -1;
	put_string(put_string(p, key), value);
	return end_record(w);
}

int trace_writer_module(struct trace_writer *w, const struct trace_module *m)
{
	uint32_t build_id_len = m->build_id ? m->build_id_len : 0;
	size_t payload = 4 + 4 + 8 + 8 + string_size(m->path) + 4 + build_id_len + 4 + 4 +
			 (size_t)m->nsegments * TRACE_SEGMENT_ENTRY_SIZE;
	uint8_t *p = begin_record(w, TRACE_MODULE, payload);
	if (!p)
		return -1;
	trace_put_u32(p, m->pid);
	trace_put_u32(p + 4, m->id);
	trace_put_u64(p + 8, m->time_ns);
	trace_put_u64(p + 16, m->load_bias);
	p = put_string(p + 24, m->path);
	trace_put_u32(p, build_id_len);
	if (build_id_len)
		memcpy(p + 4, m->build_id, build_id_len);
	p += 4 + build_id_len;
	trace_put_u32(p, m->nsegments);
	trace_put_u32(p + 4, TRACE_SEGMENT_ENTRY_SIZE);
	p += 8;
	for (uint32_t i = 0; i < m->nsegments; i++, p += TRACE_SEGMENT_ENTRY_SIZE) {
		const struct trace_segment *s = &m->segments[i];
		trace_put_u64(p, s->vaddr);
		trace_put_u64(p + 8, s->memsz);
		trace_put_u64(p + 16, s->file_offset);
		trace_put_u32(p + 24, s->flags);
	}
	return end_record(w);
}

int trace_writer_module_unload(struct trace_writer *w, const struct trace_module_unload *u)
{
	uint8_t *p = begin_record(w, TRACE_MODULE_UNLOAD, 16);
	if (!p)
		return -1;
	trace_put_u32(p, u->pid);
	trace_put_u32(p + 4, u->id);
	trace_put_u64(p + 8, u->time_ns);
	return end_record(w);
}

int trace_writer_thread(struct trace_writer *w, const struct trace_thread *t)
{
	size_t name_size = string_size(t->name);
	uint8_t *p = begin_record(w, TRACE_THREAD, 4 + 4 + 8 + 4 + name_size + 8);
	if (!p)
		return -1;
	trace_put_u32(p, t->pid);
	trace_put_u32(p + 4, t->tid);
	trace_put_u64(p + 8, t->time_ns);
	trace_put_u32(p + 16, t->flags);
	put_string(p + 20, t->name);
	trace_put_u64(p + 20 + name_size, t->cpu_ns);
	return end_record(w);
}

int trace_writer_stack(struct trace_writer *w, const struct trace_stack *s)
{
	uint8_t *p = begin_record(w, TRACE_STACK, 12 + (size_t)s->nframes * 8);
	if (!p)
		return -1;
	trace_put_u32(p, s->id);
	trace_put_u32(p + 4, s->flags);
	trace_put_u32(p + 8, s->nframes);
	p += 12;
	for (uint32_t i = 0; i < s->nframes; i++)
		trace_put_u64(p + 8 * (size_t)i, s->ips[i]);
	return end_record(w);
}

/* The hot path: one sample is 32 bytes stored into the open batch. Times
 * are stored as the difference from the previous sample of the same batch
 * (unsigned, wrapping), so each batch decodes on its own. */
int trace_writer_sample(struct trace_writer *w, const struct trace_sample *s)
{
	if (w->batch_start == NO_BATCH) {
		uint8_t *p = begin_record(w, TRACE_SAMPLES, 8);
		if (!p)
			return -1;
		trace_put_u32(p + 4, TRACE_SAMPLE_ENTRY_SIZE);
		w->batch_start = w->raw_len - TRACE_RECORD_HEADER_SIZE - 8;
		w->batch_time_ns = 0;
	}
	if (w->raw_cap - w->raw_len < TRACE_SAMPLE_ENTRY_SIZE &&
	    grow_raw(w, TRACE_SAMPLE_ENTRY_SIZE) < 0)
		return -1;
	uint8_t *p = w->raw + w->raw_len;
	/* Deltas leave the high bytes zero: smaller after zstd than absolute times
	 * (bench/README.md, "collect"). */
	trace_put_u64(p, s->time_ns - w->batch_time_ns);
	w->batch_time_ns = s->time_ns;
	trace_put_u32(p + 8, s->pid);
	trace_put_u32(p + 12, s->tid);
	trace_put_u32(p + 16, s->stack_id);
	trace_put_u32(p + 20, s->weight);
	trace_put_u32(p + 24, s->state);
	trace_put_u32(p + 28, (uint32_t)s->syscall);
	w->raw_len += TRACE_SAMPLE_ENTRY_SIZE;
	if (++w->batch_count == TRACE_SAMPLES_PER_BATCH)
		close_batch(w);
	return end_record(w);
}

int trace_writer_loss(struct trace_writer *w, const struct trace_loss *l)
{
	uint8_t *p = begin_record(w, TRACE_LOSS, 24);
	if (!p)
		return -1;
	trace_put_u32(p, l->pid);
	trace_put_u32(p + 4, l->tid);
	trace_put_u64(p + 8, l->time_ns);
	trace_put_u64(p + 16, l->samples);
	return end_record(w);
}

int trace_writer_process(struct trace_writer *w, const struct trace_process *pr)
{
	const char *path = pr->path ? pr->path : "", *command = pr->command ? pr->command : "";
	const char *reason = pr->reason ? pr->reason : "";
	size_t payload = 4 + 4 + 8 + 4 + 4 + string_size(path) + string_size(command) + 4 + string_size(reason);
	uint8_t *p = begin_record(w, TRACE_PROCESS, payload);
	if (!p)
		return -1;
	trace_put_u32(p, pr->pid);
	trace_put_u32(p + 4, pr->parent_pid);
	trace_put_u64(p + 8, pr->time_ns);
	trace_put_u32(p + 16, pr->kind);
	trace_put_u32(p + 20, (uint32_t)pr->wait_status);
	p = put_string(put_string(p + 24, path), command);
	trace_put_u32(p, pr->flags);
	put_string(p + 4, reason);
	return end_record(w);
}

static uint8_t *put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static uint64_t zigzag(uint64_t delta)
{
	int64_t d = (int64_t)delta;
	return ((uint64_t)d << 1) ^ (uint64_t)(d >> 63);
}

static int is_allocation(uint32_t kind)
{
	return kind != TRACE_HEAP_FREE && kind != TRACE_HEAP_NONE;
}

/* Each entry's reference (TRACE_FORMAT.md, ALLOCS_IDS), in entry order: a
 * free's is 1 + the zigzag delta of its allocation's ordinal from the
 * previous reference's, or 0 when its block is not live in this process's
 * stream; an allocation's is 64 + how many allocations back the live block
 * of the same address was allocated (no free came between: it is replaced),
 * else for a failed realloc's RESTORED entry j when its block is that of the
 * j-th latest free (1..64), else 0 (a new block). The latest frees are those
 * with a reference: the others name no block. */
static int heap_refs(struct trace_writer *w, struct trace_heap_proc *proc, const struct trace_heap_event *events,
		     uint32_t n)
{
	if (w->refs_cap < n) {
		uint64_t *refs = realloc(w->refs, n * sizeof *refs);
		if (refs)
			w->refs = refs;
		uint32_t *order = realloc(w->order, 2 * (size_t)n * sizeof *order);
		if (order)
			w->order = order;
		if (!refs || !order)
			return fail(w, ENOMEM);
		w->refs_cap = n;
	}
	uint64_t previous = proc->next_ordinal;
	w->nallocs = w->nfrees = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct trace_heap_event *e = &events[i];
		uint64_t ordinal;
		if (i + 8 < n)
			trace_heap_table_prefetch(&proc->live, events[i + 8].address);
		w->refs[i] = 0;
		/* Where the columns of allocations and of frees take their entries from: one branch
		 * per event here instead of one per event and column. */
		w->order[w->nallocs] = i;
		w->order[w->refs_cap + w->nfrees] = i;
		w->nallocs += is_allocation(e->kind);
		w->nfrees += e->kind == TRACE_HEAP_FREE;
		if (is_allocation(e->kind)) {
			uint64_t next = proc->next_ordinal++;
			if (!e->address)
				continue;
			/* The live block of the same address (no free came between) is replaced. */
			int replaced = trace_heap_table_swap(&proc->live, e->address, next, &ordinal);
			if (replaced < 0)
				return fail(w, ENOMEM);
			if (replaced)
				w->refs[i] = TRACE_HEAP_FREED + (next - ordinal);
			else if (e->flags & TRACE_HEAP_RESTORED)
				w->refs[i] = trace_heap_freed_take(proc, e->address);
		} else if (e->kind == TRACE_HEAP_FREE) {
			if (trace_heap_table_take(&proc->live, e->address, &ordinal)) {
				w->refs[i] = zigzag(ordinal - previous) + 1;
				previous = ordinal;
				trace_heap_freed_push(proc, e->address);
			}
		}
	}
	return 0;
}

/* Column by column (all ops, then all seq deltas, ...): zstd then sees
 * homogeneous runs. No addresses: a free names its allocation, and an
 * allocation nothing but its size and stack, which keeps an allocation with
 * its free near heaptrack's bytes (TRACE_FORMAT.md, ALLOCS_IDS). */
int trace_writer_allocs(struct trace_writer *w, uint32_t pid, const struct trace_heap_event *events, uint32_t n)
{
	if (n > TRACE_ALLOCS_MAX_EVENTS)
		return fail(w, EINVAL);
	if (!n)
		return 0;
	if (w->error)
		return fail(w, w->error);
	struct trace_heap_proc *proc = trace_heap_proc_get(&w->heap, pid);
	if (!proc)
		return fail(w, ENOMEM);
	if (heap_refs(w, proc, events, n) < 0)
		return -1;
	uint8_t *p = begin_record(w, TRACE_ALLOCS_IDS, 24 + (size_t)n * TRACE_ALLOCS_MAX_ENTRY);
	if (!p)
		return -1;
	uint8_t *start = p;
	trace_put_u16(start - TRACE_RECORD_HEADER_SIZE + 2, TRACE_RECORD_FLAG_REQUIRED);
	trace_put_u32(p, pid);
	trace_put_u32(p + 4, n);
	trace_put_u64(p + 8, events[0].seq);
	trace_put_u64(p + 16, events[0].time_ns);
	p += 24;
	for (uint32_t i = 0; i < n; i++)
		p = put_varint(p, (events[i].kind & 15u) | (uint64_t)(events[i].flags & 31u) << 4);
	for (uint64_t i = 0, prev = events[0].seq; i < n; prev = events[i++].seq)
		p = put_varint(p, zigzag(events[i].seq - prev));
	for (uint64_t i = 0, prev = 0; i < n; prev = events[i++].tid)
		p = put_varint(p, zigzag(events[i].tid - prev));
	for (uint64_t i = 0, prev = events[0].time_ns; i < n; prev = events[i++].time_ns)
		p = put_varint(p, zigzag(events[i].time_ns - prev));
	const uint32_t *allocs = w->order, *frees = w->order + w->refs_cap;
	for (uint32_t i = 0; i < w->nallocs; i++)
		p = put_varint(p, events[allocs[i]].size);
	for (uint32_t i = 0; i < w->nallocs; i++)
		p = put_varint(p, events[allocs[i]].stack_id);
	for (uint32_t i = 0; i < w->nallocs; i++)
		p = put_varint(p, w->refs[allocs[i]]);
	for (uint32_t i = 0; i < w->nfrees; i++)
		p = put_varint(p, w->refs[frees[i]]);
	/* Give back what the varints did not use, and set the real length. */
	size_t payload = (size_t)(p - start);
	w->raw_len -= 24 + (size_t)n * TRACE_ALLOCS_MAX_ENTRY - payload;
	trace_put_u32(start - TRACE_RECORD_HEADER_SIZE + 4, (uint32_t)payload);
	return end_record(w);
}

int trace_writer_jit_map(struct trace_writer *w, const struct trace_jit_map *j)
{
	if (j->text_len > TRACE_JIT_MAP_MAX_TEXT)
		return fail(w, EINVAL);
	size_t payload = 4 + 4 + 8 + string_size(j->path) + 4 + j->text_len;
	uint8_t *p = begin_record(w, TRACE_JIT_MAP, payload);
	if (!p)
		return -1;
	trace_put_u32(p, j->pid);
	trace_put_u32(p + 4, 0); /* flags: none yet */
	trace_put_u64(p + 8, j->time_ns);
	p = put_string(p + 16, j->path);
	trace_put_u32(p, j->text_len);
	if (j->text_len)
		memcpy(p + 4, j->text, j->text_len);
	return end_record(w);
}

int trace_writer_flush(struct trace_writer *w)
{
	if (w->error)
		return fail(w, w->error);
	close_batch(w);
	if (w->raw_len == 0)
		return 0;
	return compress_raw(w, ZSTD_e_flush);
}

uint64_t trace_writer_compressed_bytes(const struct trace_writer *w)
{
	return w->compressed_bytes;
}

uint64_t trace_writer_raw_bytes(const struct trace_writer *w)
{
	return w->raw_bytes_compressed + w->raw_len;
}

int trace_writer_close(struct trace_writer *w, const struct trace_end *end)
{
	int ret = -1;
	uint8_t *p = begin_record(w, TRACE_END, 64);
	if (p) {
		trace_put_u64(p, end->time_ns);
		trace_put_u32(p + 8, (uint32_t)end->wait_status);
		trace_put_u32(p + 12, end->flags);
		trace_put_u64(p + 16, end->samples);
		trace_put_u64(p + 24, end->weight);
		trace_put_u64(p + 32, end->lost_samples);
		trace_put_u64(p + 40, end->agent_ns);
		trace_put_u64(p + 48, end->agent_signals);
		trace_put_u64(p + 56, end->exited_unsampled);
		ret = compress_raw(w, ZSTD_e_end);
	}
	int err = errno;
	trace_heap_procs_free(&w->heap);
	free(w->refs);
	free(w->order);
	ZSTD_freeCCtx(w->cctx);
	free(w->out);
	free(w->raw);
	free(w);
	errno = err;
	return ret;
}
