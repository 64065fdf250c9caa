/*
 * trace_allocs.c - the payloads of the allocation records (TRACE_FORMAT.md:
 * ALLOCS 9, ALLOCS_PACKED 13, ALLOCS_IDS 14), beside trace_records.c's other
 * records and through the same bounds-checked cursor. They carry almost
 * every byte of an allocation trace, so their loops are written for speed:
 * varint columns checked eight bytes at a time, then one decoding pass with
 * the process's window of live blocks (trace_heap_refs.c) in locals.
 */
#include "trace_reader_internal.h"

#include <inttypes.h>
#include <string.h>

static inline int take_varint(struct cursor *c, uint64_t *out)
{
	/* Most fields are deltas of one byte: that case first, without the loop. */
	if (__builtin_expect(c->at < c->size && !(c->p[c->at] & 0x80), 1)) {
		*out = c->p[c->at++];
		return 0;
	}
	uint64_t v = 0;
	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (c->at >= c->size)
			return trace_reader_corrupt(c->r, c->offset, "%s record (%zu bytes): an entry is cut short", c->record,
				       c->size);
		uint8_t b = c->p[c->at++];
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			return 0;
		}
	}
	return trace_reader_corrupt(c->r, c->offset, "%s record: a number longer than 64 bits", c->record);
}

static uint64_t unzigzag(uint64_t v)
{
	return (v >> 1) ^ (uint64_t)-(int64_t)(v & 1);
}

/* 1.3: varint entries, each field a delta from the previous entry's (TRACE_FORMAT.md). */
int trace_parse_allocs(struct cursor *c, struct trace_allocs *a)
{
	struct trace_reader *r = c->r;
	uint32_t count;
	uint64_t seq, time_ns, address = 0, tid = 0;
	if (cursor_u32(c, &a->pid, "pid") < 0 || cursor_u32(c, &count, "count") < 0 ||
	    cursor_u64(c, &seq, "first_seq") < 0 || cursor_u64(c, &time_ns, "first_time_ns") < 0)
		return -1;
	if (count > (c->size - c->at) / TRACE_ALLOCS_MIN_ENTRY)
		return trace_reader_corrupt(r, c->offset, "ALLOCS record (%zu bytes): %" PRIu32 " entries do not fit", c->size,
			       count);
	if (trace_reader_reserve(r, (void **)&r->heap, &r->heap_cap, count, sizeof *r->heap) < 0)
		return -1;
	for (uint32_t i = 0; i < count; i++) {
		struct trace_heap_event *e = &r->heap[i];
		uint64_t op = 0, d_seq = 0, d_tid = 0, d_time = 0, d_address = 0;
		if (take_varint(c, &op) < 0 || take_varint(c, &d_seq) < 0 || take_varint(c, &d_tid) < 0 ||
		    take_varint(c, &d_time) < 0 || take_varint(c, &d_address) < 0)
			return -1;
		seq += unzigzag(d_seq);
		tid += unzigzag(d_tid);
		time_ns += unzigzag(d_time);
		address += unzigzag(d_address);
		e->seq = seq;
		e->tid = (uint32_t)tid;
		e->time_ns = time_ns;
		e->address = address;
		e->kind = (uint32_t)(op & 15);
		e->flags = (uint32_t)((op >> 4) & 31);
		e->size = 0;
		e->stack_id = 0;
		if (e->kind != TRACE_HEAP_FREE && e->kind != TRACE_HEAP_NONE) {
			uint64_t stack = 0;
			if (take_varint(c, &e->size) < 0 || take_varint(c, &stack) < 0)
				return -1;
			e->stack_id = stack > UINT32_MAX ? UINT32_MAX : (uint32_t)stack;
		}
	}
	a->count = count;
	a->events = r->heap;
	return 0;
}

/* The column loops' view of a payload: a pointer pair a compiler keeps in
 * registers (a cursor in memory cost a store per varint). */
struct vin {
	const uint8_t *p, *end;
};

/* The next varint into *out: 0, else 1 (cut short) or 2 (longer than 64 bits). */
static inline int vin_take(struct vin *in, uint64_t *out)
{
	if (__builtin_expect(in->p < in->end && !(*in->p & 0x80), 1)) {
		*out = *in->p++;
		return 0;
	}
	uint64_t v = 0;
	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (in->p >= in->end)
			return 1;
		uint8_t b = *in->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			return 0;
		}
	}
	return 2;
}

/* Step over n varints of a column from p, as n calls of vin_take would:
 * where the column ends, or NULL with *bad as vin_take's error. Eight bytes
 * at a time while whole varints end in them (nearly every field is one or two
 * bytes), one varint at a time otherwise. */
static const uint8_t *vin_skip(const uint8_t *p, const uint8_t *end, uint64_t n, int *bad)
{
	while (n) {
		/* Whole words: count the varints ending in each (none of ten bytes
		 * or more hides in words that each hold an end, when the bytes
		 * continued across words are counted too). */
		unsigned run = 0; /* continuation bytes at the end of the last word */
		while (n > 8 && end - p >= 8) {
			uint64_t w;
			memcpy(&w, p, 8);
			uint64_t stops = ~w & 0x8080808080808080ull; /* the last byte of each varint */
			if (!stops || run + ((unsigned)__builtin_ctzll(stops) >> 3) >= 10)
				break; /* a long varint: on its own below */
			n -= ((stops >> 7) * 0x0101010101010101ull) >> 56; /* at most 8 of the more than 8 */
			run = (unsigned)__builtin_clzll(stops) >> 3;
			p += 8;
		}
		p -= run; /* back to the start of the varint the last word ended in */
		/* One varint as vin_take reads it (all that are left, near the end). */
		do {
			struct vin in = { p, end };
			uint64_t v;
			if ((*bad = vin_take(&in, &v)) != 0)
				return NULL;
			p = in.p;
			n--;
		} while (n && (n <= 8 || end - p < 8));
	}
	return p;
}

/* The next varint of a column vin_skip has checked: no bounds, no errors. */
static inline uint64_t vin_next(const uint8_t **pp)
{
	const uint8_t *p = *pp;
	uint64_t v = *p++;
	if (__builtin_expect(v & 0x80, 0)) {
		uint8_t b;
		unsigned shift = 7;
		v &= 0x7f;
		do {
			b = *p++;
			v |= (uint64_t)(b & 0x7f) << shift;
			shift += 7;
		} while (b & 0x80);
	}
	*pp = p;
	return v;
}

static inline uint64_t unzigzag_add(uint64_t base, uint64_t v)
{
	return base + ((v >> 1) ^ (uint64_t) - (int64_t)(v & 1));
}

/* The zero values among n varints from *pp (checked as vin_skip does, which
 * it stands for where a later column's length depends on them). */
static int vin_count_zeros(const uint8_t **pp, const uint8_t *end, uint32_t n, uint32_t *zeros)
{
	struct vin in = { *pp, end };
	uint64_t v;
	*zeros = 0;
	for (uint32_t i = 0; i < n; i++) {
		int bad = vin_take(&in, &v);
		if (bad)
			return bad;
		*zeros += !v;
	}
	*pp = in.p;
	return 0;
}

/* Step over the n varints of the op column from p as vin_skip does (its end,
 * or NULL with *bad), counting the entries of kind 15 (frees) and of kinds
 * 1-14 (allocations): an entry's kind is the low four bits of its first byte.
 * Eight bytes at a time, as vin_skip: a pass of vin_take per entry that kept
 * each op for the decoding pass was a measurable part of reading lua5.4's
 * trace (bench/README.md, "analyze: reading traces"). */
static const uint8_t *ops_count(const uint8_t *p, const uint8_t *end, uint64_t n, int *bad, uint32_t *nfrees,
				uint32_t *nallocs)
{
	const uint8_t *q = vin_skip(p, end, n, bad);
	if (!q)
		return NULL;
	const uint64_t ones = 0x0101010101010101ull, high = ones << 7, low7 = ones * 0x7f;
	uint64_t starts = 0, frees = 0, nones = 0, carry = 0; /* carry: 0x80 when the byte before continues */
	for (; q - p >= 8; p += 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		uint64_t cont = w & high, start = ~(cont << 8 | carry) & high;
		carry = cont >> 56;
		uint64_t kind = w & (ones * 15);
		/* The bytes whose kind is 15, and 0: x + 0x7f has bit 7 set where a byte x (< 16) is not zero. */
		uint64_t is_free = ~((kind ^ (ones * 15)) + low7) & start, is_none = ~(kind + low7) & start;
		starts += ((start >> 7) * ones) >> 56;
		frees += ((is_free >> 7) * ones) >> 56;
		nones += ((is_none >> 7) * ones) >> 56;
	}
	for (; p < q; p++) {
		if (!carry) {
			starts++;
			frees += (*p & 15) == 15;
			nones += (*p & 15) == 0;
		}
		carry = *p & 0x80;
	}
	*nfrees = (uint32_t)frees;
	*nallocs = (uint32_t)(starts - frees - nones);
	return q;
}

/* A process's window of live blocks by ordinal (trace_heap_refs.c) as the
 * decoding loop keeps it: its fields in locals, next counted here. */
struct heap_window {
	struct trace_heap_proc *proc;
	uint64_t *slots; /* proc->window */
	uint64_t mask;   /* 2^window_bits - 1 */
	uint64_t next;   /* proc->next_ordinal, handed back around the calls that read or change it */
};

/* The next allocation entry (ordinal next, then counted) lives at address
 * (0: it is not live); 0, or -1 with ENOMEM. */
static inline int window_add(struct heap_window *w, uint64_t address)
{
	uint64_t *slot = w->slots ? &w->slots[w->next & w->mask] : NULL;
	if (slot && !*slot) {
		*slot = address;
		w->next++;
		return 0;
	}
	w->proc->next_ordinal = w->next;
	int got = trace_heap_ordinal_add_slow(w->proc, address);
	*w = (struct heap_window){ w->proc, w->proc->window, ((uint64_t)1 << w->proc->window_bits) - 1,
				   w->proc->next_ordinal };
	return got;
}

/* 1 and *address if ordinal is live (and is now freed), else 0. */
static inline int window_take(struct heap_window *w, uint64_t ordinal, uint64_t *address)
{
	if (ordinal >= w->next)
		return 0;
	if (w->next - ordinal <= w->mask + 1) { /* a window exists: next > 0 */
		uint64_t *slot = &w->slots[ordinal & w->mask];
		if (!*slot)
			return 0;
		*address = *slot;
		*slot = 0;
		return 1;
	}
	return trace_heap_table_take(&w->proc->live, ordinal + 1, address);
}

/* ALLOCS_PACKED: the ALLOCS fields column by column, and each free as a
 * reference to its allocation, resolved through the process's live blocks
 * (trace_heap_refs.c). Handed out as an ALLOCS record. Every column is
 * checked (and the starts of all found) before any reference resolves, so a
 * record cut short changes no state; then one pass reads the columns side by
 * side and writes each event once (a pass per column over the events, each
 * event's 48 bytes rewritten eight times, was a large part of reading
 * lua5.4's allocation trace: bench/README.md, "analyze: reading traces"). */
static inline __attribute__((always_inline)) int parse_packed(struct cursor *c, struct trace_allocs *a, int ids)
{
	const char *name = ids ? "ALLOCS_IDS" : "ALLOCS_PACKED";
	struct trace_reader *r = c->r;
	uint32_t count;
	uint64_t seq, time_ns, v = 0;
	if (cursor_u32(c, &a->pid, "pid") < 0 || cursor_u32(c, &count, "count") < 0 ||
	    cursor_u64(c, &seq, "first_seq") < 0 || cursor_u64(c, &time_ns, "first_time_ns") < 0)
		return -1;
	if (count > (c->size - c->at) / TRACE_ALLOCS_PACKED_MIN_ENTRY)
		return trace_reader_corrupt(r, c->offset, "%s record (%zu bytes): %" PRIu32 " entries do not fit", name,
			       c->size, count);
	if (trace_reader_reserve(r, (void **)&r->heap, &r->heap_cap, count, sizeof *r->heap) < 0)
		return -1;
	struct trace_heap_proc *proc = trace_heap_proc_get(&r->heap_procs, a->pid);
	if (!proc)
		return trace_reader_corrupt(r, c->offset, "out of memory");
	struct trace_heap_event *ev = r->heap;
	uint32_t nallocs = 0, nfrees = 0, alloc_written = 0, free_written = 0;
	const uint8_t *end = c->p + c->size, *ops = c->p + c->at;
	int bad = 0;
	/* Where each column starts: seq, tid, time, size, stack, alloc_ref, [alloc_address,] free_ref, [free_address]. */
	const uint8_t *col[9] = { 0 }, *p = ops_count(ops, end, count, &bad, &nfrees, &nallocs);
	const uint64_t len[6] = { count, count, count, nallocs, nallocs, nallocs };
	for (int k = 0; k < 6 && !bad; k++) {
		col[k] = p;
		p = vin_skip(p, end, len[k], &bad);
	}
	if (!bad && !ids) {
		const uint8_t *q = col[5];
		bad = vin_count_zeros(&q, end, nallocs, &alloc_written);
		col[6] = p;
		if (!bad)
			p = vin_skip(p, end, alloc_written, &bad);
	}
	if (!bad) {
		col[7] = p;
		if (ids)
			p = vin_skip(p, end, nfrees, &bad);
		else if (!(bad = vin_count_zeros(&p, end, nfrees, &free_written))) {
			col[8] = p;
			p = vin_skip(p, end, free_written, &bad);
		}
	}
	if (bad == 1)
		return trace_reader_corrupt(r, c->offset, "%s record (%zu bytes): an entry is cut short", name, c->size);
	if (bad)
		return trace_reader_corrupt(r, c->offset, "%s record: a number longer than 64 bits", name);
	c->at = (size_t)(p - c->p);
	/* The process's window in locals (a store to an event could be one to
	 * it, for the compiler, which then read it again at every use), handed
	 * back to it around the calls that change it. */
	struct heap_window hw = { proc, proc->window, ((uint64_t)1 << proc->window_bits) - 1, proc->next_ordinal };
	uint64_t previous = hw.next, nfreed = proc->nfreed, tid = 0, alloc_address = 0, free_address = 0;
	const uint64_t id_base = TRACE_HEAP_NEW_BLOCK | (uint64_t)proc->index << TRACE_HEAP_ORDINAL_BITS;
	const uint64_t ordinal_mask = ((uint64_t)1 << TRACE_HEAP_ORDINAL_BITS) - 1;
	enum { FINE, NOT_LIVE, NOT_REPLACEABLE, NOT_THERE, NO_MEMORY } error = FINE;
	uint64_t error_n = 0;
	uint32_t i;
	for (i = 0; i < count; i++) {
		v = vin_next(&ops);
		uint32_t kind = (uint32_t)(v & 15);
		/* Every field written once, in place (an event built aside and copied
		 * was read back before its stores had landed). */
		struct trace_heap_event *e = &ev[i];
		e->kind = kind;
		e->flags = (uint32_t)((v >> 4) & 31);
		/* Nearly every seq delta is +1 (2 zigzagged), every tid and time delta 0. */
		v = vin_next(&col[0]);
		seq = __builtin_expect(v == 2, 1) ? seq + 1 : unzigzag_add(seq, v);
		e->seq = seq;
		v = vin_next(&col[1]);
		if (__builtin_expect(v != 0, 0))
			tid = unzigzag_add(tid, v);
		e->tid = (uint32_t)tid;
		v = vin_next(&col[2]);
		if (__builtin_expect(v != 0, 0))
			time_ns = unzigzag_add(time_ns, v);
		e->time_ns = time_ns;
		uint64_t address = 0;
		if (kind == TRACE_HEAP_FREE) {
			e->size = 0;
			e->stack_id = 0;
			v = vin_next(&col[7]);
			if (v) {
				uint64_t ordinal = previous + ((v - 1) >> 1 ^ (uint64_t) - (int64_t)((v - 1) & 1));
				if (!window_take(&hw, ordinal, &address)) {
					error = NOT_LIVE;
					error_n = ordinal;
					break;
				}
				previous = ordinal;
				proc->freed[nfreed++ % TRACE_HEAP_FREED] = address; /* live blocks are never 0 */
			} else if (!ids) {
				address = free_address = unzigzag_add(free_address, vin_next(&col[8]));
				if (address)
					proc->freed[nfreed++ % TRACE_HEAP_FREED] = address;
			} /* else a free of no recorded block: no identity, and not one of the latest frees */
			e->address = address;
		} else if (kind != TRACE_HEAP_NONE) {
			e->size = vin_next(&col[3]);
			v = vin_next(&col[4]);
			e->stack_id = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
			v = vin_next(&col[5]);
			if (!v && ids) {
				address = id_base | (hw.next & ordinal_mask); /* a new block */
			} else if (!v) {
				address = alloc_address = unzigzag_add(alloc_address, vin_next(&col[6]));
			} else if (ids && v > TRACE_HEAP_FREED) { /* replaces a live block: takes its identity */
				uint64_t back = v - TRACE_HEAP_FREED;
				if (back > hw.next || !window_take(&hw, hw.next - back, &address)) {
					error = NOT_REPLACEABLE;
					error_n = back;
					break;
				}
			} else {
				uint64_t *slot = &proc->freed[(nfreed - v) % TRACE_HEAP_FREED];
				if (v > TRACE_HEAP_FREED || v > nfreed || !*slot) {
					error = NOT_THERE;
					error_n = v;
					break;
				}
				address = *slot;
				*slot = 0;
			}
			e->address = address;
			if (window_add(&hw, address) < 0) {
				error = NO_MEMORY;
				break;
			}
		} else {
			e->address = 0;
			e->size = 0;
			e->stack_id = 0;
		}
	}
	proc->next_ordinal = hw.next;
	proc->nfreed = nfreed;
	switch (error) {
	case FINE:
		break;
	case NOT_LIVE:
		return trace_reader_corrupt(r, c->offset, "%s record: a free of allocation %" PRIu64 " of process %" PRIu32
			       ", which is not live", name, error_n, a->pid);
	case NOT_REPLACEABLE:
		return trace_reader_corrupt(r, c->offset, "%s record: an allocation replaces allocation %" PRIu64
			       " back, which is not live", name, error_n);
	case NOT_THERE:
		return trace_reader_corrupt(r, c->offset, "%s record: an allocation names free %" PRIu64
			       " back, which is not there", name, error_n);
	case NO_MEMORY:
		return trace_reader_corrupt(r, c->offset, "out of memory");
	}
	a->count = count;
	a->events = ev;
	return 0;
}

/* parse_packed once for each record type: ids constant in each loop. */
int trace_parse_allocs_packed(struct cursor *c, struct trace_allocs *a, int ids)
{
	return ids ? parse_packed(c, a, 1) : parse_packed(c, a, 0);
}
