/*
 * fuzz_symbolize.h - what the symbolizer's two libFuzzer targets share
 * (fuzz_symbolize_elf.c: a whole ELF file; fuzz_symbolize_dwarf.c: DWARF
 * sections of a module and its dwz, .dwo and .dwp files): the input's
 * header, the directory the files are written to, and one symbolization of
 * them the way analyze does it, with the API's contract checked.
 *
 * The symbolizer reads files by path (libelf maps them; dwz and split DWARF
 * are found by name beside the module), so each input is written out as
 * files rather than parsed from memory.
 *
 * Every input starts with a header the seeds fill from a real binary:
 *
 *   u8  options   FUZZ_SYM_* bits: how analyze is configured
 *   u8  n         addresses to look up (at most FUZZ_SYM_MAX_ADDRS)
 *   u64 addr[n]   little-endian ELF virtual addresses
 *
 * A shorter input is ignored.
 */
#ifndef IPSCOPE_FUZZ_SYMBOLIZE_H
#define IPSCOPE_FUZZ_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

#define FUZZ_SYM_MAX_ADDRS 8

enum {
	FUZZ_SYM_WANT = 1,        /* open for the addresses (symbolizer_module_for), then
				     look up others too: the partial load and its reload */
	FUZZ_SYM_DEMANGLE = 2,    /* analyze's default */
	FUZZ_SYM_KEEP_CLONES = 4, /* --keep-clones */
	FUZZ_SYM_FULL_NAMES = 8,  /* --full-names */
	FUZZ_SYM_RAW_NAMES = 16,  /* --raw-names */
	FUZZ_SYM_ELF32 = 32,      /* fuzz_symbolize_dwarf: write ELFCLASS32 files */
};

/* File names the DWARF target writes and the symbolizer looks for: the
 * module (which holds its own DWARF), its dwz supplementary file (named
 * relative to it), its .dwo (found by base name in the debug directory,
 * the seeds' compile directory being one that does not exist) and its
 * .dwp (beside the module). */
#define FUZZ_SYM_MODULE "m"
#define FUZZ_SYM_SUP "sup.debug"
#define FUZZ_SYM_DWO "w.dwo"
#define FUZZ_SYM_DWP "m.dwp"

/*
 * fuzz_symbolize_dwarf's records name a section by its index here (modulo
 * the count). In the .dwo and .dwp files, the first FUZZ_SYM_DWO_SUFFIXED
 * are named with ".dwo" after them, as the split files name the sections
 * of their own. FUZZ_SYM_SECTION_NAMES is an initializer list:
 * make_symbolize_corpus.c writes what the target reads.
 */
#define FUZZ_SYM_SECTION_NAMES                                                                   \
	".debug_info", ".debug_abbrev", ".debug_line", ".debug_str", ".debug_str_offsets",        \
		".debug_rnglists", ".debug_line_str", ".debug_addr", ".debug_ranges",              \
		".gnu_debugaltlink", ".debug_sup", ".note.gnu.build-id", ".debug_cu_index",        \
		".eh_frame", ".debug_frame"
#define FUZZ_SYM_DWO_SUFFIXED 6
enum { FUZZ_SYM_FILE_MODULE, FUZZ_SYM_FILE_SUP, FUZZ_SYM_FILE_DWO, FUZZ_SYM_FILE_DWP, FUZZ_SYM_FILES };
/* A record's flags. */
enum {
	FUZZ_SYM_COMPRESSED = 1, /* SHF_COMPRESSED, zlib */
	FUZZ_SYM_ZDEBUG = 2,     /* .zdebug_*: GNU "ZLIB" compression */
	FUZZ_SYM_NOBITS = 4,     /* SHT_NOBITS, as a stripped file's or a debug file's code */
};

struct fuzz_sym_input {
	unsigned options;
	uint64_t addrs[FUZZ_SYM_MAX_ADDRS];
	size_t naddrs;
	const uint8_t *rest; /* what follows the header */
	size_t rest_len;
};

/* Split data into its header and the rest: 1, or 0 when too short. */
int fuzz_sym_header(const uint8_t *data, size_t size, struct fuzz_sym_input *in);

/* The directory the files are written to, made on first use (removed at exit). */
const char *fuzz_sym_dir(void);

/* Write (len bytes of data) or, with data NULL, remove name in fuzz_sym_dir(). */
void fuzz_sym_write(const char *name, const void *data, size_t len);

/* Symbolize in->addrs in FUZZ_SYM_MODULE as analyze does, checking the
 * answers: a broken contract traps. */
void fuzz_sym_run(const struct fuzz_sym_input *in);

/* Abort (a crash libFuzzer reports) unless ok, saying which check failed. */
#define fuzz_sym_require(ok) fuzz_sym_check((ok) != 0, #ok, __FILE__, __LINE__)
void fuzz_sym_check(int ok, const char *what, const char *file, int line);

#endif
