/*
 * frametab_build.c - one object's frame-table rows built and published
 * (frametab.c says what a row is and who reads them; frametab_fde.c runs
 * each FDE): the whole object's FDEs in the header's order, or a block's
 * (frametab_build_block: the FDEs of 16 KiB of text, tens of microseconds),
 * into a builder, then copied into read-only memory with a per-KiB index.
 * A whole object is parsed from a copy of its .eh_frame_hdr and .eh_frame
 * taken while the loader listed it (a memcpy), so the loader's lock is not
 * held for the milliseconds a parse takes (a handler's libunwind fallback
 * would wait for it); a block in place, inside the loader's callback. Runs
 * outside signal handlers only.
 */
#include "frametab_fde.h"
#include "map_grow.h"

#include <string.h>
#include <sys/mman.h>

/* FNV-1a over 8-byte words (and the tail bytes): a large header byte by byte was slow (bench/README.md),
 * at every rescan and every build of what walks asked for. */
static uint64_t hash_bytes(const uint8_t *p, size_t n, uint64_t h)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 1099511628211ull;
	}
	for (; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

uint64_t frametab_fingerprint(const struct object *o)
{
	const uint8_t *h = (const uint8_t *)(uintptr_t)o->hdr;
	return hash_bytes(h, (size_t)(o->table + 8 * o->fde_count - o->hdr), 1469598103934665603ull);
}

int frametab_copy_object(struct object *o)
{
	uint64_t lo = o->hdr < o->eh_frame ? o->hdr : o->eh_frame;
	size_t bytes = (size_t)(o->seg_hi - lo);
	void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -1;
	memcpy(m, (const void *)(uintptr_t)lo, bytes);
	o->copy = m;
	o->copy_bytes = bytes;
	o->seg_lo = lo;
	o->delta = (uint64_t)(uintptr_t)m - lo;
	return 0;
}

void frametab_drop_copy(struct object *o)
{
	if (o->copy)
		munmap(o->copy, o->copy_bytes);
	o->copy = NULL;
}

/*
 * Blocks are many and small (a few KiB of rows each): a mapping apiece, mprotect'ed and its scratch
 * unmapped, cost two TLB shootdowns per block, each an interrupt of every CPU the program runs on
 * (the agent's thread waited for them: bench/README.md). So their
 * rows are carved from chunks that are never unmapped, made read-only once full, and their builder's
 * scratch is kept for the next. Builders run one at a time (modules.c's lock).
 */
#define ARENA_CHUNK (256u << 10)

static struct {
	uint8_t *base;
	size_t used, size;
} arena;

static struct {
	struct row *rows;
	uint32_t capacity;
	size_t bytes;
} block_scratch;

static void *arena_take(size_t bytes)
{
	bytes = (bytes + 15) & ~(size_t)15;
	if (!arena.base || arena.size - arena.used < bytes) {
		size_t size = bytes > ARENA_CHUNK ? (bytes + 4095) & ~(size_t)4095 : ARENA_CHUNK;
		void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return NULL;
		if (arena.base)
			mprotect(arena.base, arena.size, PROT_READ); /* full: nothing can scribble on it from here */
		arena.base = m;
		arena.used = 0;
		arena.size = size;
	}
	void *p = arena.base + arena.used;
	arena.used += bytes;
	return p;
}

static void free_builder(struct builder *b)
{
	if (b->clip) { /* a block's: the scratch is kept */
		block_scratch.rows = b->rows;
		block_scratch.capacity = b->capacity;
		block_scratch.bytes = b->bytes;
	} else if (b->rows) {
		munmap(b->rows, b->bytes);
	}
}

/* The initial location of the header's i-th FDE (sorted by it). */
static uint64_t fde_start(const struct object *o, const uint8_t *table, uint64_t i)
{
	int32_t at;
	memcpy(&at, table + 8 * i, 4);
	return o->hdr + (uint64_t)(int64_t)at;
}

/* Run the header's i-th FDE into b: 1 when it said anything (add_fde). */
static int add_fde_at(struct builder *b, const struct object *o, const uint8_t *table, uint64_t i)
{
	int32_t fde;
	memcpy(&fde, table + 8 * i + 4, 4);
	uint64_t at = o->hdr + (uint64_t)(int64_t)fde;
	if (at < o->seg_lo || at >= o->seg_hi)
		return 0;
	return frametab_add_fde(b, (const uint8_t *)(uintptr_t)(at + o->delta), (const uint8_t *)(uintptr_t)(o->seg_hi + o->delta));
}

/* What publish mapped for rows of nrows and npages. */
static size_t rows_bytes(uint32_t nrows, uint32_t npages)
{
	return sizeof(struct rows) + (size_t)nrows * sizeof(struct row) + (size_t)npages * 4;
}

/* b's rows, base to end, into a read-only mapping of their own with the per-KiB index; b is freed. */
static const struct rows *publish(struct builder *b, uint64_t end)
{
	if (b->failed || !b->nrows || end <= b->base) {
		free_builder(b);
		return NULL;
	}
	uint64_t span = end - b->base;
	uint32_t npages = (uint32_t)(span >> PAGE_SHIFT) + 2;
	size_t bytes = rows_bytes(b->nrows, npages);
	void *m = b->clip ? arena_take(bytes) : mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!m || m == MAP_FAILED) {
		free_builder(b);
		return NULL;
	}
	struct rows *t = m;
	struct row *rows = (struct row *)(t + 1);
	uint32_t *pages = (uint32_t *)(rows + b->nrows);
	uint32_t nrows = b->nrows;
	memcpy(rows, b->rows, (size_t)nrows * sizeof(struct row));
	free_builder(b);
	uint32_t r = 0;
	for (uint32_t i = 0; i < npages; i++) {
		uint64_t at = (uint64_t)i << PAGE_SHIFT;
		while (r + 1 < nrows && rows[r + 1].start <= at)
			r++;
		pages[i] = r;
	}
	t->base = b->base;
	t->end = end;
	t->nrows = nrows;
	t->npages = npages;
	t->rows = rows;
	t->pages = pages;
	if (!b->clip)
		mprotect(m, bytes, PROT_READ); /* read-only from here: nothing can scribble on what handlers read */
	return t;
}

void frametab_free_rows(const struct rows *t)
{
	if (t)
		munmap((void *)(uintptr_t)t, rows_bytes(t->nrows, t->npages));
}

const struct rows *frametab_build_rows(const struct object *o)
{
	if (!o->fde_count)
		return NULL;
	const uint8_t *table = (const uint8_t *)(uintptr_t)(o->table + o->delta);
	struct builder b;
	memset(&b, 0, sizeof b);
	b.delta = o->delta;
	b.floor = (const uint8_t *)(uintptr_t)(o->seg_lo + o->delta);
	b.limit = UINT64_MAX;
	b.base = fde_start(o, table, 0);
	uint64_t end = b.base;
	for (uint64_t i = 0; i < o->fde_count && !b.failed; i++) {
		add_fde_at(&b, o, table, i);
		if (b.nrows && b.base + b.rows[b.nrows - 1].start > end)
			end = b.base + b.rows[b.nrows - 1].start;
	}
	return publish(&b, end);
}

/*
 * The rows of [lo, hi) alone: what frametab_build_rows says there, from the FDEs that start in it and
 * the one in force at lo. Over the whole object a row holds from its pc until a later FDE's row (in
 * the header's order) or its FDE's end, so at lo the answer is the last FDE starting at or before lo
 * that says anything (those that say nothing are skipped there too), then every FDE starting below hi.
 */
#define SKIPPED_BEFORE 64 /* FDEs said nothing before lo: stop looking, lo is in a gap (libunwind's) */

const struct rows *frametab_build_block(const struct object *o, uint64_t lo, uint64_t hi)
{
	if (!o->fde_count || lo >= hi)
		return NULL;
	const uint8_t *table = (const uint8_t *)(uintptr_t)(o->table + o->delta);
	struct builder b;
	memset(&b, 0, sizeof b);
	b.delta = o->delta;
	b.floor = (const uint8_t *)(uintptr_t)(o->seg_lo + o->delta);
	b.base = lo;
	b.limit = hi;
	b.clip = 1;
	b.rows = block_scratch.rows;
	b.capacity = block_scratch.capacity;
	b.bytes = block_scratch.bytes;
	uint64_t first = 0, n = o->fde_count; /* first: of the FDEs starting after lo */
	while (first < n) {
		uint64_t mid = first + (n - first) / 2;
		if (fde_start(o, table, mid) <= lo)
			first = mid + 1;
		else
			n = mid;
	}
	for (uint64_t i = first, tries = 0; i > 0 && tries < SKIPPED_BEFORE; i--, tries++)
		if (add_fde_at(&b, o, table, i - 1))
			break;
	for (uint64_t i = first; i < o->fde_count && !b.failed && fde_start(o, table, i) < hi; i++)
		add_fde_at(&b, o, table, i);
	return publish(&b, hi);
}
