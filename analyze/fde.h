/*
 * fde.h - the extents of the functions a module's .eh_frame describes, one
 * FDE each: what gives stripped code (no symbol table) its function bounds
 * for analyze source --asm (disasm.c).
 *
 * libdw frames the entries (dwarf_next_cfi); what it leaves to its caller,
 * an FDE's initial location and range in its CIE's pointer encoding, is
 * decoded here (absolute and pc-relative, fixed-size and LEB128: what
 * compilers emit). libdw's dwarf_cfi_addrframe would not do: it answers
 * with the range of one row of the CFA table, not of the whole FDE.
 * The section is untrusted: every read is bounded by its size.
 */
#ifndef IPSCOPE_FDE_H
#define IPSCOPE_FDE_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

struct fde_range {
	uint64_t lo, hi;
};

struct fde_table {
	struct fde_range *ranges; /* sorted by lo */
	size_t n;
};

/* The FDEs of elf's .eh_frame (none when it has no readable one). */
void fde_table_read(struct fde_table *t, Elf *elf);
/* The extent [*lo, *hi) of an FDE holding vaddr: 1, or 0 when none does. */
int fde_table_find(const struct fde_table *t, uint64_t vaddr, uint64_t *lo, uint64_t *hi);
void fde_table_free(struct fde_table *t);

#endif
