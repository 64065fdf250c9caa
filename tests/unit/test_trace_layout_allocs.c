/*
 * test_trace_layout_allocs.c - unit_trace_layout's allocation records
 * (ALLOCS, ALLOCS_PACKED, ALLOCS_IDS) on streams built by hand from
 * TRACE_FORMAT.md: their fields, columns, references and corruptions.
 */
#include "trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_STOP_AT_FIRST_FAILURE /* later steps use what earlier ones built */
#include "check.h"
#include "trace_test_support.h"
#include "trace_layout_support.h"

void test_allocs(void);
void test_allocs_packed(void);
void test_allocs_ids(void);
void test_allocs_ids_long_columns(void);
void test_allocs_ids_mixed_ops(void);

static void put_end_v12(struct bytes *raw)
{
	size_t at = begin_record(raw, TRACE_END, 0);
	put_le(raw, 1000, 8), put_le(raw, 0, 4), put_le(raw, 1, 4);
	put_le(raw, 0, 8), put_le(raw, 0, 8), put_le(raw, 0, 8), put_le(raw, 0, 8), put_le(raw, 0, 8);
	end_record(raw, at);
}

void test_allocs(void)
{
	struct bytes raw = {0};
	put_file_header(&raw, 1, 3, 16);
	size_t at = begin_record(&raw, TRACE_ALLOCS, 0);
	put_le(&raw, 77, 4), put_le(&raw, 3, 4), put_le(&raw, 1000, 8), put_le(&raw, 5000000, 8);
	/* malloc (1) seq 1000 tid 77 time +0 address 0x1000, size 32, stack 5 */
	put_le(&raw, 1, 1), put_le(&raw, 0, 1), put_le(&raw, 0x9a, 1), put_le(&raw, 0x01, 1), put_le(&raw, 0, 1);
	put_le(&raw, 0x80, 1), put_le(&raw, 0x40, 1), put_le(&raw, 32, 1), put_le(&raw, 5, 1);
	/* realloc (3) moved (flag 1): seq +1, same tid, time +2, address +0x10 (zigzag 0x20), 300 B, stack 6 */
	put_le(&raw, 3 | 1 << 4, 1), put_le(&raw, 2, 1), put_le(&raw, 0, 1), put_le(&raw, 4, 1);
	put_le(&raw, 0x20, 1), put_le(&raw, 0xac, 1), put_le(&raw, 0x02, 1), put_le(&raw, 6, 1);
	/* free (15) temporary (flag 4): seq +1, tid -1 (zigzag 1), time -1 (zigzag 1), address -0x10 (zigzag 0x1f) */
	put_le(&raw, 15 | 4 << 4, 1), put_le(&raw, 2, 1), put_le(&raw, 1, 1), put_le(&raw, 1, 1);
	put_le(&raw, 0x1f, 1);
	end_record(&raw, at);
	put_end_v12(&raw);
	struct bytes z;
	struct trace_reader *r = open_raw(&raw, &z, "t");
	struct trace_record rec;
	CHECK(r && trace_reader_next(r, &rec) == 1 && rec.type == TRACE_ALLOCS);
	if (r && rec.type == TRACE_ALLOCS) {
		const struct trace_heap_event *e = rec.u.allocs.events;
		CHECK(rec.u.allocs.pid == 77 && rec.u.allocs.count == 3);
		CHECK(e[0].kind == TRACE_HEAP_MALLOC && e[0].seq == 1000 && e[0].tid == 77 && e[0].time_ns == 5000000 &&
		      e[0].address == 0x1000 && e[0].size == 32 && e[0].stack_id == 5 && e[0].flags == 0);
		CHECK(e[1].kind == TRACE_HEAP_REALLOC && e[1].flags == TRACE_HEAP_MOVED && e[1].seq == 1001 &&
		      e[1].time_ns == 5000002 && e[1].address == 0x1010 && e[1].size == 300 && e[1].stack_id == 6);
		CHECK(e[2].kind == TRACE_HEAP_FREE && e[2].flags == TRACE_HEAP_TEMPORARY && e[2].seq == 1002 &&
		      e[2].tid == 76 && e[2].time_ns == 5000001 && e[2].address == 0x1000);
		{ int got = trace_reader_next(r, &rec); CHECKF(got == 1 && rec.type == TRACE_END, "%d %s", got, trace_reader_error(r)); }
	}
	trace_reader_close(r);
	free(z.p);
	free(raw.p);
	memset(&raw, 0, sizeof raw);
	/* An entry cut short is corrupt. */
	put_file_header(&raw, 1, 3, 16);
	at = begin_record(&raw, TRACE_ALLOCS, 0);
	put_le(&raw, 77, 4), put_le(&raw, 1, 4), put_le(&raw, 1, 8), put_le(&raw, 1, 8);
	put_le(&raw, 1, 1), put_le(&raw, 0, 1), put_le(&raw, 0, 1), put_le(&raw, 0, 1), put_le(&raw, 0x80, 1);
	end_record(&raw, at);
	put_end_v12(&raw);
	expect_corrupt(&raw, "ALLOCS record");
	/* A 1.2 reader skips ALLOCS by its length: the writer never sets REQUIRED on it. */
}

/* Bytes, one per argument: the columns of ALLOCS_PACKED below are easier to check so. */
static void put_bytes(struct bytes *raw, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		put_le(raw, b[i], 1);
}
#define PUT(raw, ...) put_bytes(raw, (const uint8_t[]){ __VA_ARGS__ }, sizeof((const uint8_t[]){ __VA_ARGS__ }))

/* ALLOCS_PACKED (13), byte by byte from TRACE_FORMAT.md: columns, and references
 * resolved across records of the process. */
void test_allocs_packed(void)
{
	struct bytes raw = { 0 };
	put_file_header(&raw, 1, 3, 16);
	size_t at = begin_record(&raw, 13, 1);
	put_le(&raw, 77, 4), put_le(&raw, 5, 4), put_le(&raw, 100, 8), put_le(&raw, 5000000, 8);
	/* malloc 0x1000 (ordinal 0), malloc 0x2000 (1), free 0x1000 by reference, malloc 0x1000
	 * by the latest free (2), free 0x5000 (not live: its address written) */
	PUT(&raw, 1, 1, 15, 1, 15);            /* op */
	PUT(&raw, 0, 2, 2, 2, 2);              /* seq 100..104 */
	PUT(&raw, 0x9a, 0x01, 0, 2, 0, 0);     /* tid 77 77 78 78 78 */
	PUT(&raw, 0, 0, 6, 0, 0);              /* time +0 +0 +3 +0 +0 */
	PUT(&raw, 32, 48, 32);                 /* size of the allocations */
	PUT(&raw, 5, 6, 5);                    /* stack_id */
	PUT(&raw, 0, 0, 1);                    /* alloc_ref: the third reuses the latest free */
	PUT(&raw, 0x80, 0x40, 0x80, 0x40);     /* alloc_address: 0x1000, +0x1000 */
	PUT(&raw, 1, 0);                       /* free_ref: ordinal 0 (delta 0 from 0), none */
	PUT(&raw, 0x80, 0xc0, 0x02);           /* free_address 0x5000 */
	end_record(&raw, at);
	at = begin_record(&raw, 13, 1);
	put_le(&raw, 77, 4), put_le(&raw, 2, 4), put_le(&raw, 105, 8), put_le(&raw, 5000010, 8);
	/* free of ordinal 1 (0x2000: delta -2 from the 3 before), then of ordinal 2 (0x1000: +1) */
	PUT(&raw, 15, 15), PUT(&raw, 0, 2), PUT(&raw, 0x9a, 0x01, 0), PUT(&raw, 0, 0), PUT(&raw, 4, 3);
	end_record(&raw, at);
	put_end_v12(&raw);
	struct bytes z;
	struct trace_reader *r = open_raw(&raw, &z, "t");
	struct trace_record rec;
	CHECK(r && trace_reader_next(r, &rec) == 1 && rec.type == TRACE_ALLOCS);
	if (r && rec.type == TRACE_ALLOCS) {
		const struct trace_heap_event *e = rec.u.allocs.events;
		CHECK(rec.u.allocs.pid == 77 && rec.u.allocs.count == 5);
		CHECK(e[0].kind == TRACE_HEAP_MALLOC && e[0].seq == 100 && e[0].tid == 77 && e[0].time_ns == 5000000 &&
		      e[0].address == 0x1000 && e[0].size == 32 && e[0].stack_id == 5);
		CHECK(e[1].kind == TRACE_HEAP_MALLOC && e[1].seq == 101 && e[1].address == 0x2000 && e[1].size == 48 &&
		      e[1].stack_id == 6);
		CHECK(e[2].kind == TRACE_HEAP_FREE && e[2].seq == 102 && e[2].tid == 78 && e[2].time_ns == 5000003 &&
		      e[2].address == 0x1000);
		CHECK(e[3].kind == TRACE_HEAP_MALLOC && e[3].seq == 103 && e[3].address == 0x1000 && e[3].size == 32);
		CHECK(e[4].kind == TRACE_HEAP_FREE && e[4].seq == 104 && e[4].address == 0x5000);
	}
	CHECK(r && trace_reader_next(r, &rec) == 1 && rec.type == TRACE_ALLOCS);
	if (r && rec.type == TRACE_ALLOCS) {
		const struct trace_heap_event *e = rec.u.allocs.events;
		CHECK(rec.u.allocs.count == 2 && e[0].seq == 105 && e[0].address == 0x2000 && e[1].seq == 106 &&
		      e[1].address == 0x1000 && e[1].tid == 77 && e[1].time_ns == 5000010);
	}
	{ int got = r ? trace_reader_next(r, &rec) : -1; CHECKF(got == 1 && rec.type == TRACE_END, "%d", got); }
	trace_reader_close(r);
	free(z.p);
	free(raw.p);
	/* A free of an allocation that is not live, and an allocation naming a free that is not
	 * there, are corrupt. */
	memset(&raw, 0, sizeof raw);
	put_file_header(&raw, 1, 3, 16);
	at = begin_record(&raw, 13, 1);
	put_le(&raw, 77, 4), put_le(&raw, 1, 4), put_le(&raw, 1, 8), put_le(&raw, 1, 8);
	PUT(&raw, 15, 0, 0, 0, 5);
	end_record(&raw, at);
	put_end_v12(&raw);
	expect_corrupt(&raw, "which is not live");
	free(raw.p);
	memset(&raw, 0, sizeof raw);
	put_file_header(&raw, 1, 3, 16);
	at = begin_record(&raw, 13, 1);
	put_le(&raw, 77, 4), put_le(&raw, 1, 4), put_le(&raw, 1, 8), put_le(&raw, 1, 8);
	PUT(&raw, 1, 0, 0, 0, 16, 1, 1);
	end_record(&raw, at);
	put_end_v12(&raw);
	expect_corrupt(&raw, "which is not there");
	free(raw.p);
	/* A column cut short is corrupt too. */
	memset(&raw, 0, sizeof raw);
	put_file_header(&raw, 1, 3, 16);
	at = begin_record(&raw, 13, 1);
	put_le(&raw, 77, 4), put_le(&raw, 1, 4), put_le(&raw, 1, 8), put_le(&raw, 1, 8);
	PUT(&raw, 1, 0, 0, 0, 16, 1);
	end_record(&raw, at);
	put_end_v12(&raw);
	expect_corrupt(&raw, "ALLOCS_PACKED record");
	free(raw.p);
}

/* ALLOCS_IDS (14, 1.5), byte by byte from TRACE_FORMAT.md: no addresses; a
 * block's identity is 2^63 | its allocation's ordinal, inherited by an
 * allocation that replaces it or restores it. */
void test_allocs_ids(void)
{
	const uint64_t NEW = 1ull << 63;
	struct bytes raw = { 0 };
	put_file_header(&raw, 1, 5, 16);
	size_t at = begin_record(&raw, 14, 1);
	put_le(&raw, 77, 4), put_le(&raw, 6, 4), put_le(&raw, 100, 8), put_le(&raw, 5000000, 8);
	/* malloc (ordinal 0), malloc (1), free of ordinal 0, free of no recorded block, malloc
	 * replacing ordinal 1 (2: one back), realloc RESTORED naming the latest free (3) */
	PUT(&raw, 1, 1, 15, 15, 1, 0x83, 0x02);  /* op: realloc with flag 16 is 3 | 16 << 4 */
	PUT(&raw, 0, 2, 2, 2, 2, 2);              /* seq 100..105 */
	PUT(&raw, 0x9a, 0x01, 0, 0, 0, 0, 0);     /* tid 77 */
	PUT(&raw, 0, 0, 6, 0, 0, 0);              /* time +0 +0 +3 +0 +0 +0 */
	PUT(&raw, 32, 48, 64, 16);                /* size of the allocations */
	PUT(&raw, 5, 6, 7, 8);                    /* stack_id */
	PUT(&raw, 0, 0, 65, 1);                   /* alloc_ref: new, new, replaces 1 back, restores latest free */
	PUT(&raw, 1, 0);                          /* free_ref: ordinal 0 (delta 0 from 0), none */
	end_record(&raw, at);
	at = begin_record(&raw, 14, 1);
	put_le(&raw, 77, 4), put_le(&raw, 2, 4), put_le(&raw, 106, 8), put_le(&raw, 5000010, 8);
	/* free of ordinal 2 (delta +2 from the 4 before: 2 - 4 = -2), then of ordinal 3 (+1) */
	PUT(&raw, 15, 15), PUT(&raw, 0, 2), PUT(&raw, 0x9a, 0x01, 0), PUT(&raw, 0, 0), PUT(&raw, 4, 3);
	end_record(&raw, at);
	at = begin_record(&raw, 14, 1); /* another process: its own ordinals, other identities */
	put_le(&raw, 78, 4), put_le(&raw, 1, 4), put_le(&raw, 1, 8), put_le(&raw, 5000020, 8);
	PUT(&raw, 1, 0, 0x9c, 0x01, 0, 32, 5, 0);
	end_record(&raw, at);
	put_end_1_4(&raw, 0);
	struct bytes z;
	struct trace_reader *r = open_raw(&raw, &z, "t");
	struct trace_record rec;
	CHECK(r && trace_reader_next(r, &rec) == 1 && rec.type == TRACE_ALLOCS);
	if (r && rec.type == TRACE_ALLOCS) {
		const struct trace_heap_event *e = rec.u.allocs.events;
		CHECK(rec.u.allocs.pid == 77 && rec.u.allocs.count == 6);
		CHECK(e[0].kind == TRACE_HEAP_MALLOC && e[0].seq == 100 && e[0].tid == 77 && e[0].time_ns == 5000000 &&
		      e[0].address == (NEW | 0) && e[0].size == 32 && e[0].stack_id == 5);
		CHECK(e[1].kind == TRACE_HEAP_MALLOC && e[1].address == (NEW | 1) && e[1].size == 48 && e[1].stack_id == 6);
		CHECK(e[2].kind == TRACE_HEAP_FREE && e[2].seq == 102 && e[2].time_ns == 5000003 && e[2].address == (NEW | 0));
		CHECK(e[3].kind == TRACE_HEAP_FREE && e[3].address == 0);
		CHECK(e[4].kind == TRACE_HEAP_MALLOC && e[4].address == (NEW | 1) && e[4].size == 64);
		CHECK(e[5].kind == TRACE_HEAP_REALLOC && e[5].flags == TRACE_HEAP_RESTORED && e[5].address == (NEW | 0) &&
		      e[5].size == 16 && e[5].stack_id == 8);
	}
	CHECK(r && trace_reader_next(r, &rec) == 1 && rec.type == TRACE_ALLOCS);
	if (r && rec.type == TRACE_ALLOCS) {
		const struct trace_heap_event *e = rec.u.allocs.events;
		CHECK(rec.u.allocs.count == 2 && e[0].seq == 106 && e[0].address == (NEW | 1) && e[1].seq == 107 &&
		      e[1].address == (NEW | 0) && e[1].time_ns == 5000010);
	}
	CHECK(r && trace_reader_next(r, &rec) == 1 && rec.type == TRACE_ALLOCS);
	if (r && rec.type == TRACE_ALLOCS)
		CHECK(rec.u.allocs.pid == 78 && rec.u.allocs.count == 1 && rec.u.allocs.events[0].tid == 78 &&
		      rec.u.allocs.events[0].address == (NEW | 1ull << 40));
	{ int got = r ? trace_reader_next(r, &rec) : -1; CHECKF(got == 1 && rec.type == TRACE_END, "%d %s", got, r ? trace_reader_error(r) : ""); }
	trace_reader_close(r);
	free(z.p);
	free(raw.p);
	/* Replacing a block that is not live, naming a free that is not there (an
	 * unmatched free is none), freeing what is not live: corrupt. */
	static const uint8_t bad[][14] = {
		{ 1, 0, 0, 0, 16, 1, 65 },                       /* malloc replacing 1 back: there is none */
		{ 1, 1, 0, 0, 0, 0, 0, 0, 16, 16, 0, 0, 0, 65 }, /* the second replaces the first, live: fine */
		{ 15, 1, 0, 1, 0, 0, 0, 0, 16, 0, 1, 0 },       /* unmatched free, malloc naming it: not there */
		{ 15, 0, 0, 0, 5 },                              /* a free of ordinal 2, never allocated */
	};
	static const size_t bad_len[] = { 7, 14, 12, 5 };
	static const uint32_t bad_count[] = { 1, 2, 2, 1 };
	static const char *const bad_msg[] = { "which is not live", NULL, "which is not there", "which is not live" };
	for (unsigned k = 0; k < sizeof bad_len / sizeof *bad_len; k++) {
		memset(&raw, 0, sizeof raw);
		put_file_header(&raw, 1, 5, 16);
		at = begin_record(&raw, 14, 1);
		put_le(&raw, 77, 4), put_le(&raw, bad_count[k], 4), put_le(&raw, 1, 8), put_le(&raw, 1, 8);
		put_bytes(&raw, bad[k], bad_len[k]);
		end_record(&raw, at);
		put_end_1_4(&raw, 0);
		if (bad_msg[k]) {
			expect_corrupt(&raw, bad_msg[k]);
		} else {
			r = open_raw(&raw, &z, "t");
			CHECK(r && trace_reader_next(r, &rec) == 1 && rec.type == TRACE_ALLOCS && rec.u.allocs.count == 2 &&
			      rec.u.allocs.events[1].address == (NEW | 0));
			trace_reader_close(r);
			free(z.p);
		}
		free(raw.p);
	}
}

/* ALLOCS_IDS columns long enough to be stepped over eight bytes at a time,
 * with varints of every length in them: one of ten bytes (the longest) across
 * words, two-byte ones at word ends; then the same with an eleven-byte varint
 * (corrupt: longer than 64 bits) and cut short within a column. */
static void put_varint(struct bytes *raw, uint64_t v, unsigned pad)
{
	/* pad: at least this many bytes (continuation bytes of value 0 before the last) */
	for (unsigned n = 1; v >= 0x80 || n < pad; n++, v >>= 7)
		PUT(raw, (uint8_t)(v & 0x7f) | 0x80);
	PUT(raw, (uint8_t)v);
}

static void put_long_columns(struct bytes *raw, unsigned long_pad, int cut)
{
	enum { M = 40 };
	put_file_header(raw, 1, 5, 16);
	size_t at = begin_record(raw, 14, 1);
	put_le(raw, 77, 4), put_le(raw, M, 4), put_le(raw, 100, 8), put_le(raw, 5000000, 8);
	for (unsigned i = 0; i < M; i++)
		PUT(raw, 1); /* op: malloc */
	for (unsigned i = 0; i < M; i++)
		put_varint(raw, i ? 2 : 0, i == 20 ? long_pad : 0); /* seq +1, one of them padded long */
	put_varint(raw, 154, 0); /* tid 77 */
	for (unsigned i = 1; i < M; i++)
		PUT(raw, 0);
	for (unsigned i = 0; i < M; i++)
		put_varint(raw, i == 13 ? 2 * 1000000000000ull : 0, 0); /* time: once +10^12 */
	for (unsigned i = 0; i < M; i++)
		put_varint(raw, i % 7 == 6 ? 300 + i : i == 30 ? UINT64_MAX : i, 0); /* sizes of 1, 2 and 10 bytes */
	for (unsigned i = 0; i < M; i++)
		put_varint(raw, 1000 + i, 0); /* stack_id: two bytes each */
	for (unsigned i = 0; i < M - (cut ? 1 : 0); i++)
		PUT(raw, 0); /* alloc_ref: new blocks */
	end_record(raw, at);
	put_end_1_4(raw, 0);
}

void test_allocs_ids_long_columns(void)
{
	const uint64_t NEW = 1ull << 63;
	struct bytes raw = { 0 }, z;
	put_long_columns(&raw, 10, 0);
	struct trace_reader *r = open_raw(&raw, &z, "t");
	struct trace_record rec;
	CHECK(r && trace_reader_next(r, &rec) == 1 && rec.type == TRACE_ALLOCS && rec.u.allocs.count == 40);
	if (r && rec.type == TRACE_ALLOCS && rec.u.allocs.count == 40) {
		const struct trace_heap_event *e = rec.u.allocs.events;
		for (unsigned i = 0; i < 40; i++) {
			uint64_t size = i % 7 == 6 ? 300 + i : i == 30 ? UINT64_MAX : i;
			CHECKF(e[i].kind == TRACE_HEAP_MALLOC && e[i].seq == 100 + i && e[i].tid == 77 &&
				       e[i].time_ns == (i < 13 ? 5000000 : 5000000 + 1000000000000ull) && e[i].size == size &&
				       e[i].stack_id == 1000 + i && e[i].address == (NEW | i),
			       "entry %u: seq %llu time %llu size %llu stack %u", i, (unsigned long long)e[i].seq,
			       (unsigned long long)e[i].time_ns, (unsigned long long)e[i].size, e[i].stack_id);
		}
	}
	{ int got = r ? trace_reader_next(r, &rec) : -1; CHECKF(got == 1 && rec.type == TRACE_END, "%d", got); }
	trace_reader_close(r);
	free(z.p);
	free(raw.p);
	memset(&raw, 0, sizeof raw);
	put_long_columns(&raw, 11, 0);
	expect_corrupt(&raw, "longer than 64 bits");
	free(raw.p);
	memset(&raw, 0, sizeof raw);
	put_long_columns(&raw, 0, 1);
	expect_corrupt(&raw, "cut short");
	free(raw.p);
}

/* An op column long enough to be counted eight bytes at a time (trace_allocs.c:
 * ops_count), with two-byte ops across word ends, NONE entries and a reserved
 * kind (an allocation: it has size, stack and alloc_ref): a miscounted kind
 * would shift every column after the ops. Then the same with an op longer
 * than 64 bits among them. */
static void put_mixed_ops(struct bytes *raw, int too_long)
{
	enum { M = 45 };
	put_file_header(raw, 1, 5, 16);
	size_t at = begin_record(raw, 14, 1);
	put_le(raw, 77, 4), put_le(raw, M, 4), put_le(raw, 100, 8), put_le(raw, 5000000, 8);
	for (unsigned i = 0; i < M; i++)
		if (too_long && i == 20)
			PUT(raw, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0); /* 11 bytes */
		else switch (i % 5) {
		case 0: PUT(raw, 0); break;          /* NONE */
		case 1: PUT(raw, 0x81, 0x01); break; /* malloc, NESTED: 1 | 8 << 4 */
		case 2: PUT(raw, 0x8f, 0x01); break; /* free, NESTED: 15 | 8 << 4 */
		case 3: PUT(raw, 10); break;         /* reserved kind 10: an allocation entry */
		default: PUT(raw, 79); break;        /* free, TEMPORARY: 15 | 4 << 4 */
		}
	for (unsigned i = 0; i < M; i++)
		PUT(raw, i ? 2 : 0); /* seq +1 */
	PUT(raw, 0x9a, 0x01); /* tid 77 */
	for (unsigned i = 1; i < M; i++)
		PUT(raw, 0);
	for (unsigned i = 0; i < M; i++)
		PUT(raw, 0); /* time */
	for (unsigned i = 0; i < M; i++)
		if (i % 5 == 1 || i % 5 == 3)
			PUT(raw, (uint8_t)i); /* size */
	for (unsigned i = 0; i < M; i++)
		if (i % 5 == 1 || i % 5 == 3)
			PUT(raw, (uint8_t)(i + 1)); /* stack_id */
	for (unsigned i = 0; i < M; i++)
		if (i % 5 == 1 || i % 5 == 3)
			PUT(raw, 0); /* alloc_ref: new blocks */
	for (unsigned i = 0; i < M; i++)
		if (i % 5 == 2 || i % 5 == 4)
			PUT(raw, 0); /* free_ref: frees of no recorded block */
	end_record(raw, at);
	put_end_1_4(raw, 0);
}

void test_allocs_ids_mixed_ops(void)
{
	const uint64_t NEW = 1ull << 63;
	struct bytes raw = { 0 }, z;
	put_mixed_ops(&raw, 0);
	struct trace_reader *r = open_raw(&raw, &z, "t");
	struct trace_record rec;
	CHECK(r && trace_reader_next(r, &rec) == 1 && rec.type == TRACE_ALLOCS && rec.u.allocs.count == 45);
	if (r && rec.type == TRACE_ALLOCS && rec.u.allocs.count == 45) {
		const struct trace_heap_event *e = rec.u.allocs.events;
		uint64_t ordinal = 0;
		for (unsigned i = 0; i < 45; i++) {
			static const uint32_t kind[5] = { TRACE_HEAP_NONE, TRACE_HEAP_MALLOC, TRACE_HEAP_FREE, 10, TRACE_HEAP_FREE };
			static const uint32_t flags[5] = { 0, TRACE_HEAP_NESTED, TRACE_HEAP_NESTED, 0, TRACE_HEAP_TEMPORARY };
			int alloc = i % 5 == 1 || i % 5 == 3;
			CHECKF(e[i].kind == kind[i % 5] && e[i].flags == flags[i % 5] && e[i].seq == 100 + i && e[i].tid == 77 &&
				       e[i].size == (alloc ? i : 0) && e[i].stack_id == (alloc ? i + 1 : 0) &&
				       e[i].address == (alloc ? (NEW | ordinal) : 0),
			       "entry %u: kind %u flags %u size %llu stack %u address %llx", i, e[i].kind, e[i].flags,
			       (unsigned long long)e[i].size, e[i].stack_id, (unsigned long long)e[i].address);
			ordinal += alloc;
		}
	}
	{ int got = r ? trace_reader_next(r, &rec) : -1; CHECKF(got == 1 && rec.type == TRACE_END, "%d", got); }
	trace_reader_close(r);
	free(z.p);
	free(raw.p);
	memset(&raw, 0, sizeof raw);
	put_mixed_ops(&raw, 1);
	expect_corrupt(&raw, "longer than 64 bits");
	free(raw.p);
}
