/*
 * symbolize_ranges.c - the code ranges of a DIE: DW_AT_low_pc with
 * DW_AT_high_pc (an address, or a length in the constant forms), or
 * DW_AT_ranges: a DWARF 5 range list (.debug_rnglists, by offset or by
 * DW_FORM_rnglistx index, entries that may index .debug_addr), or a DWARF
 * 2-4 .debug_ranges list of pairs relative to the unit's base address.
 *
 * Split units keep their lists in their own .debug_rnglists.dwo (DWARF 5)
 * or, in GNU DWARF 4, in the skeleton file's .debug_ranges at the offset
 * plus the skeleton's DW_AT_GNU_ranges_base. Every read is bounds-checked;
 * a damaged list ends where the damage starts, and reading stops for good
 * once the load's budget of entries (out->entries_left) is spent.
 */
#include "symbolize_internal.h"
#include "symbolize_cursor.h"

#include <string.h>

#include <dwarf.h>

static void add(struct sym_range_list *out, uint64_t lo, uint64_t hi)
{
	if (lo >= hi)
		return;
	ALLOC_GROW(out->ranges, out->n + 1, out->cap);
	out->ranges[out->n][0] = lo;
	out->ranges[out->n][1] = hi;
	out->n++;
}

/* Entry index of .debug_addr, as addrx would read it; 0 with *ok = 0 outside. */
static uint64_t indexed_address(const struct sym_unit *u, uint64_t index, int *ok)
{
	struct sym_value v = {.form = DW_FORM_addrx, .u = index};
	uint64_t addr = 0;
	*ok = sym_value_address(u, &v, &addr);
	return addr;
}

/* A DWARF 5 range list at offset of the unit's rnglists. */
static void read_rnglist(const struct sym_unit *u, uint64_t offset, struct sym_range_list *out)
{
	if (u->rnglists.data == NULL || offset >= u->rnglists.size)
		return;
	struct sym_cursor c = {u->rnglists.data + offset, u->rnglists.data + u->rnglists.size, 0};
	uint64_t base = u->base_address;
	int ok = 1;
	while (!c.bad && ok && out->entries_left > 0) {
		out->entries_left--;
		unsigned kind = (unsigned)cursor_fixed(&c, 1);
		uint64_t a, b;
		switch (kind) {
		case DW_RLE_end_of_list:
			return;
		case DW_RLE_base_addressx:
			base = indexed_address(u, cursor_uleb(&c), &ok);
			break;
		case DW_RLE_startx_endx:
			a = indexed_address(u, cursor_uleb(&c), &ok);
			b = ok ? indexed_address(u, cursor_uleb(&c), &ok) : 0;
			if (ok && !c.bad)
				add(out, a, b);
			break;
		case DW_RLE_startx_length:
			a = indexed_address(u, cursor_uleb(&c), &ok);
			b = cursor_uleb(&c);
			if (ok && !c.bad)
				add(out, a, a + b);
			break;
		case DW_RLE_offset_pair:
			a = cursor_uleb(&c);
			b = cursor_uleb(&c);
			if (!c.bad)
				add(out, base + a, base + b);
			break;
		case DW_RLE_base_address:
			base = cursor_fixed(&c, u->address_size);
			break;
		case DW_RLE_start_end:
			a = cursor_fixed(&c, u->address_size);
			b = cursor_fixed(&c, u->address_size);
			if (!c.bad)
				add(out, a, b);
			break;
		case DW_RLE_start_length:
			a = cursor_fixed(&c, u->address_size);
			b = cursor_uleb(&c);
			if (!c.bad)
				add(out, a, a + b);
			break;
		default:
			return; /* unknown entry kind: its size is unknown too */
		}
	}
}

/* A DWARF 2-4 .debug_ranges list at offset of sec. */
static void read_ranges(const struct sym_unit *u, struct sym_slice sec, uint64_t offset,
			struct sym_range_list *out)
{
	if (sec.data == NULL || offset >= sec.size)
		return;
	struct sym_cursor c = {sec.data + offset, sec.data + sec.size, 0};
	uint64_t base = u->base_address;
	uint64_t all_ones = u->address_size == 4 ? 0xffffffffull : ~0ull;
	for (; out->entries_left > 0; out->entries_left--) {
		uint64_t a = cursor_fixed(&c, u->address_size), b = cursor_fixed(&c, u->address_size);
		if (c.bad || (a == 0 && b == 0))
			return;
		if (a == all_ones)
			base = b;
		else
			add(out, base + a, base + b);
	}
}

/* DW_AT_ranges of a DIE in u. */
static void die_range_list(const struct sym_unit *u, const struct sym_value *ranges,
			   struct sym_range_list *out)
{
	if (u->version >= 5 || ranges->form == DW_FORM_rnglistx) {
		uint64_t offset = ranges->u;
		if (ranges->form == DW_FORM_rnglistx) {
			struct sym_slice r = u->rnglists;
			uint64_t at = u->rnglists_base + ranges->u * u->offset_size;
			if (ranges->u > UINT64_MAX / 16 || r.data == NULL || at > r.size ||
			    r.size - at < u->offset_size)
				return;
			uint64_t entry = 0;
			for (unsigned i = 0; i < u->offset_size; i++)
				entry |= (uint64_t)r.data[at + i] << (8 * i);
			offset = u->rnglists_base + entry;
		}
		read_rnglist(u, offset, out);
	} else if (u->d->dwo) {
		if (u->addr_file != NULL)
			read_ranges(u, u->addr_file->ranges, ranges->u + u->ranges_base, out);
	} else {
		read_ranges(u, u->d->ranges, ranges->u, out);
	}
}

size_t sym_die_ranges(const struct sym_unit *u, const struct sym_value *values,
		      struct sym_range_list *out)
{
	size_t before = out->n;
	const struct sym_value *low = &values[SYM_AT_LOW_PC], *high = &values[SYM_AT_HIGH_PC];
	uint64_t lo, hi;
	/* A unit often has both a low_pc (the base of its lists) and ranges. */
	if (low->form != 0 && high->form != 0 && sym_value_address(u, low, &lo)) {
		if (sym_value_address(u, high, &hi))
			add(out, lo, hi);
		else if (sym_value_unsigned(high, &hi))
			add(out, lo, lo + hi);
		return out->n - before;
	}
	if (values[SYM_AT_RANGES].form != 0)
		die_range_list(u, &values[SYM_AT_RANGES], out);
	return out->n - before;
}
