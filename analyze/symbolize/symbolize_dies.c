/*
 * symbolize_dies.c - step through a compile unit's DIEs straight from the
 * .debug_info bytes, to find the few that hold code.
 *
 * Most DIEs of a unit are types, variables, parameters and call sites; the
 * symbolizer only wants subprograms, inlined calls and the scopes that can
 * contain them. Through libdwarf every DIE stepped over costs an allocation,
 * a free and an abbreviation lookup (a quarter of the time to load libc's
 * debug info); here stepping over one is reading its abbreviation code and
 * skipping its attributes by form. The DIEs that matter are then opened
 * with libdwarf by offset, so everything about their attributes stays as it
 * was. A unit whose abbreviations use a form not known here is left to the
 * libdwarf walk (sym_unit_open fails). Every read is bounds-checked against
 * the unit: damaged DWARF ends the walk early, it never reads outside.
 */
#include "symbolize_internal.h"

#include <stdlib.h>
#include <string.h>

#include <dwarf.h>

#define MAX_ABBREV_CODE 65536 /* gcc and clang number them 1, 2, 3 ... */

struct sym_abbrev {
	uint16_t tag;
	uint8_t children;
	uint8_t valid;
	uint8_t addresses; /* has DW_AT_low_pc or DW_AT_ranges */
	uint32_t first, count; /* into unit->specs */
};

struct sym_spec {
	uint16_t name, form;
};

static uint64_t get_uleb(const uint8_t **p, const uint8_t *end, int *bad)
{
	uint64_t v = 0;
	for (unsigned shift = 0;; shift += 7) {
		if (*p >= end) {
			*bad = 1;
			return 0;
		}
		uint8_t b = *(*p)++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
}

static uint64_t get_fixed(const uint8_t **p, const uint8_t *end, size_t n, int *bad)
{
	if ((size_t)(end - *p) < n) {
		*bad = 1;
		return 0;
	}
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) /* little-endian, as sym_unit_open checked */
		v |= (uint64_t)(*p)[i] << (8 * i);
	*p += n;
	return v;
}

/* Bytes a form takes that do not depend on its value: 0..16, or -1 for
 * variable-length forms, -2 for forms not known here. */
static int fixed_size(const struct sym_unit *u, unsigned form)
{
	switch (form) {
	case DW_FORM_flag_present:
	case DW_FORM_implicit_const:
		return 0;
	case DW_FORM_data1:
	case DW_FORM_ref1:
	case DW_FORM_flag:
	case DW_FORM_strx1:
	case DW_FORM_addrx1:
		return 1;
	case DW_FORM_data2:
	case DW_FORM_ref2:
	case DW_FORM_strx2:
	case DW_FORM_addrx2:
		return 2;
	case DW_FORM_strx3:
	case DW_FORM_addrx3:
		return 3;
	case DW_FORM_data4:
	case DW_FORM_ref4:
	case DW_FORM_ref_sup4:
	case DW_FORM_strx4:
	case DW_FORM_addrx4:
		return 4;
	case DW_FORM_data8:
	case DW_FORM_ref8:
	case DW_FORM_ref_sig8:
	case DW_FORM_ref_sup8:
		return 8;
	case DW_FORM_data16:
		return 16;
	case DW_FORM_addr:
		return u->address_size;
	case DW_FORM_ref_addr:
		return u->version <= 2 ? u->address_size : u->offset_size;
	case DW_FORM_strp:
	case DW_FORM_line_strp:
	case DW_FORM_sec_offset:
	case DW_FORM_strp_sup:
	case DW_FORM_GNU_ref_alt:
	case DW_FORM_GNU_strp_alt:
		return u->offset_size;
	case DW_FORM_string:
	case DW_FORM_block:
	case DW_FORM_block1:
	case DW_FORM_block2:
	case DW_FORM_block4:
	case DW_FORM_exprloc:
	case DW_FORM_sdata:
	case DW_FORM_udata:
	case DW_FORM_ref_udata:
	case DW_FORM_strx:
	case DW_FORM_addrx:
	case DW_FORM_loclistx:
	case DW_FORM_rnglistx:
	case DW_FORM_GNU_addr_index:
	case DW_FORM_GNU_str_index:
	case DW_FORM_indirect:
		return -1;
	default:
		return -2;
	}
}

/* Step *p over one attribute value of form; its value when it is a
 * reference or constant of fixed size or LEB128 (0 otherwise). */
static uint64_t skip_value(const struct sym_unit *u, unsigned form, const uint8_t **p,
			   const uint8_t *end, int *bad)
{
	for (int hops = 0; form == DW_FORM_indirect; hops++) {
		form = (unsigned)get_uleb(p, end, bad);
		if (*bad || hops > 4 || form == DW_FORM_implicit_const) {
			*bad = 1; /* implicit_const has its value in the abbreviation */
			return 0;
		}
	}
	int size = fixed_size(u, form);
	if (size >= 0 && size <= 8)
		return get_fixed(p, end, (size_t)size, bad);
	if (size >= 0) {
		get_fixed(p, end, 8, bad);
		return get_fixed(p, end, (size_t)size - 8, bad);
	}
	if (size == -2) {
		*bad = 1;
		return 0;
	}
	uint64_t length;
	switch (form) {
	case DW_FORM_string: {
		const uint8_t *nul = *p < end ? memchr(*p, 0, (size_t)(end - *p)) : NULL;
		if (nul == NULL)
			*bad = 1;
		else
			*p = nul + 1;
		return 0;
	}
	case DW_FORM_block1:
		length = get_fixed(p, end, 1, bad);
		break;
	case DW_FORM_block2:
		length = get_fixed(p, end, 2, bad);
		break;
	case DW_FORM_block4:
		length = get_fixed(p, end, 4, bad);
		break;
	case DW_FORM_block:
	case DW_FORM_exprloc:
		length = get_uleb(p, end, bad);
		break;
	default: /* LEB128 values: sdata's sign does not matter to skipping */
		return get_uleb(p, end, bad);
	}
	if (*bad || length > (uint64_t)(end - *p)) {
		*bad = 1;
		return 0;
	}
	*p += length;
	return 0;
}

void sym_unit_close(struct sym_unit *u)
{
	free(u->abbrevs);
	free(u->specs);
	memset(u, 0, sizeof(*u));
}

/* The abbreviation table at offset in .debug_abbrev; 0, or -1 when it is
 * damaged or uses what skip_value cannot step over. */
static int read_abbrevs(struct sym_unit *u, const uint8_t *sec, size_t size, uint64_t offset)
{
	if (sec == NULL || offset >= size)
		return -1;
	const uint8_t *p = sec + offset, *end = sec + size;
	int bad = 0;
	for (;;) {
		uint64_t code = get_uleb(&p, end, &bad);
		if (bad)
			return -1;
		if (code == 0)
			return 0;
		uint64_t tag = get_uleb(&p, end, &bad);
		uint64_t children = get_fixed(&p, end, 1, &bad);
		if (bad || code >= MAX_ABBREV_CODE || tag > UINT16_MAX)
			return -1;
		if (code >= u->nabbrevs) {
			size_t n = u->nabbrevs ? u->nabbrevs : 64;
			while (n <= code)
				n *= 2;
			if (n > u->abbrevs_cap) {
				u->abbrevs = realloc_or_abort(u->abbrevs, n * sizeof(*u->abbrevs));
				u->abbrevs_cap = n;
			}
			memset(u->abbrevs + u->nabbrevs, 0, (n - u->nabbrevs) * sizeof(*u->abbrevs));
			u->nabbrevs = n;
		}
		struct sym_abbrev *a = &u->abbrevs[code];
		if (a->valid)
			return -1; /* a code defined twice */
		*a = (struct sym_abbrev){.tag = (uint16_t)tag, .children = children != 0, .valid = 1,
					 .first = (uint32_t)u->nspecs};
		for (;;) {
			uint64_t name = get_uleb(&p, end, &bad);
			uint64_t form = get_uleb(&p, end, &bad);
			if (bad || name > UINT16_MAX || form > UINT16_MAX)
				return -1;
			if (name == 0 && form == 0)
				break;
			if (form == DW_FORM_implicit_const)
				(void)get_uleb(&p, end, &bad); /* the value: a LEB128 */
			if (bad || fixed_size(u, (unsigned)form) == -2)
				return -1;
			SYM_GROW(u->specs, u->nspecs, u->specs_cap);
			u->specs[u->nspecs++] = (struct sym_spec){(uint16_t)name, (uint16_t)form};
			if (name == DW_AT_low_pc || name == DW_AT_ranges)
				a->addresses = 1;
			a->count++;
		}
	}
}

int sym_unit_open(struct sym_unit *u, struct sym_sections *s, const struct sym_unit_header *h)
{
	/* The tables' memory is kept from unit to unit: thousands of units,
	 * each allocating afresh, cost page faults for nothing. */
	u->nabbrevs = u->nspecs = 0;
	size_t info_size, abbrev_size;
	u->info = sym_section_data(s, ".debug_info", &info_size);
	const uint8_t *abbrev = sym_section_data(s, ".debug_abbrev", &abbrev_size);
	if (u->info == NULL || s->big_endian || h->version < 2 || h->version > 5 ||
	    (h->offset_size != 4 && h->offset_size != 8) ||
	    (h->address_size != 4 && h->address_size != 8) || h->unit_offset >= h->end ||
	    h->end > info_size)
		return -1;
	u->unit_offset = h->unit_offset;
	u->end = h->end;
	u->version = h->version;
	u->offset_size = h->offset_size;
	u->address_size = h->address_size;
	if (read_abbrevs(u, abbrev, abbrev_size, h->abbrev_offset) != 0) {
		u->nabbrevs = u->nspecs = 0;
		return -1;
	}
	return 0;
}

int sym_die_read(const struct sym_unit *u, uint64_t *pos, struct sym_die *die)
{
	if (*pos < u->unit_offset || *pos >= u->end)
		return -1;
	const uint8_t *p = u->info + *pos, *end = u->info + u->end;
	int bad = 0;
	die->offset = *pos;
	die->sibling = 0;
	uint64_t code = get_uleb(&p, end, &bad);
	if (bad || code >= u->nabbrevs || (code != 0 && !u->abbrevs[code].valid))
		return -1;
	if (code == 0) {
		*pos = (uint64_t)(p - u->info);
		return 1;
	}
	const struct sym_abbrev *a = &u->abbrevs[code];
	die->tag = a->tag;
	die->has_children = a->children;
	die->addresses = a->addresses;
	for (uint32_t i = 0; i < a->count && !bad; i++) {
		const struct sym_spec *spec = &u->specs[a->first + i];
		uint64_t value = skip_value(u, spec->form, &p, end, &bad);
		if (spec->name != DW_AT_sibling)
			continue;
		switch (spec->form) { /* unit-relative, like libdwarf reads them */
		case DW_FORM_ref1:
		case DW_FORM_ref2:
		case DW_FORM_ref4:
		case DW_FORM_ref8:
		case DW_FORM_ref_udata:
			die->sibling = u->unit_offset + value;
			break;
		case DW_FORM_ref_addr:
			die->sibling = value;
			break;
		default:
			break;
		}
	}
	if (bad)
		return -1;
	*pos = (uint64_t)(p - u->info);
	die->children = *pos;
	/* A sibling that does not lead forward within the unit is ignored. */
	if (die->sibling <= die->offset || die->sibling >= u->end)
		die->sibling = 0;
	return 0;
}

int sym_die_next(const struct sym_unit *u, const struct sym_die *die, uint64_t *pos)
{
	if (!die->has_children)
		return 0; /* *pos is past the DIE already */
	if (die->sibling != 0) {
		*pos = die->sibling;
		return 0;
	}
	/* No sibling pointer: read through the subtree to its end. */
	uint64_t level = 1;
	while (level > 0) {
		struct sym_die child;
		int res = sym_die_read(u, pos, &child);
		if (res < 0)
			return -1;
		if (res == 1)
			level--;
		else if (child.has_children && child.sibling != 0)
			*pos = child.sibling;
		else if (child.has_children)
			level++;
	}
	return 0;
}
