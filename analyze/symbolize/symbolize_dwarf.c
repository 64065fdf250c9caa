/*
 * symbolize_dwarf.c - read a module's DWARF once into the symbolizer's index.
 *
 * One pass over every compile unit: its line table becomes sorted rows
 * (decoded by symbolize_lines.c, which also names the CU's files), and every
 * subprogram and inlined call with code becomes a node with address ranges
 * (flattened later by symbolize_index.c). Only the DIEs that can hold code
 * are descended into (namespaces, functions, blocks), which keeps loading
 * libc's debug info well under a second. The walk steps through a unit's
 * bytes itself (symbolize_dies.c) and opens only subprograms and inlined
 * calls through libdwarf; units that reader declines are walked by libdwarf.
 *
 * libdwarf 20210528 traps handled here: DW_FORM_implicit_const (gcc's
 * call_file/call_line) fails dwarf_formudata, so fall back to
 * dwarf_formsdata; file indexes are 0-based in DWARF 5 and 1-based before;
 * DWARF 4 range lists are relative to the CU base address, DWARF 5 ones come
 * absolute from the rnglists interface. Every libdwarf return is checked: bad
 * DWARF loses some names, never the process.
 */
#include "symbolize_internal.h"

#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <libdwarf.h>

#define MAX_DIE_DEPTH 256 /* deeper nesting is malformed; stop descending */
#define MAX_ORIGIN_HOPS 8 /* abstract_origin / specification chain */

/* The file names of one CU, as its DW_AT_decl_file / call_file number them. */
struct file_table {
	Dwarf_Off cu_offset;
	struct sym_file_table t;
};

struct loader {
	Dwarf_Debug dbg;
	Dwarf_Error err;
	struct sym_index *ix;
	struct sym_strings *st;
	/* the CU being walked */
	Dwarf_Half version;
	Dwarf_Addr cu_base;
	struct file_table files;
	/* file tables of other CUs that abstract origins point into (LTO) */
	struct file_table *foreign;
	size_t nforeign, foreign_cap;
	/* abstract origin DIE offset + 1 -> function index (open addressing) */
	uint64_t *origin_keys;
	uint32_t *origin_values;
	size_t origin_slots, origin_used;
	/* scratch for one DIE's ranges */
	Dwarf_Addr (*ranges)[2];
	size_t nranges, ranges_cap;
	struct sym_sections sections;
	/* the CU being walked, as the raw reader sees it */
	Dwarf_Off abbrev_offset;
	Dwarf_Half offset_size, address_size;
	struct sym_unit unit;
};

/* 1 when res is DW_DLV_OK; frees any error libdwarf left behind (on damaged
 * DWARF some calls set one and still answer DW_DLV_NO_ENTRY). */
static int ok(struct loader *L, int res)
{
	if (L->err != NULL) {
		dwarf_dealloc(L->dbg, L->err, DW_DLA_ERROR);
		L->err = NULL;
	}
	return res == DW_DLV_OK;
}

/* ---- attributes ---- */

/* Unsigned value of an attribute of class constant, including
 * DW_FORM_implicit_const, which only dwarf_formsdata reads. */
static int attr_unsigned(struct loader *L, Dwarf_Die die, Dwarf_Half name, Dwarf_Unsigned *out)
{
	Dwarf_Attribute attr;
	if (!ok(L, dwarf_attr(die, name, &attr, &L->err)))
		return 0;
	int found = ok(L, dwarf_formudata(attr, out, &L->err));
	if (!found) {
		Dwarf_Signed s;
		found = ok(L, dwarf_formsdata(attr, &s, &L->err)) && s >= 0;
		if (found)
			*out = (Dwarf_Unsigned)s;
	}
	dwarf_dealloc_attribute(attr);
	return found;
}

/* String attribute, interned; NULL when absent. */
static const char *attr_string(struct loader *L, Dwarf_Die die, Dwarf_Half name)
{
	Dwarf_Attribute attr;
	if (!ok(L, dwarf_attr(die, name, &attr, &L->err)))
		return NULL;
	char *s = NULL;
	const char *interned = NULL;
	if (ok(L, dwarf_formstring(attr, &s, &L->err)) && s != NULL)
		interned = sym_intern(L->st, s);
	dwarf_dealloc_attribute(attr);
	return interned;
}

/* Section offset of the DIE a reference attribute points to. */
static int attr_reference(struct loader *L, Dwarf_Die die, Dwarf_Half name, Dwarf_Off *out)
{
	Dwarf_Attribute attr;
	if (!ok(L, dwarf_attr(die, name, &attr, &L->err)))
		return 0;
	int found = ok(L, dwarf_global_formref(attr, out, &L->err));
	dwarf_dealloc_attribute(attr);
	return found;
}

/* ---- file tables ---- */

/* Offset of the CU's line table in .debug_line. */
static int stmt_list(struct loader *L, Dwarf_Die cu_die, Dwarf_Unsigned *offset)
{
	Dwarf_Attribute attr;
	if (!ok(L, dwarf_attr(cu_die, DW_AT_stmt_list, &attr, &L->err)))
		return 0;
	Dwarf_Off off;
	int found = ok(L, dwarf_global_formref(attr, &off, &L->err));
	if (found)
		*offset = off;
	else /* DWARF 2-3 spell it as plain data */
		found = ok(L, dwarf_formudata(attr, offset, &L->err));
	dwarf_dealloc_attribute(attr);
	return found;
}

/* Read the line table of cu_die: its file names into t, and its rows into
 * the index when rows is set (unit_ranges: how many ranges the CU has). */
static void load_line_table(struct loader *L, Dwarf_Die cu_die, struct file_table *t, int rows,
			    size_t unit_ranges)
{
	memset(t, 0, sizeof(*t));
	if (!ok(L, dwarf_CU_dieoffset_given_die(cu_die, &t->cu_offset, &L->err)))
		t->cu_offset = 0;
	Dwarf_Unsigned offset;
	if (!stmt_list(L, cu_die, &offset))
		return;
	const char *comp_dir = attr_string(L, cu_die, DW_AT_comp_dir);
	sym_lines_decode(&L->sections, offset, comp_dir, L->st, &t->t, rows ? L->ix : NULL,
			 unit_ranges == 0);
}

/* The file table of the CU that holds die (the current one, usually). */
static const struct file_table *file_table_of(struct loader *L, Dwarf_Die die)
{
	Dwarf_Off cu_offset;
	if (!ok(L, dwarf_CU_dieoffset_given_die(die, &cu_offset, &L->err)))
		return NULL;
	if (cu_offset == L->files.cu_offset)
		return &L->files;
	for (size_t i = 0; i < L->nforeign; i++)
		if (L->foreign[i].cu_offset == cu_offset)
			return &L->foreign[i];
	Dwarf_Die cu_die;
	if (!ok(L, dwarf_offdie_b(L->dbg, cu_offset, 1, &cu_die, &L->err)))
		return NULL;
	SYM_GROW(L->foreign, L->nforeign, L->foreign_cap);
	load_line_table(L, cu_die, &L->foreign[L->nforeign], 0, 0);
	dwarf_dealloc_die(cu_die);
	return &L->foreign[L->nforeign++];
}

/* ---- functions: name and declaration through abstract_origin/specification ---- */

/*
 * The name a function is known by: the linkage name when it is mangled
 * (C++, Rust: demangled later), else DW_AT_name. glibc gives its C functions
 * linkage names like __GI_malloc (asm renames for internal calls) that no
 * user wrote; the plain name is the one to show.
 */
static const char *choose_name(const char *name, const char *linkage)
{
	if (linkage != NULL && linkage[0] == '_' && (linkage[1] == 'Z' || linkage[1] == 'R'))
		return linkage;
	return name != NULL ? name : linkage;
}

static uint32_t function_from_die(struct loader *L, Dwarf_Die die)
{
	const char *name = NULL, *linkage = NULL, *decl_file = NULL;
	Dwarf_Unsigned decl_line = 0;
	Dwarf_Die cur = die;
	for (int hop = 0; hop < MAX_ORIGIN_HOPS; hop++) {
		if (linkage == NULL)
			linkage = attr_string(L, cur, DW_AT_linkage_name);
		if (linkage == NULL)
			linkage = attr_string(L, cur, DW_AT_MIPS_linkage_name);
		if (name == NULL)
			name = attr_string(L, cur, DW_AT_name);
		Dwarf_Unsigned index;
		if (decl_file == NULL && attr_unsigned(L, cur, DW_AT_decl_file, &index)) {
			const struct file_table *t = file_table_of(L, cur);
			decl_file = t != NULL ? sym_file_name(&t->t, index) : NULL;
			if (!attr_unsigned(L, cur, DW_AT_decl_line, &decl_line))
				decl_line = 0;
		}
		Dwarf_Off next;
		Dwarf_Die next_die = NULL;
		int found = attr_reference(L, cur, DW_AT_abstract_origin, &next) ||
			    attr_reference(L, cur, DW_AT_specification, &next);
		if (cur != die)
			dwarf_dealloc_die(cur);
		cur = NULL;
		if (!found || (linkage != NULL && name != NULL && decl_file != NULL) ||
		    !ok(L, dwarf_offdie_b(L->dbg, next, 1, &next_die, &L->err)))
			break;
		cur = next_die;
	}
	if (cur != NULL && cur != die)
		dwarf_dealloc_die(cur);
	const char *shown = choose_name(name, linkage);
	return sym_add_function(L->ix, shown != NULL ? shown : sym_intern(L->st, ""), decl_file,
				decl_line > UINT32_MAX ? 0 : (uint32_t)decl_line);
}

static size_t hash_offset(uint64_t key, size_t slots)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & (slots - 1);
}

/* Every inlined copy of a function points to one abstract DIE: resolve it
 * once. */
static uint32_t function_for(struct loader *L, Dwarf_Die die)
{
	Dwarf_Off origin;
	if (!attr_reference(L, die, DW_AT_abstract_origin, &origin))
		return function_from_die(L, die);
	if (2 * (L->origin_used + 1) > L->origin_slots) {
		size_t slots = L->origin_slots ? L->origin_slots * 2 : 4096;
		uint64_t *keys = calloc_or_abort(slots, sizeof(*keys));
		uint32_t *values = calloc_or_abort(slots, sizeof(*values));
		for (size_t i = 0; i < L->origin_slots; i++) {
			if (L->origin_keys[i] == 0)
				continue;
			size_t j = hash_offset(L->origin_keys[i], slots);
			while (keys[j] != 0)
				j = (j + 1) & (slots - 1);
			keys[j] = L->origin_keys[i];
			values[j] = L->origin_values[i];
		}
		free(L->origin_keys);
		free(L->origin_values);
		L->origin_keys = keys;
		L->origin_values = values;
		L->origin_slots = slots;
	}
	uint64_t key = (uint64_t)origin + 1;
	size_t j = hash_offset(key, L->origin_slots);
	for (; L->origin_keys[j] != 0; j = (j + 1) & (L->origin_slots - 1))
		if (L->origin_keys[j] == key)
			return L->origin_values[j];
	uint32_t fn = function_from_die(L, die);
	L->origin_keys[j] = key;
	L->origin_values[j] = fn;
	L->origin_used++;
	return fn;
}

/* ---- address ranges ---- */

static void add_scratch_range(struct loader *L, Dwarf_Addr lo, Dwarf_Addr hi)
{
	SYM_GROW(L->ranges, L->nranges, L->ranges_cap);
	L->ranges[L->nranges][0] = lo;
	L->ranges[L->nranges][1] = hi;
	L->nranges++;
}

static void read_rnglists(struct loader *L, Dwarf_Attribute attr, Dwarf_Half form)
{
	Dwarf_Unsigned value;
	Dwarf_Off offset;
	if (form == DW_FORM_rnglistx) {
		if (!ok(L, dwarf_formudata(attr, &value, &L->err)))
			return;
	} else {
		if (!ok(L, dwarf_global_formref(attr, &offset, &L->err)))
			return;
		value = offset;
	}
	Dwarf_Rnglists_Head head;
	Dwarf_Unsigned count, global_offset;
	if (!ok(L, dwarf_rnglists_get_rle_head(attr, form, value, &head, &count, &global_offset,
					       &L->err)))
		return;
	for (Dwarf_Unsigned i = 0; i < count; i++) {
		unsigned length, code;
		Dwarf_Unsigned raw1, raw2, lo, hi;
		Dwarf_Bool unavailable = 0;
		if (!ok(L, dwarf_get_rnglists_entry_fields_a(head, i, &length, &code, &raw1, &raw2,
							     &unavailable, &lo, &hi, &L->err)) ||
		    code == DW_RLE_end_of_list)
			break;
		if (code == DW_RLE_base_address || code == DW_RLE_base_addressx || unavailable)
			continue;
		add_scratch_range(L, lo, hi);
	}
	dwarf_dealloc_rnglists_head(head);
}

static void read_debug_ranges(struct loader *L, Dwarf_Die die, Dwarf_Attribute attr)
{
	Dwarf_Off offset, real_offset;
	Dwarf_Unsigned udata;
	if (!ok(L, dwarf_global_formref(attr, &offset, &L->err))) {
		/* DWARF 2-3 spell the offset as plain data. */
		if (!ok(L, dwarf_formudata(attr, &udata, &L->err)))
			return;
		offset = udata;
	}
	Dwarf_Ranges *ranges;
	Dwarf_Signed count;
	Dwarf_Unsigned bytes;
	if (!ok(L, dwarf_get_ranges_b(L->dbg, offset, die, &real_offset, &ranges, &count, &bytes,
				      &L->err)))
		return;
	Dwarf_Addr base = L->cu_base;
	for (Dwarf_Signed i = 0; i < count; i++) {
		if (ranges[i].dwr_type == DW_RANGES_END)
			break;
		if (ranges[i].dwr_type == DW_RANGES_ADDRESS_SELECTION)
			base = ranges[i].dwr_addr2;
		else
			add_scratch_range(L, base + ranges[i].dwr_addr1, base + ranges[i].dwr_addr2);
	}
	dwarf_ranges_dealloc(L->dbg, ranges, count);
}

/* Collect die's code ranges into L->ranges; returns how many. */
static size_t die_ranges(struct loader *L, Dwarf_Die die)
{
	L->nranges = 0;
	Dwarf_Addr lo, hi;
	Dwarf_Half form;
	enum Dwarf_Form_Class form_class;
	if (ok(L, dwarf_lowpc(die, &lo, &L->err))) {
		if (ok(L, dwarf_highpc_b(die, &hi, &form, &form_class, &L->err)))
			add_scratch_range(L, lo, form_class == DW_FORM_CLASS_CONSTANT ? lo + hi : hi);
		return L->nranges;
	}
	Dwarf_Attribute attr;
	if (!ok(L, dwarf_attr(die, DW_AT_ranges, &attr, &L->err)))
		return 0;
	if (ok(L, dwarf_whatform(attr, &form, &L->err))) {
		if (L->version >= 5)
			read_rnglists(L, attr, form);
		else
			read_debug_ranges(L, die, attr);
	}
	dwarf_dealloc_attribute(attr);
	return L->nranges;
}

/* ---- the DIE walk ---- */

static void walk_children(struct loader *L, Dwarf_Die parent, uint32_t node, uint32_t depth);
static void walk_unit(struct loader *L, uint64_t pos, uint32_t node, uint32_t depth, int nesting);

/* A subprogram or inlined call with code becomes a node; parent is the node
 * it was inlined into (SYM_NONE for a subprogram). Returns the node, or
 * SYM_NONE for a DIE without code (whose children are not walked). */
static uint32_t add_code_node(struct loader *L, Dwarf_Die die, Dwarf_Half tag, uint32_t parent,
			      uint32_t depth)
{
	if (die_ranges(L, die) == 0)
		return SYM_NONE; /* a declaration or abstract instance: no code here */
	const char *call_file = NULL;
	Dwarf_Unsigned call_line = 0, index;
	if (tag == DW_TAG_inlined_subroutine) {
		if (attr_unsigned(L, die, DW_AT_call_file, &index))
			call_file = sym_file_name(&L->files.t, index);
		if (!attr_unsigned(L, die, DW_AT_call_line, &call_line) || call_line > UINT32_MAX)
			call_line = 0;
	} else {
		parent = SYM_NONE; /* a nested function is a function of its own */
	}
	/* The scratch ranges are reused by the children: add them first. */
	size_t n = L->nranges;
	uint32_t fn = function_for(L, die);
	uint32_t node = sym_add_node(L->ix, fn, parent, call_file, (uint32_t)call_line);
	for (size_t i = 0; i < n; i++)
		sym_add_range(L->ix, L->ranges[i][0], L->ranges[i][1], node, depth);
	return node;
}

/* DIEs whose children are walked for code without being code themselves. */
static int is_scope(unsigned tag)
{
	return tag == DW_TAG_lexical_block || tag == DW_TAG_try_block ||
	       tag == DW_TAG_catch_block || tag == DW_TAG_namespace || tag == DW_TAG_module;
}

static void visit(struct loader *L, Dwarf_Die die, uint32_t node, uint32_t depth)
{
	Dwarf_Half tag;
	if (!ok(L, dwarf_tag(die, &tag, &L->err)))
		return;
	if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
		uint32_t added = add_code_node(L, die, tag, node, depth);
		if (added != SYM_NONE)
			walk_children(L, die, added, depth + 1);
	} else if (is_scope(tag)) {
		walk_children(L, die, node, depth);
	} /* types and variables hold no code */
}

/* The libdwarf walk, for units the raw reader (symbolize_dies.c) declines. */
static void walk_children(struct loader *L, Dwarf_Die parent, uint32_t node, uint32_t depth)
{
	if (depth > MAX_DIE_DEPTH)
		return;
	Dwarf_Die child;
	if (!ok(L, dwarf_child(parent, &child, &L->err)))
		return;
	for (;;) {
		visit(L, child, node, depth);
		Dwarf_Die sibling;
		int res = dwarf_siblingof_b(L->dbg, child, 1, &sibling, &L->err);
		dwarf_dealloc_die(child);
		if (!ok(L, res))
			break;
		child = sibling;
	}
}

/*
 * The same walk over the unit's bytes: the siblings starting at pos, only
 * the code DIEs opened through libdwarf. nesting bounds the recursion
 * through scopes, which depth (code nodes only) does not count.
 */
static void walk_unit(struct loader *L, uint64_t pos, uint32_t node, uint32_t depth, int nesting)
{
	if (depth > MAX_DIE_DEPTH || nesting > 4 * MAX_DIE_DEPTH)
		return;
	for (;;) {
		struct sym_die d;
		if (sym_die_read(&L->unit, &pos, &d) != 0)
			return; /* the end of the siblings, or damage */
		if (d.tag == DW_TAG_subprogram || d.tag == DW_TAG_inlined_subroutine) {
			/* Without low_pc or ranges it is a declaration or an
			 * abstract instance (most of them: prototypes): no code,
			 * as add_code_node would find, without opening it. */
			Dwarf_Die die;
			uint32_t added = SYM_NONE;
			if (d.addresses && ok(L, dwarf_offdie_b(L->dbg, d.offset, 1, &die, &L->err))) {
				added = add_code_node(L, die, (Dwarf_Half)d.tag, node, depth);
				dwarf_dealloc_die(die);
			}
			if (added != SYM_NONE && d.has_children)
				walk_unit(L, d.children, added, depth + 1, nesting + 1);
		} else if (is_scope(d.tag) && d.has_children) {
			walk_unit(L, d.children, node, depth, nesting + 1);
		}
		if (sym_die_next(&L->unit, &d, &pos) != 0)
			return;
	}
}

/* ---- compile units ---- */

/* Set up the raw reader for the unit of cu_die: 0, or -1 to use libdwarf. */
static int open_unit(struct loader *L, Dwarf_Die cu_die)
{
	Dwarf_Off unit_offset, unit_length;
	if (!ok(L, dwarf_die_CU_offset_range(cu_die, &unit_offset, &unit_length, &L->err)))
		return -1;
	struct sym_unit_header h = {
		.unit_offset = unit_offset,
		.end = unit_offset + unit_length,
		.abbrev_offset = L->abbrev_offset,
		.version = L->version,
		.offset_size = L->offset_size,
		.address_size = L->address_size,
	};
	return h.end < unit_offset ? -1 : sym_unit_open(&L->unit, &L->sections, &h);
}

static void load_cu(struct loader *L, Dwarf_Die cu_die)
{
	Dwarf_Addr base;
	L->cu_base = ok(L, dwarf_lowpc(cu_die, &base, &L->err)) ? base : 0;
	size_t unit_ranges = die_ranges(L, cu_die);
	for (size_t i = 0; i < unit_ranges; i++)
		sym_add_unit_range(L->ix, L->ranges[i][0], L->ranges[i][1]);
	load_line_table(L, cu_die, &L->files, 1, unit_ranges);
	if (open_unit(L, cu_die) == 0) {
		struct sym_die d;
		uint64_t pos = L->unit.unit_offset;
		Dwarf_Off offset;
		if (ok(L, dwarf_dieoffset(cu_die, &offset, &L->err)) &&
		    (pos = offset, sym_die_read(&L->unit, &pos, &d) == 0) && d.has_children)
			walk_unit(L, d.children, SYM_NONE, 0, 0);
	} else {
		walk_children(L, cu_die, SYM_NONE, 0);
	}
	free(L->files.t.names);
	memset(&L->files, 0, sizeof(L->files));
}

int sym_dwarf_load(struct sym_index *ix, struct sym_strings *st, const char *debug_path)
{
	struct loader L = {.ix = ix, .st = st};
	if (sym_sections_open(&L.sections, debug_path) != 0 ||
	    !sym_sections_lists_sane(&L.sections) || sym_sections_dwarf(&L.sections, &L.dbg) != 0) {
		sym_sections_close(&L.sections);
		return -1;
	}
	/* libdwarf's tracking of every allocation (for dwarf_finish to free
	 * what callers forgot) cost a quarter of the load time; everything is
	 * freed here explicitly. */
	dwarf_set_de_alloc_flag(0);
	int res;
	for (;;) {
		Dwarf_Unsigned header_length, type_offset, next_offset;
		Dwarf_Half extension_size, unit_type;
		Dwarf_Sig8 signature;
		res = dwarf_next_cu_header_d(L.dbg, 1, &header_length, &L.version, &L.abbrev_offset,
					     &L.address_size, &L.offset_size, &extension_size,
					     &signature, &type_offset, &next_offset, &unit_type,
					     &L.err);
		if (!ok(&L, res))
			break; /* the end, or a unit we cannot step over */
		ix->has_dwarf = 1;
		Dwarf_Die cu_die;
		if (!ok(&L, dwarf_siblingof_b(L.dbg, NULL, 1, &cu_die, &L.err)))
			continue;
		load_cu(&L, cu_die);
		dwarf_dealloc_die(cu_die);
	}
	for (size_t i = 0; i < L.nforeign; i++)
		free(L.foreign[i].t.names);
	free(L.foreign);
	free(L.origin_keys);
	free(L.origin_values);
	free(L.ranges);
	sym_unit_close(&L.unit);
	dwarf_object_finish(L.dbg, &L.err);
	sym_sections_close(&L.sections);
	return 0;
}
