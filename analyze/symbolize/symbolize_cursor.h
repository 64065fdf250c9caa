/*
 * symbolize_cursor.h - a bounds-checked reader of little-endian DWARF
 * encodings (fixed-size values, ULEB128, SLEB128) over a section of an
 * untrusted file: a read past the end sets bad and answers 0, and every
 * later read does the same, so a caller checks bad once after a record.
 * Shared by the call frame reader (symbolize_fde.c) and the range lists
 * (symbolize_ranges.c).
 */
#ifndef IPSCOPE_SYMBOLIZE_CURSOR_H
#define IPSCOPE_SYMBOLIZE_CURSOR_H

#include <stddef.h>
#include <stdint.h>

struct sym_cursor {
	const uint8_t *p, *end;
	int bad; /* a read ran past end (or a value could not be read) */
};

/* The n-byte (at most 8) little-endian value at c. */
static inline uint64_t cursor_fixed(struct sym_cursor *c, unsigned n)
{
	if (c->bad || n > 8 || (size_t)(c->end - c->p) < n) {
		c->bad = 1;
		return 0;
	}
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)c->p[i] << (8 * i);
	c->p += n;
	return v;
}

/* An unsigned LEB128 (bits past 64 dropped). */
static inline uint64_t cursor_uleb(struct sym_cursor *c)
{
	uint64_t v = 0;
	for (unsigned shift = 0;; shift += 7) {
		if (c->bad || c->p >= c->end) {
			c->bad = 1;
			return 0;
		}
		uint8_t b = *c->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
}

/* A DWARF initial length: 4 bytes, or 0xffffffff and 8 (64-bit DWARF); *offset_size: 4 or 8. */
static inline uint64_t cursor_initial_length(struct sym_cursor *c, unsigned *offset_size)
{
	uint64_t length = cursor_fixed(c, 4);
	*offset_size = 4;
	if (length == 0xffffffff) {
		length = cursor_fixed(c, 8);
		*offset_size = 8;
	}
	return length;
}

/* A signed LEB128. */
static inline int64_t cursor_sleb(struct sym_cursor *c)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;
	do {
		if (c->bad || c->p >= c->end) {
			c->bad = 1;
			return 0;
		}
		b = *c->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

#endif
