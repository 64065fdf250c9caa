/*
 * symbolize_dwarf.c - read a module's DWARF once into the symbolizer's index.
 *
 * One pass over every compile unit: its line table becomes sorted rows
 * (decoded by symbolize_lines.c, which also names the unit's files), and
 * every subprogram and inlined call with code becomes a node with address
 * ranges (flattened later by symbolize_index.c). Only the DIEs that can hold
 * code are descended into (namespaces, functions, blocks); stepping over the
 * rest costs no allocation (symbolize_dies.c), which keeps loading libc's
 * debug info well under a second.
 *
 * A function's name and declaration may be a few references away
 * (DW_AT_abstract_origin, DW_AT_specification), in another unit (LTO, dwz's
 * partial units) or in the dwz supplementary file; each abstract DIE is
 * resolved once. A skeleton unit's code is described in its split unit
 * (a .dwo, or a .dwp package): rows come from the skeleton's line table,
 * functions from the split unit, which takes its address table and bases
 * from the skeleton. When the supplementary file or a split unit cannot be
 * used, that code keeps its rows and is named from the symbol table: the
 * warning says which file was missing.
 *
 * Wanted addresses. Resolving a trace needs few units (a small allocation
 * trace: a few dozen of libc's), and decoding every unit's line table and
 * walking its DIEs was much of analyze's fixed cost. Given the addresses to
 * come, a unit whose own ranges hold none of them is left out (its ranges
 * are kept: they decide where rows answer), unless the flags (inline
 * frames, any function, any row) are not settled by the others: then the
 * units left out are read in order until they are. Never left out: a unit
 * without ranges of its own (they come from its rows), a skeleton, a unit
 * with a range at 0 (code removed by --gc-sections: its rows from 0 on sort
 * among other units'), and any unit of a file whose DIEs may refer into
 * other units (DW_FORM_ref_addr: LTO, dwz), where the order units are read
 * in decides which rows are kept (load_rows). As gdb and addr2line, this
 * takes a unit's code to lie within its ranges. A lookup outside the
 * wanted addresses reloads the module whole (symbolize.c). What it saves:
 * bench/README.md, "analyze: symbolizing".
 *
 * Known DWARF traps handled here: DW_FORM_implicit_const (gcc's
 * call_file/call_line); file indexes are 0-based in DWARF 5 and 1-based
 * before; DWARF 4 range lists are relative to the unit's base address.
 */
#include "symbolize_internal.h"
#include "symbolize_cursor.h"
#include "search.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>

#define MAX_DIE_DEPTH 256 /* deeper nesting is malformed; stop descending */
#define MAX_ORIGIN_HOPS 8 /* abstract_origin / specification chain */

struct loader {
	struct sym_index *ix;
	struct sym_strings *st;
	struct sym_links links;
	struct sym_range_list scratch; /* one DIE's ranges; its entries_left: the range budget */
	uint64_t line_bytes_left; /* the line-table budget */
	int names_usable; /* 0: DIEs point into a supplementary file we lack */
};

/* ---- the work budget ----
 *
 * Units and DIEs are cheap to repeat and may all point to one line table or
 * range list: a crafted file of a few kilobytes would cost units x table
 * (15 s and 800 MB for 57 KB, in fuzz_symbolize_dwarf). Each file read
 * gives the load a budget in proportion to its sections, far beyond what
 * real DWARF spends (every table read once, a few for dwz's partial units):
 * 8 passes over its line tables, 4 list entries per byte of its range
 * lists. Once spent, further line tables and lists read as empty.
 */
#define BUDGET_BASE ((uint64_t)1 << 16)

static void budget_file(struct loader *L, struct sym_dwarf *f)
{
	if (f == NULL || f->budgeted)
		return;
	f->budgeted = 1;
	L->line_bytes_left += 8 * f->line.size;
	L->scratch.entries_left += 4 * (f->ranges.size + f->rnglists.size);
}

/* Bytes the line table at offset of ls->line spans, as its initial length
 * says (cut at the section's end). */
static uint64_t line_table_size(const struct sym_line_sections *ls, uint64_t offset)
{
	const struct sym_slice *l = &ls->line;
	if (l->data == NULL || offset >= l->size)
		return 0;
	uint64_t left = l->size - offset;
	struct sym_cursor c = {l->data + offset, l->data + l->size, 0};
	unsigned offset_size;
	uint64_t length = cursor_initial_length(&c, &offset_size);
	if (c.bad) /* cut in its length: the rest of the section (nothing when not even 4 bytes) */
		return left >= 4 ? left : 0;
	uint64_t header = (uint64_t)(c.p - (l->data + offset));
	return length < left - header ? header + length : left;
}

/* Decode u's line table (file names, and rows into ix unless NULL) if the
 * budget allows: a unit past it gets no file names and no rows. */
static void decode_lines(struct loader *L, struct sym_unit *u, struct sym_index *ix,
			 int add_unit_ranges)
{
	u->files = calloc_or_abort(1, sizeof(*u->files));
	uint64_t size = line_table_size(&u->line_sections, u->stmt_list);
	if (size > L->line_bytes_left)
		return;
	L->line_bytes_left -= size;
	sym_lines_decode(&u->line_sections, u->stmt_list, u->comp_dir, L->st, u->files, ix,
			 add_unit_ranges);
}

/* ---- file tables ---- */

/* u's file names (decoded on first use), NULL when it has no line table. */
static const struct sym_file_table *files_of(struct loader *L, struct sym_unit *u)
{
	if (u->files == NULL && u->has_stmt_list)
		decode_lines(L, u, NULL, 0);
	return u->files;
}

static const char *file_name(struct loader *L, struct sym_unit *u, const struct sym_value *v)
{
	uint64_t index;
	if (v->form == 0 || !sym_value_unsigned(v, &index))
		return NULL;
	const struct sym_file_table *t = files_of(L, u);
	return t != NULL ? sym_file_name(t, index) : NULL;
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

/* Read the DIE at offset of file d (and its unit) into values: 0 or -1. */
static int read_die_at(struct loader *L, struct sym_dwarf *d, uint64_t offset,
		       struct sym_unit **unit, struct sym_value *values)
{
	struct sym_unit *u = sym_dwarf_unit_at(d, offset);
	struct sym_die die;
	uint64_t pos = offset;
	if (u == NULL || sym_unit_open(u, L->st) != 0 || sym_die_read(u, &pos, &die) != 0)
		return -1;
	*unit = u;
	return sym_die_values(u, &die, values);
}

/* The function a DIE describes (values: its attributes, in unit u). */
static uint32_t function_from(struct loader *L, struct sym_unit *u, const struct sym_value *first)
{
	const char *name = NULL, *linkage = NULL, *decl_file = NULL;
	uint64_t decl_line = 0;
	struct sym_value values[SYM_AT_COUNT];
	const struct sym_value *v = first;
	for (int hop = 0; hop < MAX_ORIGIN_HOPS; hop++) {
		if (linkage == NULL)
			linkage = sym_value_string(u, &v[SYM_AT_LINKAGE_NAME]);
		if (name == NULL)
			name = sym_value_string(u, &v[SYM_AT_NAME]);
		if (decl_file == NULL && (decl_file = file_name(L, u, &v[SYM_AT_DECL_FILE])) != NULL &&
		    !sym_value_unsigned(&v[SYM_AT_DECL_LINE], &decl_line))
			decl_line = 0;
		const struct sym_value *next = v[SYM_AT_ABSTRACT_ORIGIN].form != 0
						       ? &v[SYM_AT_ABSTRACT_ORIGIN]
						       : &v[SYM_AT_SPECIFICATION];
		struct sym_dwarf *d;
		uint64_t offset;
		if ((linkage != NULL && name != NULL && decl_file != NULL) || next->form == 0 ||
		    !sym_value_reference(u, next, &d, &offset) ||
		    read_die_at(L, d, offset, &u, values) != 0)
			break;
		v = values;
	}
	const char *shown = choose_name(name, linkage);
	return sym_add_function(L->ix, sym_intern(L->st, shown != NULL ? shown : ""), decl_file,
				decl_line > UINT32_MAX ? 0 : (uint32_t)decl_line);
}

/* Every inlined copy of a function points to one abstract DIE: resolve it
 * once per file and offset. */
static uint32_t function_for(struct loader *L, struct sym_unit *u, const struct sym_value *v)
{
	struct sym_dwarf *d;
	uint64_t offset;
	struct sym_value origin[SYM_AT_COUNT];
	struct sym_unit *ou;
	if (v[SYM_AT_ABSTRACT_ORIGIN].form == 0 ||
	    !sym_value_reference(u, &v[SYM_AT_ABSTRACT_ORIGIN], &d, &offset))
		return function_from(L, u, v);
	uint32_t *slot = sym_dwarf_function_slot(d, offset);
	if (*slot != HASHMAP_NONE)
		return *slot;
	/* The concrete DIE's own name (rare) is not the abstract one's: read
	 * the origin itself, so every copy gets the same function. */
	uint32_t fn = read_die_at(L, d, offset, &ou, origin) == 0 ? function_from(L, ou, origin)
								   : function_from(L, u, v);
	*sym_dwarf_function_slot(d, offset) = fn;
	return fn;
}

/* ---- the DIE walk ---- */

/* A subprogram or inlined call with code becomes a node; parent is the node
 * it was inlined into (SYM_NONE for a subprogram). Returns the node, or
 * SYM_NONE for a DIE without code (whose children are not walked). */
static uint32_t add_code_node(struct loader *L, struct sym_unit *u, unsigned tag,
			      const struct sym_value *v, uint32_t parent, uint32_t depth)
{
	L->scratch.n = 0;
	size_t n = sym_die_ranges(u, v, &L->scratch);
	if (n == 0)
		return SYM_NONE; /* a declaration or abstract instance: no code here */
	const char *call_file = NULL;
	uint64_t call_line = 0;
	if (tag == DW_TAG_inlined_subroutine) {
		call_file = file_name(L, u, &v[SYM_AT_CALL_FILE]);
		if (!sym_value_unsigned(&v[SYM_AT_CALL_LINE], &call_line) || call_line > UINT32_MAX)
			call_line = 0;
	} else {
		parent = SYM_NONE; /* a nested function is a function of its own */
	}
	uint32_t fn = function_for(L, u, v);
	uint32_t node = sym_add_node(L->ix, fn, parent, call_file, (uint32_t)call_line);
	/* function_for may have read other DIEs, but not their ranges. */
	for (size_t i = 0; i < n; i++)
		sym_add_range(L->ix, L->scratch.ranges[i][0], L->scratch.ranges[i][1], node, depth);
	return node;
}

/* DIEs whose children are walked for code without being code themselves. */
static int is_scope(unsigned tag)
{
	return tag == DW_TAG_lexical_block || tag == DW_TAG_try_block ||
	       tag == DW_TAG_catch_block || tag == DW_TAG_namespace || tag == DW_TAG_module;
}

/*
 * The siblings starting at pos, descending into code and scopes. nesting
 * bounds the recursion through scopes, which depth (code nodes only) does
 * not count.
 */
static void walk(struct loader *L, struct sym_unit *u, uint64_t pos, uint32_t node,
		 uint32_t depth, int nesting)
{
	if (depth > MAX_DIE_DEPTH || nesting > 4 * MAX_DIE_DEPTH)
		return;
	for (;;) {
		struct sym_die d;
		if (sym_die_read(u, &pos, &d) != 0)
			return; /* the end of the siblings, or damage */
		if (d.tag == DW_TAG_subprogram || d.tag == DW_TAG_inlined_subroutine) {
			/* Without low_pc or ranges it is a declaration or an
			 * abstract instance (most of them: prototypes): no code. */
			struct sym_value v[SYM_AT_COUNT];
			uint32_t added = SYM_NONE;
			if (d.addresses && sym_die_values(u, &d, v) == 0)
				added = add_code_node(L, u, d.tag, v, node, depth);
			if (added != SYM_NONE && d.has_children)
				walk(L, u, d.children, added, depth + 1, nesting + 1);
		} else if (is_scope(d.tag) && d.has_children) {
			walk(L, u, d.children, node, depth, nesting + 1);
		}
		if (sym_die_next(u, &d, &pos) != 0)
			return;
	}
}

/* Walk the code DIEs under unit u's root. */
static void walk_unit(struct loader *L, struct sym_unit *u)
{
	struct sym_die root;
	uint64_t pos = u->first_die;
	if (sym_die_read(u, &pos, &root) == 0 && root.has_children)
		walk(L, u, root.children, SYM_NONE, 0, 0);
}

/* ---- compile units ---- */

static int is_skeleton(const struct sym_unit *u, const struct sym_value *v)
{
	return u->unit_type == DW_UT_skeleton ||
	       (u->version < 5 && v[SYM_AT_DWO_NAME].form != 0 && v[SYM_AT_DWO_ID].form != 0);
}

/*
 * A .dwo rebuilt after the program was linked may keep its DWO id (gcc
 * hashes the DIEs, not the code) while its addresses belong to the old
 * build: every range the split unit added since nranges must lie within
 * the skeleton's. 1 when they do (or the skeleton states no ranges).
 */
static int split_fits_skeleton(const struct loader *L, const uint64_t (*unit)[2], size_t nunit,
			       size_t nranges)
{
	if (nunit == 0)
		return 1;
	for (size_t i = nranges; i < L->ix->nranges; i++) {
		const struct sym_range *r = &L->ix->ranges[i];
		int inside = 0;
		for (size_t k = 0; k < nunit && !inside; k++)
			inside = r->lo >= unit[k][0] && r->hi <= unit[k][1];
		if (!inside)
			return 0;
	}
	return 1;
}

/* Walk split unit split; dropped again if it does not fit its skeleton. */
static void load_split(struct loader *L, struct sym_unit *split,
		       const uint64_t (*unit)[2], size_t nunit)
{
	size_t nranges = L->ix->nranges;
	uint32_t nnodes = L->ix->nnodes;
	walk_unit(L, split);
	if (split_fits_skeleton(L, unit, nunit, nranges))
		return;
	L->ix->nranges = nranges;
	L->ix->nnodes = nnodes;
	sym_problem(&L->links, "split DWARF file %s: another build (its code is not the skeleton's)",
		    split->d->path);
}

/* Does one of the sorted addresses want lie in one of n ranges? 1 too when
 * a range starts at 0: code removed by --gc-sections, whose rows from 0 on
 * (ld.bfd's tombstone) sort among other units' and may answer for them. */
static int holds_wanted(const uint64_t (*ranges)[2], size_t n, const uint64_t *want, size_t nwant)
{
	for (size_t i = 0; i < n; i++)
		if (ranges[i][0] == 0)
			return 1;
	for (size_t i = 0; i < n; i++) {
		size_t lo = u64_first_not_below(want, 0, nwant, ranges[i][0]); /* the first wanted address in it, if any */
		if (lo < nwant && want[lo] < ranges[i][1])
			return 1;
	}
	return 0;
}

/* The rows of unit u (the file names too: they serve its DIEs). */
static void load_rows(struct loader *L, struct sym_unit *u, int add_unit_ranges)
{
	if (u->has_stmt_list && u->files == NULL)
		decode_lines(L, u, L->ix, add_unit_ranges);
}

/* Read unit u: its ranges, and its rows and functions unless want holds
 * none of its addresses. Returns 1 when those were left for later. */
static int load_unit(struct loader *L, struct sym_unit *u, const uint64_t *want, size_t nwant)
{
	struct sym_die root;
	struct sym_value v[SYM_AT_COUNT];
	uint64_t pos = u->first_die;
	if (sym_die_read(u, &pos, &root) != 0 || sym_die_values(u, &root, v) != 0)
		return 0;
	L->scratch.n = 0;
	size_t unit_ranges = sym_die_ranges(u, v, &L->scratch);
	for (size_t i = 0; i < unit_ranges; i++)
		sym_add_unit_range(L->ix, L->scratch.ranges[i][0], L->scratch.ranges[i][1]);
	int skeleton = is_skeleton(u, v);
	/* A unit without ranges of its own has them from its rows. */
	if (want != NULL && unit_ranges > 0 && !skeleton &&
	    !holds_wanted((const uint64_t(*)[2])L->scratch.ranges, unit_ranges, want, nwant))
		return 1;
	load_rows(L, u, unit_ranges == 0);
	if (skeleton) {
		struct sym_unit *split = sym_links_split_unit(&L->links, u, v, L->st);
		if (split == NULL)
			return 0; /* its code keeps its rows, named from the symbol table */
		budget_file(L, split->d);
		/* Skeletons naming one split unit (only a crafted file has two)
		 * would each add its DIEs again: skeletons x unit. */
		if (!split->walked && sym_unit_open(split, L->st) == 0) {
			split->walked = 1;
			uint64_t(*unit)[2] = realloc_or_abort(NULL, (unit_ranges + 1) * sizeof(*unit));
			if (unit_ranges > 0) /* a skeleton without ranges: scratch may be unallocated */
				memcpy(unit, L->scratch.ranges, unit_ranges * sizeof(*unit));
			sym_unit_inherit(split, u);
			load_split(L, split, (const uint64_t(*)[2])unit, unit_ranges);
			free(unit);
		}
	} else if (L->names_usable) {
		walk_unit(L, u);
	}
	return 0;
}

/* A unit of code: type units hold none; partial units (dwz) are walked
 * like compile units, though their DIEs are rarely code. */
static int is_code_unit(const struct sym_unit *u)
{
	return u->unit_type == DW_UT_compile || u->unit_type == DW_UT_partial || u->unit_type == DW_UT_skeleton;
}

/*
 * Whether units may be left out: not when a DIE may refer into another unit
 * of the file. Reading a referenced unit's file names before its own turn
 * keeps its rows out of the index (load_rows), so the order units are
 * walked in then matters (LTO and dwz use DW_FORM_ref_addr).
 */
static int units_stand_alone(struct sym_dwarf *d, struct sym_strings *st)
{
	for (size_t i = 0; i < sym_dwarf_nunits(d); i++) {
		struct sym_unit *u = sym_dwarf_unit(d, i);
		if (is_code_unit(u) && sym_unit_open(u, st) == 0 && sym_abbrevs_foreign(u->abbrevs))
			return 0;
	}
	return 1;
}

int sym_dwarf_load(struct sym_index *ix, struct sym_strings *st, const char *debug_path,
		   const struct sym_search *search, const uint64_t *want, size_t nwant, int *partial,
		   char *warning, size_t warning_len)
{
	*partial = 0;
	if (warning_len > 0)
		warning[0] = '\0';
	struct sym_dwarf *d = sym_dwarf_open(debug_path, 0);
	if (d == NULL)
		return -1;
	struct sym_search no_search = {0};
	struct loader L = {.ix = ix, .st = st, .names_usable = 1, .line_bytes_left = BUDGET_BASE};
	L.scratch.entries_left = BUDGET_BASE;
	L.links.search = search != NULL ? search : &no_search;
	L.links.debug_path = debug_path;
	budget_file(&L, d);
	if (sym_links_find_sup(&L.links, d, debug_path) < 0)
		L.names_usable = 0;
	budget_file(&L, sym_dwarf_sup(d));
	if (want != NULL && !units_stand_alone(d, st))
		want = NULL;
	size_t *later = NULL, nlater = 0, later_cap = 0; /* units left out so far */
	for (size_t i = 0; i < sym_dwarf_nunits(d); i++) {
		struct sym_unit *u = sym_dwarf_unit(d, i);
		if (!is_code_unit(u))
			continue;
		ix->has_dwarf = 1;
		if (sym_unit_open(u, st) == 0 && load_unit(&L, u, want, nwant)) {
			ALLOC_GROW(later, nlater + 1, later_cap);
			later[nlater++] = i;
		}
	}
	/* The flags a whole load would give: read on until they are settled. */
	size_t next = 0;
	while (next < nlater && (!ix->has_inlines || ix->nranges == 0 || ix->nrows == 0)) {
		struct sym_unit *u = sym_dwarf_unit(d, later[next++]);
		load_rows(&L, u, 0);
		if (L.names_usable)
			walk_unit(&L, u);
	}
	*partial = next < nlater;
	free(later);
	if (L.links.nproblems > 0 && warning_len > 0) {
		if (L.links.nproblems == 1)
			snprintf(warning, warning_len, "%s", L.links.problem);
		else
			snprintf(warning, warning_len, "%s (and %u more)", L.links.problem,
				 L.links.nproblems - 1);
	}
	free(L.scratch.ranges);
	sym_links_free(&L.links);
	sym_dwarf_close(d);
	return 0;
}
