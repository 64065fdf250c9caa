/*
 * symbolize_internal.h - what the symbolizer's files share: the per-module
 * index (functions, inline tree, address segments, line rows, symbols) and
 * the string pool every name and path is interned in.
 *
 * The index is built once per module (symbolize_dwarf.c, symbolize_elf.c),
 * then sorted and flattened (symbolize_index.c) so that a lookup is three
 * binary searches: segment -> innermost node, line row, symbol.
 */
#ifndef IPSCOPE_SYMBOLIZE_INTERNAL_H
#define IPSCOPE_SYMBOLIZE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "alloc.h"

#define SYM_NONE UINT32_MAX

/* Make room for one more element of a growing array (capacity doubles; out
 * of memory ends the process, as for every table analyze builds: alloc.h). */
#define SYM_GROW(array, count, cap)                                                        \
	do {                                                                               \
		if ((count) == (cap)) {                                                    \
			(cap) = (cap) ? (cap) * 2 : 16;                                    \
			(array) = realloc_or_abort((array), (size_t)(cap) * sizeof(*(array))); \
		}                                                                          \
	} while (0)

/* Interned strings: equal strings share one pointer, freed all at once. */
struct sym_strings {
	char **chunks;
	size_t nchunks, chunks_cap;
	size_t chunk_used, chunk_size;
	const char **slots; /* open addressing, power of two */
	size_t nslots, nused;
};
const char *sym_intern(struct sym_strings *st, const char *s);
const char *sym_intern_n(struct sym_strings *st, const char *s, size_t n);
void sym_strings_free(struct sym_strings *st);

struct sym_function {
	const char *linkage_name; /* as in the binary */
	const char *display_name; /* computed on first lookup (demangling is costly) */
	const char *file;         /* DW_AT_decl_file, NULL unknown */
	uint32_t line;            /* DW_AT_decl_line, 0 unknown */
};

/* A subprogram (parent SYM_NONE) or an inlined call within its parent. */
struct sym_node {
	uint32_t function;
	uint32_t parent;
	const char *call_file; /* where parent calls function (inlined only) */
	uint32_t call_line;
};

/* Address range [lo, hi) of node; depth orders nested ranges. */
struct sym_range {
	uint64_t lo, hi;
	uint32_t node;
	uint32_t depth;
};

/* One line-table row; rows are sorted so the answer for an address is the
 * last row at or below it. end marks the end of a sequence (no line). */
struct sym_row {
	uint64_t addr;
	const char *file;
	uint32_t line;
	uint32_t order; /* original position, to keep sequence order on ties */
};

struct sym_symbol {
	uint64_t addr;
	uint64_t limit; /* end of the symbol's section: nothing past it is this symbol */
	uint32_t function;
	uint32_t rank; /* among aliases at one address the highest rank names it */
};

/* Sorted start addresses of one table, paged for fast search. */
struct sym_keys {
	uint64_t *keys;
	size_t n;
	uint64_t base;
	unsigned shift;
	size_t npages;
	uint32_t *page_first; /* npages + 1 entries */
};

struct sym_index {
	struct sym_function *functions;
	uint32_t nfunctions, functions_cap;
	struct sym_node *nodes;
	uint32_t nnodes, nodes_cap;
	struct sym_range *ranges; /* while building: every range of every node */
	size_t nranges, ranges_cap;
	struct sym_range *segments; /* after sym_index_finish: disjoint, sorted */
	size_t nsegments;
	struct sym_range *unit_ranges; /* code of the compile units (merged) */
	size_t nunit_ranges, unit_ranges_cap;
	struct sym_row *rows;
	size_t nrows, rows_cap;
	struct sym_symbol *symbols;
	size_t nsymbols, symbols_cap;
	struct sym_keys segment_keys, unit_keys, row_keys, symbol_keys;
	int has_inlines;
	int has_dwarf; /* at least one CU */
};

uint32_t sym_add_function(struct sym_index *ix, const char *linkage_name, const char *file,
			  uint32_t line);
uint32_t sym_add_node(struct sym_index *ix, uint32_t function, uint32_t parent,
		      const char *call_file, uint32_t call_line);
void sym_add_range(struct sym_index *ix, uint64_t lo, uint64_t hi, uint32_t node, uint32_t depth);
void sym_add_row(struct sym_index *ix, uint64_t addr, const char *file, uint32_t line);
/* Line rows only answer inside a compile unit's code, as addr2line's do. */
void sym_add_unit_range(struct sym_index *ix, uint64_t lo, uint64_t hi);
void sym_add_symbol(struct sym_index *ix, uint64_t addr, uint64_t limit, uint32_t function,
		    uint32_t rank);
/* Sort everything and flatten nested ranges into disjoint segments. */
void sym_index_finish(struct sym_index *ix);
void sym_index_free(struct sym_index *ix);
/* Innermost node at addr, SYM_NONE if none. */
uint32_t sym_find_node(const struct sym_index *ix, uint64_t addr);
/* Row for addr (NULL when no line info covers it). */
const struct sym_row *sym_find_row(const struct sym_index *ix, uint64_t addr);
/* Symbol containing addr (SYM_NONE if none). */
uint32_t sym_find_symbol_function(const struct sym_index *ix, uint64_t addr);

/* symbolize_dwarf.c: index the DWARF of debug_path. Returns 0 on success
 * (even with zero CUs: ix->has_dwarf says), -1 when it cannot be read or is
 * too damaged to hand to libdwarf. */
int sym_dwarf_load(struct sym_index *ix, struct sym_strings *st, const char *debug_path);

/* symbolize_sections.c: a debug file's sections, decompressed once, for the
 * line decoder and (through its object interface) libdwarf */
struct sym_section;
struct sym_sections {
	void *elf; /* Elf * */
	int fd;
	struct sym_section *sections;
	size_t nsections;
	int pointer_size, big_endian;
	void *access; /* Dwarf_Obj_Access_Interface handed to libdwarf */
	void *inflater; /* struct libdeflate_decompressor *, made on first use */
	/* for the line decoder, NULL (size 0) when absent */
	const uint8_t *line, *line_str, *str;
	size_t line_size, line_str_size, str_size;
};
/* Open path's sections (reading the three the line decoder needs); -1 if
 * it is not a readable ELF file. Close even after a failed open. */
int sym_sections_open(struct sym_sections *s, const char *path);
void sym_sections_close(struct sym_sections *s);
/* Contents of section name, decompressed; NULL when absent or unreadable. */
const uint8_t *sym_section_data(struct sym_sections *s, const char *name, size_t *size);
/* 1 when libdwarf can walk .debug_rnglists' headers without looping. */
int sym_sections_lists_sane(struct sym_sections *s);
/* dwarf_object_init_b over these sections into *(Dwarf_Debug *)dbg: 0 or
 * -1. Finish with dwarf_object_finish before sym_sections_close. */
int sym_sections_dwarf(struct sym_sections *s, void *dbg);

/* symbolize_dies.c: stepping through a unit's DIEs in the .debug_info bytes */
struct sym_abbrev;
struct sym_spec;
struct sym_unit_header {
	uint64_t unit_offset;   /* of the unit header in .debug_info */
	uint64_t end;           /* offset of the next unit */
	uint64_t abbrev_offset; /* in .debug_abbrev */
	unsigned version, offset_size, address_size;
};
struct sym_unit {
	const uint8_t *info; /* .debug_info */
	uint64_t unit_offset, end;
	unsigned version, offset_size, address_size;
	struct sym_abbrev *abbrevs; /* by code */
	size_t nabbrevs, abbrevs_cap;
	struct sym_spec *specs;
	size_t nspecs, specs_cap;
};
struct sym_die {
	uint64_t offset;   /* in .debug_info, as dwarf_offdie_b takes it */
	uint64_t children; /* offset just past the attributes: the first child */
	uint64_t sibling;  /* DW_AT_sibling when it leads forward, else 0 */
	unsigned tag;
	int has_children;
	int addresses; /* has DW_AT_low_pc or DW_AT_ranges: may have code */
};
/* Read the unit's abbreviations into u (zeroed before the first unit, then
 * reused): 0, or -1 when the unit is not one this reader can step through
 * (then walk it with libdwarf). Close after the last unit. */
int sym_unit_open(struct sym_unit *u, struct sym_sections *s, const struct sym_unit_header *h);
void sym_unit_close(struct sym_unit *u);
/* Read the DIE at *pos and advance *pos past its attributes: 0, 1 for the
 * null entry that ends a list of siblings, -1 when damaged. */
int sym_die_read(const struct sym_unit *u, uint64_t *pos, struct sym_die *die);
/* From *pos = die->children, move *pos to the DIE after die and its
 * children: 0, or -1 when damaged. */
int sym_die_next(const struct sym_unit *u, const struct sym_die *die, uint64_t *pos);

/* symbolize_lines.c: line tables decoded from .debug_line */
/* A CU's file names (full paths, interned) as DW_AT_decl_file numbers them. */
struct sym_file_table {
	const char **names;
	size_t count;
	int one_based; /* DWARF 2-4: index 0 means "no file" */
};
/* Map path's line sections (and check its list headers); -1 if not ELF. */
/* Decode the line table at offset in .debug_line: its file names into files
 * (caller frees files->names) and, when ix is non-NULL, its rows; with
 * add_unit_ranges each sequence is also a unit range (for CUs without
 * ranges). 0, or -1 when malformed (rows decoded so far are kept). */
int sym_lines_decode(const struct sym_sections *d, uint64_t offset, const char *comp_dir,
		     struct sym_strings *st, struct sym_file_table *files, struct sym_index *ix,
		     int add_unit_ranges);
/* Name of file index in t, NULL when out of range. */
const char *sym_file_name(const struct sym_file_table *t, uint64_t index);

/* symbolize_elf.c */
struct sym_elf_info {
	int readable;
	int open_errno; /* when not readable: why (file.h's open_regular_file), 0 not ELF */
	uint8_t build_id[64];
	size_t build_id_len;
	int has_debug_info; /* a .debug_info with contents */
	int has_symtab;
	char debuglink[256]; /* "" when none */
};
/* What the ELF file at path says about itself; readable = 0 if it is not ELF. */
void sym_elf_inspect(const char *path, struct sym_elf_info *info);
/* Path of the file holding DWARF for the module at path (maybe path itself),
 * or "" when none: the file, then by build-id, then by debuglink, in
 * /usr/lib/debug and each debug dir. */
void sym_elf_find_debug_file(const char *path, const struct sym_elf_info *info,
			     const char *const *debug_dirs, int ndebug_dirs, char *out,
			     size_t out_len);
/* Add the function symbols of path (.symtab, else .dynsym); count added. */
size_t sym_elf_load_symbols(struct sym_index *ix, struct sym_strings *st, const char *path);

#endif
