/*
 * symbolize_internal.h - what the symbolizer's files share: the per-module
 * index (functions, inline tree, address segments, line rows, symbols) and
 * the string pool every name and path is interned in.
 *
 * The index is built once per module (symbolize_dwarf.c, symbolize_elf.c),
 * then sorted and flattened (symbolize_index.c) so that a lookup is three
 * binary searches: segment -> innermost node, line row, symbol. Code no
 * symbol names is bounded by the FDE ranges (symbolize_fde.c), read on
 * first need.
 */
#ifndef IPSCOPE_SYMBOLIZE_INTERNAL_H
#define IPSCOPE_SYMBOLIZE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "hashmap.h"

#define SYM_NONE UINT32_MAX

/* Tables grow with ALLOC_GROW (alloc.h): out of memory ends the process,
 * as for every table analyze builds. */

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
/* s interned with its control characters replaced by '?': names and paths
 * from a binary are shown on terminals, and must not drive them. */
const char *sym_intern_printable(struct sym_strings *st, const char *s);

struct sym_function {
	const char *linkage_name; /* as in the binary */
	const char *display_name; /* computed on first lookup (demangling is costly) */
	const char *parameters_name; /* the display name with C++ parameters, likewise */
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
	uint64_t size;  /* 0: unknown (assembly): it runs to the next symbol */
	uint64_t limit; /* end of its section; after sym_index_finish, of the symbol */
	uint32_t function;
	uint32_t rank; /* among aliases at one address the highest rank names it */
	uint32_t label; /* STT_NOTYPE: a label, hidden inside a sized function */
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
	struct hashmap public_names; /* internal alias name (pointer) -> public function */
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
/* A symbol [addr, addr + size) in a section ending at limit (size 0:
 * unknown, up to the next symbol); label: an STT_NOTYPE label. */
void sym_add_symbol(struct sym_index *ix, uint64_t addr, uint64_t size, uint64_t limit,
		    uint32_t function, uint32_t rank, int label);
/* Sort everything and flatten nested ranges into disjoint segments. */
void sym_index_finish(struct sym_index *ix);
void sym_index_free(struct sym_index *ix);
/* Innermost node at addr, SYM_NONE if none. */
uint32_t sym_find_node(const struct sym_index *ix, uint64_t addr);
/* Row for addr (NULL when no line info covers it). */
const struct sym_row *sym_find_row(const struct sym_index *ix, uint64_t addr);
/* Symbol containing addr (SYM_NONE if none). */
uint32_t sym_find_symbol_function(const struct sym_index *ix, uint64_t addr);
/* The symbol whose extent [addr, limit) holds addr, NULL if none. */
const struct sym_symbol *sym_find_symbol(const struct sym_index *ix, uint64_t addr);
/* The public function named by the symbol table at the address where the
 * function called name (interned) is an internal alias (__libc_malloc ->
 * malloc), SYM_NONE when name is no such alias. */
uint32_t sym_find_public_name(const struct sym_index *ix, const char *name);

/* A part of a section (a whole section, or one unit's contribution in a .dwp). */
struct sym_slice {
	const uint8_t *data; /* NULL (size 0) when absent */
	uint64_t size;
};

/* symbolize_sections.c: a file's sections, decompressed once */
struct sym_section;
struct sym_sections {
	void *elf; /* Elf * */
	int fd;
	struct sym_section *sections;
	size_t nsections;
	int pointer_size, big_endian;
	void *inflater; /* struct libdeflate_decompressor *, made on first use */
};
/* Open path's sections: 0, or -1 if it is not a readable ELF regular file.
 * Close even after a failed open. */
int sym_sections_open(struct sym_sections *s, const char *path);
void sym_sections_close(struct sym_sections *s);
/* Contents of section name, decompressed; NULL when absent or unreadable. */
const uint8_t *sym_section_data(struct sym_sections *s, const char *name, size_t *size);
/* The same as a slice (empty when absent). */
struct sym_slice sym_section_slice(struct sym_sections *s, const char *name);
/* Address section name is loaded at (sh_addr), 0 when absent. */
uint64_t sym_section_address(const struct sym_sections *s, const char *name);

/* The string sections a line table's file names may point into. */
struct sym_line_sections {
	struct sym_slice line, line_str, str;
};

/*
 * symbolize_dfile.c: one file of DWARF (a debug file, its dwz supplementary
 * file, a split .dwo or a .dwp package) with its table of units.
 */
struct sym_abbrevs;
struct sym_dwp;
struct sym_unit;

struct sym_dwarf {
	char *path;
	int dwo; /* a .dwo or .dwp: its sections are named .debug_*.dwo */
	struct sym_sections sections;
	struct sym_slice info, abbrev, str, line_str, str_offsets, addr, ranges, rnglists, line;
	struct sym_dwarf *sup; /* the dwz supplementary file, NULL when none */
	struct sym_unit *units; /* in offset order */
	size_t nunits, units_cap;
	struct hashmap abbrev_index; /* abbrev offset -> abbrev_tables index */
	struct sym_abbrevs **abbrev_tables;
	size_t nabbrev_tables, abbrev_tables_cap;
	struct hashmap functions; /* DIE offset -> function index */
	int budgeted; /* its sections' sizes are in the loader's work budget */
	uint64_t abbrev_bytes_left; /* what parsing abbreviation tables may still read */
	/* a .dwo's split units by DWO id (symbolize_links.c), made on first
	 * need; split_ids_state: 0 not yet, 1 made, 2 made and some unit has an id */
	struct hashmap split_ids;
	int split_ids_state;
	struct sym_dwp *dwp;     /* a .dwp's unit index, NULL otherwise */
};

/* One unit: its header and, once opened, what its root DIE says. */
struct sym_unit {
	struct sym_dwarf *d; /* the file it is in */
	uint64_t offset, end, first_die; /* in d's .debug_info */
	uint64_t abbrev_offset;          /* in d's .debug_abbrev, dwp contribution added */
	uint64_t dwo_id;                 /* DWARF 5 skeleton and split units' header */
	unsigned version, unit_type, offset_size, address_size;
	uint32_t row;  /* .dwp: its row of the unit index; SYM_NONE otherwise */
	int state;     /* 0: header only; 1: opened; -1: cannot be read */
	int walked;    /* a split unit: its DIEs are in the index (once, whatever
			  the number of skeletons naming it) */
	const struct sym_abbrevs *abbrevs;
	/* what indexed forms need (split units: filled from the skeleton) */
	struct sym_slice str_offsets;    /* from the unit's base */
	struct sym_dwarf *addr_file;     /* whose .debug_addr addrx indexes */
	uint64_t addr_base;
	struct sym_slice rnglists;       /* this unit's .debug_rnglists (contribution) */
	uint64_t rnglists_base;          /* offsets table within rnglists (rnglistx) */
	uint64_t ranges_base;            /* DWARF 4 split units: added to DW_AT_ranges */
	uint64_t base_address;           /* the unit's low_pc: base of its range lists */
	const char *comp_dir;
	struct sym_line_sections line_sections; /* where its file names are */
	uint64_t stmt_list;              /* its line table in line_sections.line */
	int has_stmt_list;
	struct sym_file_table *files;    /* read on first use, NULL before */
};

/* What one DIE says, for the attributes the symbolizer reads. */
enum sym_attr_slot {
	SYM_AT_NAME, SYM_AT_LINKAGE_NAME, SYM_AT_ABSTRACT_ORIGIN, SYM_AT_SPECIFICATION,
	SYM_AT_DECL_FILE, SYM_AT_DECL_LINE, SYM_AT_CALL_FILE, SYM_AT_CALL_LINE,
	SYM_AT_LOW_PC, SYM_AT_HIGH_PC, SYM_AT_RANGES, SYM_AT_STMT_LIST, SYM_AT_COMP_DIR,
	SYM_AT_DWO_NAME, SYM_AT_DWO_ID, SYM_AT_STR_OFFSETS_BASE, SYM_AT_ADDR_BASE,
	SYM_AT_RNGLISTS_BASE, SYM_AT_GNU_RANGES_BASE, SYM_AT_COUNT
};
struct sym_value {
	uint16_t form; /* 0: absent */
	uint64_t u;    /* the value as stored (offset, index, constant, address) */
	const char *inline_string; /* DW_FORM_string */
};
struct sym_die {
	uint64_t offset;   /* in .debug_info */
	uint64_t children; /* offset just past the attributes: the first child */
	uint64_t sibling;  /* DW_AT_sibling when it leads forward, else 0 */
	unsigned tag;
	int has_children;
	int addresses; /* has DW_AT_low_pc or DW_AT_ranges: may have code */
	uint32_t abbrev; /* its abbreviation code */
};

/* Open path as a DWARF file (dwo: sections named .debug_*.dwo); NULL when
 * it is not a readable ELF file. Its units are listed, not yet opened. */
struct sym_dwarf *sym_dwarf_open(const char *path, int dwo);
void sym_dwarf_close(struct sym_dwarf *d);
const char *sym_dwarf_path(const struct sym_dwarf *d);
struct sym_sections *sym_dwarf_sections(struct sym_dwarf *d);
size_t sym_dwarf_nunits(const struct sym_dwarf *d);
struct sym_unit *sym_dwarf_unit(struct sym_dwarf *d, size_t i);
/* The unit holding .debug_info offset, NULL if none. */
struct sym_unit *sym_dwarf_unit_at(struct sym_dwarf *d, uint64_t offset);
/* Set or get the supplementary (dwz) file strp_alt/ref_alt forms point into. */
void sym_dwarf_set_sup(struct sym_dwarf *d, struct sym_dwarf *sup);
struct sym_dwarf *sym_dwarf_sup(const struct sym_dwarf *d);
/* .dwp: the unit of the split compile unit dwo_id, NULL if none. */
struct sym_unit *sym_dwarf_find_dwo_unit(struct sym_dwarf *d, uint64_t dwo_id);
/* Function index of the DIE at offset, SYM_NONE before it is known. */
uint32_t *sym_dwarf_function_slot(struct sym_dwarf *d, uint64_t offset);
/* Read u's abbreviations and, unless split (bases come from the skeleton),
 * the bases its root DIE gives: 0, or -1 when the unit is unreadable. */
int sym_unit_open(struct sym_unit *u, struct sym_strings *st);
/* Give opened split unit u what its skeleton knows (address table, range
 * base, compile directory, and its file names when u has none). */
void sym_unit_inherit(struct sym_unit *u, const struct sym_unit *skeleton);

/* symbolize_dies.c: DIEs and attribute values, straight from the bytes */
/* Parse the abbreviation table at offset of abbrev, reading at most
 * *budget bytes (less what it read on return); NULL when damaged, using a
 * form that cannot be stepped over, or beyond the budget. */
struct sym_abbrevs *sym_abbrevs_parse(struct sym_slice abbrev, uint64_t offset,
				      const struct sym_unit *u, uint64_t *budget);
void sym_abbrevs_free(struct sym_abbrevs *a);
/* Does a use a form that may refer into another unit of the file (DW_FORM_ref_addr, or
 * DW_FORM_indirect, which could be one)? */
int sym_abbrevs_foreign(const struct sym_abbrevs *a);
/* Read the DIE at *pos and advance *pos past its attributes: 0, 1 for the
 * null entry that ends a list of siblings, -1 when damaged. */
int sym_die_read(const struct sym_unit *u, uint64_t *pos, struct sym_die *die);
/* The attributes of die the symbolizer reads, by slot: 0, or -1 if damaged. */
int sym_die_values(const struct sym_unit *u, const struct sym_die *die,
		   struct sym_value values[SYM_AT_COUNT]);
/* From *pos = die->children, move *pos to the DIE after die and its
 * children: 0, or -1 when damaged. */
int sym_die_next(const struct sym_unit *u, const struct sym_die *die, uint64_t *pos);
/* A string value (NULL when absent or unreadable). */
const char *sym_value_string(const struct sym_unit *u, const struct sym_value *v);
/* A constant (1) or not (0). */
int sym_value_unsigned(const struct sym_value *v, uint64_t *out);
/* An address, resolving addrx through .debug_addr: 1, or 0. */
int sym_value_address(const struct sym_unit *u, const struct sym_value *v, uint64_t *out);
/* A reference: the file and .debug_info offset it points to: 1, or 0. */
int sym_value_reference(const struct sym_unit *u, const struct sym_value *v,
			struct sym_dwarf **file, uint64_t *offset);
/* 1 when v's form points into the supplementary file. */
int sym_form_is_sup(unsigned form);

/* symbolize_ranges.c: the code ranges of a DIE */
struct sym_range_list {
	uint64_t (*ranges)[2];
	size_t n, cap;
	/* List entries still to be read, over every list of a load (the caller
	 * sets it from the sections' sizes): DIEs of a crafted file may all
	 * name one long list, which would cost DIEs x entries. */
	uint64_t entries_left;
};
/* Append the ranges low_pc/high_pc or DW_AT_ranges give (values of the DIE
 * in u) to out; returns how many were added. */
size_t sym_die_ranges(const struct sym_unit *u, const struct sym_value *values,
		      struct sym_range_list *out);

/* symbolize_links.c: the supplementary and split DWARF files of a debug file */
struct sym_search;
struct sym_links {
	const struct sym_search *search;
	const char *debug_path;
	struct sym_dwarf *sup, *dwp; /* owned */
	uint8_t sup_id[64];          /* the supplementary file's build-id or checksum */
	size_t sup_id_len;
	int dwp_tried;
	struct sym_dwarf **dwos; /* .dwo files opened so far, owned */
	size_t ndwos, dwos_cap;
	char problem[4400]; /* the first problem, naming the file */
	unsigned nproblems;
};
/* Record a problem (only the first one's text is kept). */
void sym_problem(struct sym_links *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Find, check and link d's dwz supplementary file: 0 when d needs none,
 * 1 when linked, -1 when it is needed but unusable (problem recorded). */
int sym_links_find_sup(struct sym_links *l, struct sym_dwarf *d, const char *debug_path);
/* The split unit of skeleton (values: its root's), NULL (problem recorded)
 * when its .dwo/.dwp is missing, damaged or of another build. */
struct sym_unit *sym_links_split_unit(struct sym_links *l, const struct sym_unit *skeleton,
				      const struct sym_value *values, struct sym_strings *st);
/* Tell search->used of the files that were read, then free them. */
void sym_links_free(struct sym_links *l);

/* symbolize_dwarf.c: index the DWARF of debug_path. Returns 0 on success
 * (even with zero CUs: ix->has_dwarf says), -1 when it cannot be read.
 * warning gets "" or one line about what could not be used (a missing
 * supplementary or split DWARF file, naming it). With want (nwant sorted
 * addresses), the functions of units whose code holds none of them may be
 * left out: *partial says whether some were (lookups elsewhere then need
 * a load without want); rows, unit ranges and the index's flags are as a
 * whole load makes them. */
int sym_dwarf_load(struct sym_index *ix, struct sym_strings *st, const char *debug_path,
		   const struct sym_search *search, const uint64_t *want, size_t nwant, int *partial,
		   char *warning, size_t warning_len);

/* symbolize_lines.c: line tables decoded from .debug_line */
/* A CU's file names (full paths, interned) as DW_AT_decl_file numbers them. */
struct sym_file_table {
	const char **names;
	size_t count;
	int one_based; /* DWARF 2-4: index 0 means "no file" */
};
/* Decode the line table at offset in ls->line: its file names into files
 * (caller frees files->names) and, when ix is non-NULL, its rows; with
 * add_unit_ranges each sequence is also a unit range (for CUs without
 * ranges). 0, or -1 when malformed (rows decoded so far are kept). */
int sym_lines_decode(const struct sym_line_sections *ls, uint64_t offset, const char *comp_dir,
		     struct sym_strings *st, struct sym_file_table *files, struct sym_index *ix,
		     int add_unit_ranges);
/* Name of file index in t, NULL when out of range. */
const char *sym_file_name(const struct sym_file_table *t, uint64_t index);

/* symbolize_debuginfod.c: debug files by build-id from DEBUGINFOD_URLS */
typedef void (*sym_progress_fn)(void *ctx, const char *what, uint64_t done, uint64_t total,
				int finished);
struct sym_debuginfod;
/* A client, or NULL when DEBUGINFOD_URLS is unset or empty (nothing to ask). */
struct sym_debuginfod *sym_debuginfod_new(double timeout_s, sym_progress_fn progress,
					  void *progress_ctx);
void sym_debuginfod_free(struct sym_debuginfod *d);
/* A sym_search.fetch: the local path of the debug file of build-id (a
 * candidate the caller must check): 0, or -1 (sym_debuginfod_problem says
 * why, "" when the servers simply do not have it). */
int sym_debuginfod_fetch(void *d, const uint8_t *id, size_t len, const char *what, char *out,
			 size_t out_len);
const char *sym_debuginfod_problem(const struct sym_debuginfod *d);

/* symbolize_elf.c */
/* Where files a module's DWARF refers to are looked for. */
struct sym_search {
	const char *const *debug_dirs; /* --debug-dir and --search-dir, in order */
	int ndebug_dirs;
	const char *module_path;       /* the module (a .dwp is beside it) */
	const uint8_t *build_id;       /* the module's, for DIR/.build-id/xx/yyyy.dwp */
	size_t build_id_len;
	/* each auxiliary file DWARF was read from ("sup" with its id, "dwp",
	 * "dwo"), for analyze archive; NULL: not wanted */
	void (*used)(void *ctx, const char *kind, const char *path, const uint8_t *id, size_t len);
	void *used_ctx;
	/* debuginfod: fetch the debug file of build-id into a local path
	 * (what: the module it is for, for progress lines): 0, or -1. NULL: off. */
	int (*fetch)(void *ctx, const uint8_t *build_id, size_t len, const char *what, char *out,
		     size_t out_len);
	void *fetch_ctx;
};
struct sym_elf_info {
	int readable;
	int open_errno; /* when not readable: why (file.h's open_regular_file), 0 not ELF */
	uint8_t build_id[64];
	size_t build_id_len;
	int has_debug_info; /* a .debug_info with contents */
	int has_symtab;
	char debuglink[256]; /* "" when none */
};
/* DIR/.build-id/xx/yyyy SUFFIX into out: 1, or 0 when it does not fit. */
int sym_elf_build_id_path(const char *dir, const uint8_t *id, size_t len, const char *suffix,
			  char *out, size_t out_len);
/* 1 when candidate holds DWARF for the module want describes (its build-id,
 * when both have one). */
int sym_elf_debug_file_matches(const char *candidate, const struct sym_elf_info *want);
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
/* symbolize_locate.c: the file of a traced module, checked by build-id */
enum { SYM_LOCATE_FOUND, SYM_LOCATE_MISSING, SYM_LOCATE_MISMATCH };
/* The recorded path, else the module under a search dir (by build-id, by
 * path, by base name): FOUND with its path in out and info filled; MISSING
 * or MISMATCH (some file had another build-id) with why in one line. */
int sym_locate_module(const char *recorded, const uint8_t *id, size_t len,
		      const char *const *dirs, int ndirs, char *out, size_t out_len,
		      struct sym_elf_info *info, char *why, size_t why_len);
/* symbolize_plt.c: name path's PLT stubs "function@plt"; count named. */
size_t sym_elf_load_plt(struct sym_index *ix, struct sym_strings *st, const char *path);

/* symbolize_fde.c: function bounds from the call frame information */
struct sym_code_range {
	uint64_t lo, hi;
};
struct sym_code_ranges {
	struct sym_code_range *ranges; /* after sym_code_ranges_finish: sorted, one per start */
	size_t n, cap;
	uint64_t *starts; /* their starts, for the binary search */
};
/* Add the range of each FDE of path's .eh_frame and .debug_frame to r
 * (damaged entries skipped). */
void sym_fde_load(struct sym_code_ranges *r, const char *path);
/* The same for the bytes of one frame section loaded at address (eh:
 * .eh_frame, else .debug_frame; pointer_size 4 or 8). */
void sym_fde_parse(struct sym_code_ranges *r, const uint8_t *data, uint64_t size, uint64_t address, int eh,
		   unsigned pointer_size);
/* Sort r for lookups. */
void sym_code_ranges_finish(struct sym_code_ranges *r);
/* The range [*lo, *hi) holding addr: 1, or 0 when none does. */
int sym_code_range_find(const struct sym_code_ranges *r, uint64_t addr, uint64_t *lo, uint64_t *hi);
void sym_code_ranges_free(struct sym_code_ranges *r);

#endif
