/*
 * symbolize_dfile.c - one file of DWARF as the readers see it: its sections,
 * the table of its units (every unit header, listed once, so a reference
 * into any unit finds it by binary search), its abbreviation tables (parsed
 * once per offset: dwz's partial units and LTO share them across units),
 * and for a .dwp package its unit index (DWARF 5 .debug_cu_index or the GNU
 * version 2 one), which says where each split unit's contributions to the
 * shared sections are.
 *
 * A debug file, its dwz supplementary file, a split .dwo and a .dwp are all
 * one of these; the supplementary file is linked to the files that point
 * into it (sym_dwarf_set_sup), and a split unit takes what it cannot know
 * itself (the address table, the range base, the compile directory) from
 * its skeleton (sym_unit_inherit).
 */
#include "symbolize_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>

/* A .dwp's unit index: one row per split unit, by signature. */
struct dwp_row {
	uint64_t signature;
	uint64_t offset[9], size[9]; /* by DW_SECT_* id; 0 when absent */
};

struct sym_dwp {
	unsigned version; /* 2 (GNU, DWARF 4) or 5 */
	struct dwp_row *rows; /* sorted by signature */
	size_t nrows;
	size_t *unit_of_row; /* the unit each row's info contribution holds, SIZE_MAX none */
};

static uint64_t read_le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* Read one unit header at offset of .debug_info into u: 0, or -1 when it
 * is damaged (the listing stops there). */
static int read_unit_header(struct sym_dwarf *d, uint64_t offset, struct sym_unit *u)
{
	const uint8_t *p = d->info.data + offset;
	uint64_t left = d->info.size - offset, length_size = 4;
	if (left < 11)
		return -1;
	uint64_t length = read_le(p, 4);
	if (length == 0xffffffffu) {
		if (left < 23)
			return -1;
		length = read_le(p + 4, 8);
		length_size = 12;
	} else if (length >= 0xfffffff0u) {
		return -1;
	}
	if (length > left - length_size || length < 7)
		return -1;
	memset(u, 0, sizeof(*u));
	u->d = d;
	u->row = SYM_NONE;
	u->offset = offset;
	u->end = offset + length_size + length;
	u->offset_size = length_size == 4 ? 4 : 8;
	const uint8_t *h = p + length_size, *end = p + length_size + length;
	u->version = (unsigned)read_le(h, 2);
	h += 2;
	if (u->version < 2 || u->version > 5)
		return -1;
	if (u->version >= 5) {
		u->unit_type = h[0];
		u->address_size = h[1];
		h += 2;
		if ((uint64_t)(end - h) < u->offset_size)
			return -1;
		u->abbrev_offset = read_le(h, u->offset_size);
		h += u->offset_size;
		size_t extra = 0;
		if (u->unit_type == DW_UT_skeleton || u->unit_type == DW_UT_split_compile)
			extra = 8;
		else if (u->unit_type == DW_UT_type || u->unit_type == DW_UT_split_type)
			extra = 8 + u->offset_size;
		if ((size_t)(end - h) < extra)
			return -1;
		if (extra == 8)
			u->dwo_id = read_le(h, 8);
		h += extra;
	} else {
		u->unit_type = DW_UT_compile;
		if ((uint64_t)(end - h) < u->offset_size + 1)
			return -1;
		u->abbrev_offset = read_le(h, u->offset_size);
		h += u->offset_size;
		u->address_size = *h++;
	}
	u->first_die = (uint64_t)(h - d->info.data);
	return 0;
}

static void list_units(struct sym_dwarf *d)
{
	for (uint64_t offset = 0; d->info.data != NULL && offset < d->info.size;) {
		struct sym_unit u;
		if (read_unit_header(d, offset, &u) != 0)
			break;
		ALLOC_GROW(d->units, d->nunits + 1, d->units_cap);
		d->units[d->nunits++] = u;
		offset = u.end;
	}
}

static int compare_rows(const void *a, const void *b)
{
	uint64_t x = ((const struct dwp_row *)a)->signature, y = ((const struct dwp_row *)b)->signature;
	return (x > y) - (x < y);
}

/* Parse a .dwp's .debug_cu_index; NULL when absent or damaged. */
static struct sym_dwp *read_unit_index(struct sym_slice idx)
{
	if (idx.data == NULL || idx.size < 16)
		return NULL;
	unsigned version = (unsigned)read_le(idx.data, 2);
	uint64_t ncols = read_le(idx.data + 4, 4), nunits = read_le(idx.data + 8, 4);
	uint64_t nslots = read_le(idx.data + 12, 4);
	if ((version != 2 && version != 5) || ncols == 0 || ncols > 16 || nunits > nslots ||
	    nslots > (idx.size - 16) / 12)
		return NULL;
	uint64_t need = 16 + nslots * 12 + ncols * 4 + 2 * nunits * ncols * 4;
	if (need > idx.size)
		return NULL;
	const uint8_t *sigs = idx.data + 16, *rows_of = sigs + nslots * 8;
	const uint8_t *ids = rows_of + nslots * 4, *offsets = ids + ncols * 4;
	const uint8_t *sizes = offsets + nunits * ncols * 4;
	struct sym_dwp *dwp = calloc_or_abort(1, sizeof(*dwp));
	dwp->version = version;
	dwp->rows = calloc_or_abort(nunits ? nunits : 1, sizeof(*dwp->rows));
	for (uint64_t slot = 0; slot < nslots; slot++) {
		uint64_t row = read_le(rows_of + slot * 4, 4);
		if (row == 0 || row > nunits)
			continue; /* an empty slot */
		struct dwp_row *r = &dwp->rows[dwp->nrows++];
		if (dwp->nrows > nunits)
			break;
		r->signature = read_le(sigs + slot * 8, 8);
		for (uint64_t c = 0; c < ncols; c++) {
			uint64_t id = read_le(ids + c * 4, 4);
			if (id >= 9)
				continue;
			r->offset[id] = read_le(offsets + ((row - 1) * ncols + c) * 4, 4);
			r->size[id] = read_le(sizes + ((row - 1) * ncols + c) * 4, 4);
		}
	}
	if (dwp->nrows > nunits)
		dwp->nrows = nunits;
	qsort(dwp->rows, dwp->nrows, sizeof(*dwp->rows), compare_rows);
	return dwp;
}

static int compare_info_offsets(const void *a, const void *b, void *rows)
{
	const struct dwp_row *r = rows;
	uint64_t x = r[*(const size_t *)a].offset[DW_SECT_INFO];
	uint64_t y = r[*(const size_t *)b].offset[DW_SECT_INFO];
	return (x > y) - (x < y);
}

/*
 * Give each unit of a .dwp its row: the one whose info contribution holds
 * it (the last starting at or before it, in a file whose contributions
 * overlap). By binary search over the rows in info order: a package holds
 * tens of thousands of units, and units x rows was minutes.
 */
static void assign_rows(struct sym_dwarf *d)
{
	struct sym_dwp *dwp = d->dwp;
	size_t *order = calloc_or_abort(dwp->nrows ? dwp->nrows : 1, sizeof(*order));
	size_t n = 0;
	for (size_t r = 0; r < dwp->nrows; r++)
		if (dwp->rows[r].size[DW_SECT_INFO] != 0)
			order[n++] = r;
	qsort_r(order, n, sizeof(*order), compare_info_offsets, dwp->rows);
	dwp->unit_of_row = calloc_or_abort(dwp->nrows ? dwp->nrows : 1, sizeof(*dwp->unit_of_row));
	for (size_t r = 0; r < dwp->nrows; r++)
		dwp->unit_of_row[r] = SIZE_MAX;
	for (size_t i = 0; i < d->nunits; i++) {
		struct sym_unit *u = &d->units[i];
		size_t lo = 0, hi = n; /* rows starting at or before u: order[0 .. lo) */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (dwp->rows[order[mid]].offset[DW_SECT_INFO] <= u->offset)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == 0)
			continue;
		size_t r = order[lo - 1];
		const struct dwp_row *row = &dwp->rows[r];
		if (u->offset - row->offset[DW_SECT_INFO] >= row->size[DW_SECT_INFO])
			continue;
		u->row = (uint32_t)r;
		u->abbrev_offset += row->offset[DW_SECT_ABBREV];
		if (dwp->unit_of_row[r] == SIZE_MAX)
			dwp->unit_of_row[r] = i;
	}
	free(order);
}

struct sym_dwarf *sym_dwarf_open(const char *path, int dwo)
{
	struct sym_dwarf *d = calloc_or_abort(1, sizeof(*d));
	d->path = strdup(path);
	if (d->path == NULL)
		abort_out_of_memory();
	d->dwo = dwo;
	if (sym_sections_open(&d->sections, path) != 0) {
		sym_dwarf_close(d);
		return NULL;
	}
	struct sym_sections *s = &d->sections;
	const char *x = dwo ? ".dwo" : "";
	char name[64];
#define SECTION(field, base)                                         \
	do {                                                         \
		snprintf(name, sizeof(name), "%s%s", base, x);       \
		d->field = sym_section_slice(s, name);               \
	} while (0)
	SECTION(info, ".debug_info");
	SECTION(abbrev, ".debug_abbrev");
	SECTION(str, ".debug_str");
	SECTION(str_offsets, ".debug_str_offsets");
	SECTION(rnglists, ".debug_rnglists");
	SECTION(line, ".debug_line");
#undef SECTION
	/* A split file has no addresses of its own: the skeleton's file does. */
	if (!dwo) {
		d->line_str = sym_section_slice(s, ".debug_line_str");
		d->addr = sym_section_slice(s, ".debug_addr");
		d->ranges = sym_section_slice(s, ".debug_ranges");
	}
	/* Units may each start their table at another offset of one long
	 * run of abbreviations: each parse reads to its end (units x table).
	 * Real files read each byte once (dwz and LTO share tables by offset). */
	d->abbrev_bytes_left = 8 * d->abbrev.size + ((uint64_t)1 << 16);
	hashmap_init(&d->abbrev_index, 64);
	hashmap_init(&d->functions, 1024);
	list_units(d);
	if (dwo && (d->dwp = read_unit_index(sym_section_slice(s, ".debug_cu_index"))) != NULL)
		assign_rows(d);
	return d;
}

void sym_dwarf_close(struct sym_dwarf *d)
{
	if (d == NULL)
		return;
	for (size_t i = 0; i < d->nunits; i++)
		if (d->units[i].files != NULL) {
			free(d->units[i].files->names);
			free(d->units[i].files);
		}
	free(d->units);
	for (size_t i = 0; i < d->nabbrev_tables; i++)
		sym_abbrevs_free(d->abbrev_tables[i]);
	free(d->abbrev_tables);
	if (d->abbrev_index.slots != NULL)
		hashmap_free(&d->abbrev_index);
	if (d->functions.slots != NULL)
		hashmap_free(&d->functions);
	if (d->split_ids.slots != NULL)
		hashmap_free(&d->split_ids);
	if (d->dwp != NULL) {
		free(d->dwp->rows);
		free(d->dwp->unit_of_row);
	}
	free(d->dwp);
	sym_sections_close(&d->sections);
	free(d->path);
	free(d);
}

const char *sym_dwarf_path(const struct sym_dwarf *d)
{
	return d->path;
}

size_t sym_dwarf_nunits(const struct sym_dwarf *d)
{
	return d->nunits;
}

struct sym_unit *sym_dwarf_unit(struct sym_dwarf *d, size_t i)
{
	return i < d->nunits ? &d->units[i] : NULL;
}

struct sym_unit *sym_dwarf_unit_at(struct sym_dwarf *d, uint64_t offset)
{
	size_t lo = 0, hi = d->nunits;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d->units[mid].end <= offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < d->nunits && offset >= d->units[lo].first_die && offset < d->units[lo].end)
		return &d->units[lo];
	return NULL;
}

void sym_dwarf_set_sup(struct sym_dwarf *d, struct sym_dwarf *sup)
{
	d->sup = sup;
}

struct sym_dwarf *sym_dwarf_sup(const struct sym_dwarf *d)
{
	return d->sup;
}

struct sym_unit *sym_dwarf_find_dwo_unit(struct sym_dwarf *d, uint64_t dwo_id)
{
	if (d->dwp == NULL)
		return NULL;
	size_t lo = 0, hi = d->dwp->nrows;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d->dwp->rows[mid].signature < dwo_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= d->dwp->nrows || d->dwp->rows[lo].signature != dwo_id ||
	    d->dwp->unit_of_row[lo] == SIZE_MAX)
		return NULL;
	return &d->units[d->dwp->unit_of_row[lo]];
}

uint32_t *sym_dwarf_function_slot(struct sym_dwarf *d, uint64_t offset)
{
	return hashmap_slot(&d->functions, offset);
}

/* The parsed abbreviations of u, once per table offset of its file. */
static const struct sym_abbrevs *abbrevs_of(struct sym_unit *u)
{
	struct sym_dwarf *d = u->d;
	uint32_t *slot = hashmap_slot(&d->abbrev_index, u->abbrev_offset);
	if (*slot != HASHMAP_NONE)
		return d->abbrev_tables[*slot];
	struct sym_abbrevs *a = sym_abbrevs_parse(d->abbrev, u->abbrev_offset, u, &d->abbrev_bytes_left);
	ALLOC_GROW(d->abbrev_tables, d->nabbrev_tables + 1, d->abbrev_tables_cap);
	*slot = (uint32_t)d->nabbrev_tables;
	d->abbrev_tables[d->nabbrev_tables++] = a; /* NULL too: damaged once is damaged */
	return a;
}

/* The part of sec from offset on (empty when offset is past its end). */
static struct sym_slice from(struct sym_slice sec, uint64_t offset)
{
	if (sec.data == NULL || offset > sec.size)
		return (struct sym_slice){0};
	return (struct sym_slice){sec.data + offset, sec.size - offset};
}

/* A contribution [offset, offset + size) of sec, empty when outside. */
static struct sym_slice part(struct sym_slice sec, uint64_t offset, uint64_t size)
{
	if (sec.data == NULL || offset > sec.size || size > sec.size - offset)
		return (struct sym_slice){0};
	return (struct sym_slice){sec.data + offset, size};
}

/* Size of the DWARF 5 header a string-offsets or list table starts with
 * (length, version, padding or sizes, count): 0 when there is none. */
static uint64_t table_header_size(struct sym_slice sec, int lists)
{
	if (sec.data == NULL || sec.size < 8)
		return 0;
	uint64_t length = read_le(sec.data, 4);
	int wide = length == 0xffffffffu;
	unsigned version = (unsigned)read_le(sec.data + (wide ? 12 : 4), sec.size >= 14 ? 2 : 0);
	if (version != 5)
		return 0;
	return (wide ? 16 : 8) + (lists ? 4 : 0);
}

/* A split unit's own contributions: the whole .dwo sections, or its row's. */
static void open_split_sections(struct sym_unit *u)
{
	struct sym_dwarf *d = u->d;
	struct sym_slice str_offsets = d->str_offsets, line = d->line, rnglists = d->rnglists;
	if (u->row != SYM_NONE) {
		const struct dwp_row *row = &d->dwp->rows[u->row];
		str_offsets = part(d->str_offsets, row->offset[DW_SECT_STR_OFFSETS],
				   row->size[DW_SECT_STR_OFFSETS]);
		line = part(d->line, row->offset[DW_SECT_LINE], row->size[DW_SECT_LINE]);
		rnglists = d->dwp->version == 5 ? part(d->rnglists, row->offset[DW_SECT_RNGLISTS],
						       row->size[DW_SECT_RNGLISTS])
						  : (struct sym_slice){0};
	}
	/* DWARF 5 contributions start with a header, GNU DWARF 4 ones do not. */
	u->str_offsets = from(str_offsets, u->version >= 5 ? table_header_size(str_offsets, 0) : 0);
	u->rnglists = rnglists;
	u->rnglists_base = table_header_size(rnglists, 1);
	u->line_sections = (struct sym_line_sections){.line = line, .str = d->str};
	u->stmt_list = 0;
	u->has_stmt_list = line.data != NULL;
}

int sym_unit_open(struct sym_unit *u, struct sym_strings *st)
{
	if (u->state != 0)
		return u->state > 0 ? 0 : -1;
	u->state = -1;
	if (u->d->sections.big_endian || (u->offset_size != 4 && u->offset_size != 8) ||
	    (u->address_size != 4 && u->address_size != 8) ||
	    (u->abbrevs = abbrevs_of(u)) == NULL)
		return -1;
	if (u->d->dwo) {
		open_split_sections(u);
		u->state = 1;
		return 0;
	}
	struct sym_die root;
	struct sym_value v[SYM_AT_COUNT];
	uint64_t pos = u->first_die;
	if (sym_die_read(u, &pos, &root) != 0 || sym_die_values(u, &root, v) != 0)
		return -1;
	/* Bases first: the root's own strings and addresses may be indexed. */
	struct sym_dwarf *d = u->d;
	uint64_t base;
	if (v[SYM_AT_STR_OFFSETS_BASE].form != 0)
		u->str_offsets = from(d->str_offsets, v[SYM_AT_STR_OFFSETS_BASE].u);
	else
		u->str_offsets = from(d->str_offsets, table_header_size(d->str_offsets, 0));
	u->addr_file = d;
	u->addr_base = v[SYM_AT_ADDR_BASE].form != 0 ? v[SYM_AT_ADDR_BASE].u : 0;
	u->rnglists = d->rnglists;
	u->rnglists_base = v[SYM_AT_RNGLISTS_BASE].form != 0 ? v[SYM_AT_RNGLISTS_BASE].u
							     : table_header_size(d->rnglists, 1);
	u->ranges_base = v[SYM_AT_GNU_RANGES_BASE].form != 0 ? v[SYM_AT_GNU_RANGES_BASE].u : 0;
	u->base_address = sym_value_address(u, &v[SYM_AT_LOW_PC], &base) ? base : 0;
	u->comp_dir = sym_intern(st, sym_value_string(u, &v[SYM_AT_COMP_DIR]));
	u->line_sections = (struct sym_line_sections){
		.line = d->line, .line_str = d->line_str, .str = d->str};
	u->has_stmt_list = v[SYM_AT_STMT_LIST].form != 0 &&
			   v[SYM_AT_STMT_LIST].form != DW_FORM_string;
	u->stmt_list = v[SYM_AT_STMT_LIST].u;
	u->state = 1;
	return 0;
}

void sym_unit_inherit(struct sym_unit *u, const struct sym_unit *skeleton)
{
	u->addr_file = skeleton->addr_file;
	u->addr_base = skeleton->addr_base;
	u->ranges_base = skeleton->ranges_base;
	u->base_address = skeleton->base_address;
	u->comp_dir = skeleton->comp_dir;
	/* gcc gives a split unit its file names in .debug_line.dwo; clang
	 * numbers them as the skeleton's line table does. */
	if (!u->has_stmt_list) {
		u->line_sections = skeleton->line_sections;
		u->stmt_list = skeleton->stmt_list;
		u->has_stmt_list = skeleton->has_stmt_list;
	}
	/* A table already read with another compile directory is read again. */
	if (u->files != NULL) {
		free(u->files->names);
		free(u->files);
		u->files = NULL;
	}
}
