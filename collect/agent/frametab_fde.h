/*
 * frametab_fde.h - what frametab_build.c (which FDEs, into which rows) and
 * frametab_fde.c (one FDE's CFA program into rows) share: the builder the
 * rows grow in, with the CIE it last parsed.
 */
#ifndef IPSCOPE_FRAMETAB_FDE_H
#define IPSCOPE_FRAMETAB_FDE_H

#include "frametab_internal.h"

enum where { W_SAME, W_UNDEF, W_CFAREL, W_OTHER };

struct rule {
	uint8_t where;
	int64_t off;
};

struct cfa_state {
	uint64_t cfa_reg; /* DWARF register: 6 rbp, 7 rsp */
	int64_t cfa_off;
	int cfa_expr;
	struct rule rbp, rsp, ra;
};

struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;
	int has_z, signal;
	const uint8_t *insns, *end;
};

struct builder {
	struct row *rows;
	uint32_t nrows, capacity;
	size_t bytes;
	uint64_t base, delta; /* delta: the object's (struct object) */
	const uint8_t *floor; /* the start of the segment holding .eh_frame, as read: no CIE lies below it */
	uint64_t limit; /* rows from here on are not this table's (a block's end; UINT64_MAX: none) */
	int clip; /* a block: a row that starts before base holds from base */
	int failed;
	/* The last CIE, parsed and its initial instructions run: FDEs share a few CIEs, in runs. */
	const uint8_t *cie_at;
	int cie_parsed, cie_ok;
	struct cie cie;
	struct cfa_state cie_state;
};

/* One FDE's rows into b (at the FDE's bytes fde; limit: the end of the segment holding .eh_frame): 1 when it
 * said anything, 0 when skipped (a gap: libunwind's). Not in a handler. */
int frametab_add_fde(struct builder *b, const uint8_t *fde, const uint8_t *limit);

#endif
