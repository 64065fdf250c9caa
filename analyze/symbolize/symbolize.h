/*
 * symbolize.h - turn addresses in a traced module into inline chains of
 * (function, file, line), from DWARF (read here: symbolize_dwarf.c and its
 * neighbours, libdwarf giving only dwarf.h's constants) or, without it, from
 * the ELF symbol tables (libelf).
 *
 * Debug files are looked for beside the module, by build-id and by
 * .gnu_debuglink in /usr/lib/debug and each debug dir, then fetched from
 * the debuginfod servers DEBUGINFOD_URLS names (unless offline); dwz
 * supplementary files and split DWARF (.dwo, .dwp) are followed.
 *
 * Each module is opened and indexed once; lookups are binary searches. A module
 * whose file is missing or whose build-id differs from the traced one answers
 * every lookup with 0 frames, so the caller prints module+0xoffset instead of
 * a wrong name. Code of a usable module that no symbol names is bounded by
 * its FDEs (symbol_module_code_extent): the caller names it by the start of
 * its function, and disassembles it to the end.
 */
#ifndef IPSCOPE_SYMBOLIZE_H
#define IPSCOPE_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

struct symbolizer_options {
	const char *const *debug_dirs; /* --debug-dir, searched by build-id and debuglink */
	int ndebug_dirs;
	/* --search-dir: modules whose recorded file is missing or another build
	 * are looked for there (by build-id, by path, by base name); their
	 * debug files too */
	const char *const *search_dirs;
	int nsearch_dirs;
	int demangle;    /* 0: keep linkage names as in the binary (--no-demangle) */
	int keep_clones; /* 0: merge .part.N/.isra.N/.constprop.N/.cold/.lto_priv.N */
	int full_names;  /* C++: return type and parameters too (--full-names) */
	int raw_names;   /* 0: an internal alias reads as its public name (__libc_malloc: malloc) */
	int offline;     /* 1: never ask debuginfod (--offline) */
	double debuginfod_timeout; /* seconds one build-id may take; 0: 30 */
	/* A debuginfod download under way (what: the module), finished = 1 at
	 * its end; called from lookups' module opening. NULL: no progress. */
	void (*progress)(void *ctx, const char *what, uint64_t done, uint64_t total, int finished);
	void *progress_ctx;
};

/* One entry of an inline chain. */
struct symbol_frame {
	const char *function;      /* display name (demangled, clones merged per options) */
	const char *function_parameters; /* the same with C++ parameters (no return
					    type), to tell overloads apart */
	const char *linkage_name;  /* as in the binary (mangled), or same as function */
	const char *file;          /* source file of this line, NULL unknown */
	uint32_t line;             /* 0 unknown */
	const char *function_file; /* file where the function is defined, NULL unknown */
	uint32_t function_line;    /* its DW_AT_decl_line, 0 unknown */
	int inlined;               /* 1 when this call was inlined into the next frame */
};

struct symbolizer;
struct symbol_module;

/* New symbolizer; options are copied. NULL on out of memory. */
struct symbolizer *symbolizer_new(const struct symbolizer_options *o);

/*
 * Open (once per path+build-id) the module that ran from path. Never NULL
 * unless out of memory: an unreadable module still gives a handle whose
 * lookups return 0. warning (if non-NULL) gets one line, or "" when all is
 * well: missing file, build-id mismatch, no (or damaged) debug info.
 */
struct symbol_module *symbolizer_module(struct symbolizer *s, const char *path,
					const uint8_t *build_id, size_t build_id_len,
					char *warning, size_t warning_len);

/*
 * symbolizer_module, where the lookups to come are of the n sorted addresses
 * vaddrs: the debug info of code holding none of them may be read only when
 * first asked for (a lookup elsewhere answers the same, later). vaddrs NULL:
 * symbolizer_module.
 */
struct symbol_module *symbolizer_module_for(struct symbolizer *s, const char *path, const uint8_t *build_id,
					    size_t build_id_len, const uint64_t *vaddrs, size_t n, char *warning,
					    size_t warning_len);

/*
 * symbolizer_module, names only: functions from the module's symbol tables (a separate debug file's full
 * .symtab where there is one), its DWARF neither read nor fetched, and no lines. For reports that show
 * none of its frames (analyze/load/load_stacks.c): libc's compressed DWARF was most of a small report's
 * time. A module opened before, either way, is returned as it is (one cache serves both calls: a caller
 * that may want a module's lines must not open it names only first).
 */
struct symbol_module *symbolizer_module_names(struct symbolizer *s, const char *path, const uint8_t *build_id,
					      size_t build_id_len, char *warning, size_t warning_len);

/* PROFILE_MODULE_* bits (formats/profile/profile.h) describing what m can resolve. */
unsigned symbol_module_flags(const struct symbol_module *m);

/* A file a module's names were read from. */
struct symbol_file {
	const char *kind; /* "module", "debug", "sup" (dwz), "dwp", "dwo" */
	const char *path; /* where it was read */
	uint8_t build_id[64]; /* the module's (module, debug, dwp), sup's own; dwo: none */
	size_t build_id_len;
};
/* Every file m was read from, the module's own first (none when unusable). */
size_t symbol_module_files(const struct symbol_module *m, const struct symbol_file **files);

/*
 * Inline chain for ELF virtual address vaddr (runtime address - load bias,
 * already ip-1 for return addresses), innermost first. Returns the number of
 * frames written (<= max), 0 when unknown. Strings live until symbolizer_free.
 */
int symbol_module_lookup(struct symbol_module *m, uint64_t vaddr,
			 struct symbol_frame *frames, int max);

/*
 * Where no symbol names the code at vaddr (symbol_module_lookup gave 0):
 * the extent [*lo, *hi) of the function holding it, as the FDEs of
 * .eh_frame and .debug_frame bound it (ELF virtual addresses, as vaddr):
 * 1, or 0 when no FDE covers vaddr or the module is unusable.
 */
int symbol_module_code_extent(struct symbol_module *m, uint64_t vaddr, uint64_t *lo, uint64_t *hi);

/*
 * The extent [*lo, *hi) of the symbol-table symbol holding vaddr (its size,
 * or up to the next symbol or its section's end when unsized), and its name
 * as lookups give it: 1, or 0 when no symbol holds vaddr (stripped code, or
 * m unusable).
 */
int symbol_module_symbol_extent(struct symbol_module *m, uint64_t vaddr, uint64_t *lo, uint64_t *hi,
				const char **name);

/* 1 when path is a system module (libc, libstdc++, ld.so, vdso, the agent...). */
int symbol_path_is_system(const char *path);

/* Free the symbolizer, its modules and every string lookups returned. */
void symbolizer_free(struct symbolizer *s);

#endif
