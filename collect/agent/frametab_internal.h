/*
 * frametab_internal.h - what frametab.c (the published set and the walk)
 * and frametab_build.c (.eh_frame into rows) share.
 */
#ifndef IPSCOPE_FRAMETAB_INTERNAL_H
#define IPSCOPE_FRAMETAB_INTERNAL_H

#include <link.h>
#include <stdint.h>

#define PAGE_SHIFT 10 /* the index's granule: rows of one KiB of text */

/* ROW_SIGNAL: an FDE of a signal trampoline (augmentation "S"), stepped through by its ucontext. */
enum row_kind { ROW_NONE, ROW_RSP, ROW_RBP, ROW_END, ROW_OTHER, ROW_SIGNAL };

struct row {
	uint32_t start; /* pc offset from the table's base: this row holds from here to the next */
	int32_t cfa_off;
	int16_t rbp_off; /* where rbp was saved, from the CFA; 0: not saved (unchanged) */
	uint8_t kind;
	uint8_t pad;
};

/* One object's rows, built once into a read-only mapping. */
struct rows {
	uint64_t base, end; /* the pcs its FDEs cover */
	uint32_t nrows, npages;
	const struct row *rows;
	const uint32_t *pages; /* pages[i]: the last row starting at or before i KiB from base */
};

/* A loaded object as its program headers describe it. */
struct object {
	uint64_t bias, hdr, eh_frame, seg_lo, seg_hi, text_lo, text_hi, fingerprint; /* addresses in the image */
	uint64_t table; /* the header's sorted (initial location, FDE) pairs */
	uint64_t fde_count;
	void *copy; /* frametab_copy_object's, or NULL: the image itself is read */
	size_t copy_bytes;
	uint64_t delta; /* the copy's address less the image's */
};

/* The object's .eh_frame_hdr and its segments: 0, or -1 when it has none usable. Not in a handler. */
int frametab_find_object(const struct dl_phdr_info *info, struct object *o);
/* Copy what building its rows reads (inside the loader's callback: the image is mapped then), so they can
 * be built after it returns: 0, or -1 (out of memory). Not in a handler. */
int frametab_copy_object(struct object *o);
/* Unmap that copy (none: nothing). */
void frametab_drop_copy(struct object *o);
/* Its rows in a read-only mapping of their own, or NULL (no usable FDE, out of memory). Not in a handler. */
const struct rows *frametab_build_rows(const struct object *o);

#endif
