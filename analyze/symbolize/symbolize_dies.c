/*
 * symbolize_dies.c - a unit's DIEs and the attribute values the symbolizer
 * needs, read straight from the .debug_info bytes.
 *
 * Most DIEs of a unit are types, variables, parameters and call sites; the
 * symbolizer only wants subprograms, inlined calls and the scopes that can
 * contain them. Stepping over a DIE is reading its abbreviation code and
 * skipping its attributes by form, with no allocation; the few DIEs that
 * matter then have their values read (sym_die_values) and resolved here:
 * strings wherever their form says they are (.debug_str, .debug_line_str,
 * the string offsets of a DWARF 5 or split unit, the dwz supplementary
 * file), addresses through .debug_addr, references into the same unit, the
 * same file or the supplementary file. Every read is bounds-checked against
 * its section: damaged DWARF ends a walk early, it never reads outside.
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
	uint32_t first, count; /* into specs */
};

struct sym_spec {
	uint16_t name, form;
	int64_t implicit; /* DW_FORM_implicit_const: the value */
};

struct sym_abbrevs {
	struct sym_abbrev *abbrevs; /* by code */
	size_t nabbrevs;
	struct sym_spec *specs;
	size_t nspecs, specs_cap;
	int foreign; /* a form that may refer into another unit (ref_addr, indirect) */
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
		return (int)u->address_size;
	case DW_FORM_ref_addr:
		return (int)(u->version <= 2 ? u->address_size : u->offset_size);
	case DW_FORM_strp:
	case DW_FORM_line_strp:
	case DW_FORM_sec_offset:
	case DW_FORM_strp_sup:
	case DW_FORM_GNU_ref_alt:
	case DW_FORM_GNU_strp_alt:
		return (int)u->offset_size;
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

/* Step *p over one attribute value of *form (an indirect form is replaced
 * by the form it names); its value when it is a number of fixed size or
 * LEB128, the inline string in *string, 0 otherwise. */
static uint64_t read_value(const struct sym_unit *u, unsigned *form, const uint8_t **p,
			   const uint8_t *end, const char **string, int *bad)
{
	for (int hops = 0; *form == DW_FORM_indirect; hops++) {
		*form = (unsigned)get_uleb(p, end, bad);
		if (*bad || hops > 4 || *form == DW_FORM_implicit_const) {
			*bad = 1; /* implicit_const has its value in the abbreviation */
			return 0;
		}
	}
	int size = fixed_size(u, *form);
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
	switch (*form) {
	case DW_FORM_string: {
		const uint8_t *nul = *p < end ? memchr(*p, 0, (size_t)(end - *p)) : NULL;
		if (nul == NULL) {
			*bad = 1;
		} else {
			if (string != NULL)
				*string = (const char *)*p;
			*p = nul + 1;
		}
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
	default: /* LEB128 values: sdata's sign does not matter to stepping */
		return get_uleb(p, end, bad);
	}
	if (*bad || length > (uint64_t)(end - *p)) {
		*bad = 1;
		return 0;
	}
	*p += length;
	return 0;
}

void sym_abbrevs_free(struct sym_abbrevs *a)
{
	if (a == NULL)
		return;
	free(a->abbrevs);
	free(a->specs);
	free(a);
}

/* Room for abbreviation code in a. */
static void grow_abbrevs(struct sym_abbrevs *a, uint64_t code)
{
	size_t n = a->nabbrevs ? a->nabbrevs : 64;
	while (n <= code)
		n *= 2;
	a->abbrevs = realloc_or_abort(a->abbrevs, n * sizeof(*a->abbrevs));
	memset(a->abbrevs + a->nabbrevs, 0, (n - a->nabbrevs) * sizeof(*a->abbrevs));
	a->nabbrevs = n;
}

struct sym_abbrevs *sym_abbrevs_parse(struct sym_slice abbrev, uint64_t offset,
				      const struct sym_unit *u, uint64_t *budget)
{
	if (abbrev.data == NULL || offset >= abbrev.size)
		return NULL;
	struct sym_abbrevs *a = calloc_or_abort(1, sizeof(*a));
	const uint8_t *start = abbrev.data + offset, *p = start, *end = abbrev.data + abbrev.size;
	if ((uint64_t)(end - start) > *budget)
		end = start + *budget;
	int bad = 0;
	for (;;) {
		uint64_t code = get_uleb(&p, end, &bad);
		if (bad)
			goto damaged;
		if (code == 0) {
			*budget -= (uint64_t)(p - start);
			return a;
		}
		uint64_t tag = get_uleb(&p, end, &bad);
		uint64_t children = get_fixed(&p, end, 1, &bad);
		/* Codes are indexes of a table sized by the largest: compilers
		 * number them 1, 2, 3..., each taking 4 bytes at least, so a code
		 * far beyond the bytes read would only make a table of a few
		 * bytes cost a megabyte. */
		if (bad || code >= MAX_ABBREV_CODE || code > 256 + 4 * (uint64_t)(p - start) ||
		    tag > UINT16_MAX)
			goto damaged;
		if (code >= a->nabbrevs)
			grow_abbrevs(a, code);
		struct sym_abbrev *ab = &a->abbrevs[code];
		if (ab->valid)
			goto damaged; /* a code defined twice */
		*ab = (struct sym_abbrev){.tag = (uint16_t)tag, .children = children != 0, .valid = 1,
					  .first = (uint32_t)a->nspecs};
		for (;;) {
			uint64_t name = get_uleb(&p, end, &bad);
			uint64_t form = get_uleb(&p, end, &bad);
			if (bad || name > UINT16_MAX || form > UINT16_MAX)
				goto damaged;
			if (name == 0 && form == 0)
				break;
			int64_t implicit = 0;
			if (form == DW_FORM_implicit_const) { /* the value: a signed LEB128 */
				uint64_t raw = 0;
				unsigned shift = 0;
				uint8_t b;
				do {
					if (p >= end)
						goto damaged;
					b = *p++;
					if (shift < 64)
						raw |= (uint64_t)(b & 0x7f) << shift;
					shift += 7;
				} while (b & 0x80);
				if (shift < 64 && (b & 0x40))
					raw |= ~(uint64_t)0 << shift;
				implicit = (int64_t)raw;
			}
			if (fixed_size(u, (unsigned)form) == -2)
				goto damaged;
			ALLOC_GROW(a->specs, a->nspecs + 1, a->specs_cap);
			a->specs[a->nspecs++] = (struct sym_spec){(uint16_t)name, (uint16_t)form, implicit};
			a->foreign |= form == DW_FORM_ref_addr || form == DW_FORM_indirect;
			if (name == DW_AT_low_pc || name == DW_AT_ranges)
				ab->addresses = 1;
			ab->count++;
		}
	}
damaged:
	*budget -= (uint64_t)(p - start);
	sym_abbrevs_free(a);
	return NULL;
}

int sym_abbrevs_foreign(const struct sym_abbrevs *a)
{
	return a->foreign;
}

int sym_die_read(const struct sym_unit *u, uint64_t *pos, struct sym_die *die)
{
	const struct sym_abbrevs *a = u->abbrevs;
	if (a == NULL || *pos < u->offset || *pos >= u->end)
		return -1;
	const uint8_t *info = u->d->info.data;
	const uint8_t *p = info + *pos, *end = info + u->end;
	int bad = 0;
	die->offset = *pos;
	die->sibling = 0;
	uint64_t code = get_uleb(&p, end, &bad);
	if (bad || code >= a->nabbrevs || (code != 0 && !a->abbrevs[code].valid))
		return -1;
	if (code == 0) {
		*pos = (uint64_t)(p - info);
		return 1;
	}
	const struct sym_abbrev *ab = &a->abbrevs[code];
	die->tag = ab->tag;
	die->has_children = ab->children;
	die->addresses = ab->addresses;
	die->abbrev = (uint32_t)code;
	for (uint32_t i = 0; i < ab->count && !bad; i++) {
		const struct sym_spec *spec = &a->specs[ab->first + i];
		unsigned form = spec->form;
		uint64_t value = read_value(u, &form, &p, end, NULL, &bad);
		if (spec->name != DW_AT_sibling)
			continue;
		switch (form) { /* unit-relative, except ref_addr */
		case DW_FORM_ref1:
		case DW_FORM_ref2:
		case DW_FORM_ref4:
		case DW_FORM_ref8:
		case DW_FORM_ref_udata:
			die->sibling = u->offset + value;
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
	*pos = (uint64_t)(p - info);
	die->children = *pos;
	/* A sibling that does not lead forward within the unit is ignored. */
	if (die->sibling <= die->offset || die->sibling >= u->end)
		die->sibling = 0;
	return 0;
}

/* The slot an attribute is kept in, SYM_AT_COUNT for those not read. */
static enum sym_attr_slot slot_of(unsigned name)
{
	switch (name) {
	case DW_AT_name: return SYM_AT_NAME;
	case DW_AT_linkage_name:
	case DW_AT_MIPS_linkage_name: return SYM_AT_LINKAGE_NAME;
	case DW_AT_abstract_origin: return SYM_AT_ABSTRACT_ORIGIN;
	case DW_AT_specification: return SYM_AT_SPECIFICATION;
	case DW_AT_decl_file: return SYM_AT_DECL_FILE;
	case DW_AT_decl_line: return SYM_AT_DECL_LINE;
	case DW_AT_call_file: return SYM_AT_CALL_FILE;
	case DW_AT_call_line: return SYM_AT_CALL_LINE;
	case DW_AT_low_pc: return SYM_AT_LOW_PC;
	case DW_AT_high_pc: return SYM_AT_HIGH_PC;
	case DW_AT_ranges: return SYM_AT_RANGES;
	case DW_AT_stmt_list: return SYM_AT_STMT_LIST;
	case DW_AT_comp_dir: return SYM_AT_COMP_DIR;
	case DW_AT_dwo_name:
	case DW_AT_GNU_dwo_name: return SYM_AT_DWO_NAME;
	case DW_AT_GNU_dwo_id: return SYM_AT_DWO_ID;
	case DW_AT_str_offsets_base: return SYM_AT_STR_OFFSETS_BASE;
	case DW_AT_addr_base:
	case DW_AT_GNU_addr_base: return SYM_AT_ADDR_BASE;
	case DW_AT_rnglists_base: return SYM_AT_RNGLISTS_BASE;
	case DW_AT_GNU_ranges_base: return SYM_AT_GNU_RANGES_BASE;
	default: return SYM_AT_COUNT;
	}
}

int sym_die_values(const struct sym_unit *u, const struct sym_die *die,
		   struct sym_value values[SYM_AT_COUNT])
{
	memset(values, 0, SYM_AT_COUNT * sizeof(*values));
	const struct sym_abbrevs *a = u->abbrevs;
	if (a == NULL || die->abbrev >= a->nabbrevs || !a->abbrevs[die->abbrev].valid ||
	    die->offset >= u->end)
		return -1;
	const uint8_t *info = u->d->info.data;
	const uint8_t *p = info + die->offset, *end = info + u->end;
	int bad = 0;
	get_uleb(&p, end, &bad); /* the code, known already */
	const struct sym_abbrev *ab = &a->abbrevs[die->abbrev];
	for (uint32_t i = 0; i < ab->count && !bad; i++) {
		const struct sym_spec *spec = &a->specs[ab->first + i];
		unsigned form = spec->form;
		const char *string = NULL;
		uint64_t value = read_value(u, &form, &p, end, &string, &bad);
		enum sym_attr_slot slot = slot_of(spec->name);
		if (slot == SYM_AT_COUNT || values[slot].form != 0)
			continue; /* the first of linkage_name and MIPS_linkage_name wins */
		values[slot].form = (uint16_t)form;
		values[slot].u = form == DW_FORM_implicit_const ? (uint64_t)spec->implicit : value;
		values[slot].inline_string = string;
	}
	return bad ? -1 : 0;
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

/* ---- resolving values ---- */

/* The NUL-terminated string at offset in a string section, NULL if outside. */
static const char *string_at(struct sym_slice sec, uint64_t offset)
{
	if (sec.data == NULL || offset >= sec.size ||
	    memchr(sec.data + offset, 0, (size_t)(sec.size - offset)) == NULL)
		return NULL;
	return (const char *)sec.data + offset;
}

/* Little-endian number of n bytes at offset of sec; 0 with *ok = 0 outside. */
static uint64_t number_at(struct sym_slice sec, uint64_t offset, unsigned n, int *ok)
{
	if (sec.data == NULL || n > 8 || offset > sec.size || sec.size - offset < n) {
		*ok = 0;
		return 0;
	}
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)sec.data[offset + i] << (8 * i);
	*ok = 1;
	return v;
}

int sym_form_is_sup(unsigned form)
{
	return form == DW_FORM_GNU_strp_alt || form == DW_FORM_strp_sup ||
	       form == DW_FORM_GNU_ref_alt || form == DW_FORM_ref_sup4 ||
	       form == DW_FORM_ref_sup8;
}

const char *sym_value_string(const struct sym_unit *u, const struct sym_value *v)
{
	int ok;
	switch (v->form) {
	case DW_FORM_string:
		return v->inline_string;
	case DW_FORM_strp:
		return string_at(u->d->str, v->u);
	case DW_FORM_line_strp:
		return string_at(u->d->line_str, v->u);
	case DW_FORM_GNU_strp_alt:
	case DW_FORM_strp_sup:
		return u->d->sup != NULL ? string_at(u->d->sup->str, v->u) : NULL;
	case DW_FORM_strx:
	case DW_FORM_strx1:
	case DW_FORM_strx2:
	case DW_FORM_strx3:
	case DW_FORM_strx4:
	case DW_FORM_GNU_str_index: {
		if (v->u > UINT64_MAX / 8)
			return NULL;
		uint64_t offset = number_at(u->str_offsets, v->u * u->offset_size, u->offset_size, &ok);
		return ok ? string_at(u->d->str, offset) : NULL;
	}
	default:
		return NULL;
	}
}

int sym_value_unsigned(const struct sym_value *v, uint64_t *out)
{
	switch (v->form) {
	case DW_FORM_data1:
	case DW_FORM_data2:
	case DW_FORM_data4:
	case DW_FORM_data8:
	case DW_FORM_udata:
		*out = v->u;
		return 1;
	case DW_FORM_sdata: /* only as far as a uleb read it: small positive values */
	case DW_FORM_implicit_const:
		if ((int64_t)v->u < 0)
			return 0;
		*out = v->u;
		return 1;
	default:
		return 0;
	}
}

int sym_value_address(const struct sym_unit *u, const struct sym_value *v, uint64_t *out)
{
	switch (v->form) {
	case DW_FORM_addr:
		*out = v->u;
		return 1;
	case DW_FORM_addrx:
	case DW_FORM_addrx1:
	case DW_FORM_addrx2:
	case DW_FORM_addrx3:
	case DW_FORM_addrx4:
	case DW_FORM_GNU_addr_index: {
		int ok = 0;
		if (u->addr_file == NULL || v->u > UINT64_MAX / 16)
			return 0;
		*out = number_at(u->addr_file->addr, u->addr_base + v->u * u->address_size,
				 u->address_size, &ok);
		return ok;
	}
	default:
		return 0;
	}
}

int sym_value_reference(const struct sym_unit *u, const struct sym_value *v,
			struct sym_dwarf **file, uint64_t *offset)
{
	switch (v->form) {
	case DW_FORM_ref1:
	case DW_FORM_ref2:
	case DW_FORM_ref4:
	case DW_FORM_ref8:
	case DW_FORM_ref_udata:
		*file = u->d;
		*offset = u->offset + v->u;
		return *offset >= u->offset;
	case DW_FORM_ref_addr:
		*file = u->d;
		*offset = v->u;
		return 1;
	case DW_FORM_GNU_ref_alt:
	case DW_FORM_ref_sup4:
	case DW_FORM_ref_sup8:
		*file = u->d->sup;
		*offset = v->u;
		return *file != NULL;
	default:
		return 0;
	}
}
