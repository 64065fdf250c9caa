/*
 * disasm.h - per-instruction costs for "analyze source --asm FUNCTION"
 * (render_asm.c prints them), as perf annotate and pprof -disasm have them.
 *
 * The charging rule: a stack's value goes to the instruction of its
 * innermost frame as the reports show it (below hidden system frames, the
 * call that led there; an allocation's, the call of malloc): the
 * instruction holding the sampled address, or, for a return address, the
 * call before it (PROFILE_LOCATION_RETURN). So a function's instructions
 * add up to its self cost in analyze flat, exactly.
 *
 * Which functions: those whose code holds some innermost frame whose
 * function (the outermost of its inline chain: the code's own symbol)
 * matches FUNCTION, as a substring or as a POSIX extended regular
 * expression, unanchored (pprof's -disasm takes a regex; the substring
 * lets "app+0x11a9", the name of stripped code, be typed as it is shown).
 * A function is the extent of its symbol; stripped code has none, and the
 * FDE holding the address gives it (symbol_module_code_extent: .eh_frame,
 * or .debug_frame of the module or its debug file), and its name is
 * module+0xSTART; code with neither (its file missing) is listed by
 * address alone, one listing per named function or per module.
 *
 * Bytes are read from the module file the symbolizer finds for the trace's
 * path and build-id (--search-dir, --debug-dir as for names; only regular
 * files are opened) through its program headers, and decoded by libcapstone
 * (the maintained disassembler packaged by Debian, used as a library: no
 * child process, no text to parse back; AT&T syntax as objdump's and
 * perf's). Nothing here prints: what went wrong is a function's note.
 */
#ifndef IPSCOPE_DISASM_H
#define IPSCOPE_DISASM_H

#include <stddef.h>
#include <stdint.h>

#include "load.h"
#include "profile.h"

#define DISASM_MAX_VALUES PROFILE_MAX_VALUE_TYPES

/* One instruction (or, without code, one charged address). */
struct disasm_insn {
	uint64_t vaddr;  /* ELF virtual address (runtime address - load bias) */
	uint32_t size;   /* bytes; 0: an address only, nothing decoded */
	uint32_t line;   /* innermost source line from debug info, 0 unknown */
	char *text;      /* "mnemonic operands", printable; "" without code */
};

enum disasm_bounds { DISASM_SYMBOL, DISASM_FDE, DISASM_ADDRESSES };

struct disasm_function {
	char *name;          /* the symbol's, module+0xLO for an FDE, else the matching frame's (untrusted: escape) */
	uint32_t module;     /* profile module */
	char *file;          /* the file the bytes were read from, NULL when none */
	uint64_t lo, hi;     /* its extent [lo, hi), ELF virtual addresses */
	enum disasm_bounds bounds;
	uint32_t function;   /* DISASM_ADDRESSES: the profile function whose addresses these are
				(UINT32_MAX: every unnamed address of the module) */
	struct disasm_insn *insns; /* in address order */
	uint32_t ninsns;
	int64_t *values;     /* per instruction, nvalues each */
	int64_t totals[DISASM_MAX_VALUES]; /* every charge inside [lo, hi) */
	char note[1024];     /* why there is no code, or less of it; "" when all is well */
};

struct disasm_table {
	uint32_t nvalues;
	struct disasm_function *functions; /* largest |total of value 0| first */
	uint32_t nfunctions;
};

/*
 * The functions of p matching pattern with the costs of nvalues value
 * types (types[k]) per instruction; lo names the debug and search dirs
 * and debuginfod settings the module files are found with. 0, or -1 when
 * no innermost frame's function matches (err says so, naming trace).
 */
int disasm_table_build(struct disasm_table *dt, const struct profile *p, const struct load_options *lo,
		       const char *pattern, const uint32_t *types, uint32_t nvalues, const char *trace, char *err,
		       size_t errlen);
void disasm_table_free(struct disasm_table *dt);

/* Value k of instruction i of f. */
static inline int64_t disasm_value(const struct disasm_table *dt, const struct disasm_function *f, uint32_t i,
				   uint32_t k)
{
	return f->values[(uint64_t)i * dt->nvalues + k];
}

#endif
