/*
 * frametab_internal.h - what frametab.c (the published set and the walk),
 * frametab_build.c (an object's rows built and published) and
 * frametab_fde.c (.eh_frame read into rows) share.
 */
#ifndef IPSCOPE_FRAMETAB_INTERNAL_H
#define IPSCOPE_FRAMETAB_INTERNAL_H

#include <link.h>
#include <stddef.h>
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

/* The object's .eh_frame_hdr and its segments (not its fingerprint): 0, or -1 when it has none usable. delta:
 * where the header's segment is read, less its address in the image (0: the image itself; collect -p reads
 * another process's objects from their files). Not in a handler. */
int frametab_find_object(const struct dl_phdr_info *info, uint64_t delta, struct object *o);
/* A hash of the header and its table, which tells apart two objects mapped at one address in turn. */
uint64_t frametab_fingerprint(const struct object *o);
/* Copy what building its rows reads (inside the loader's callback: the image is mapped then), so they can
 * be built after it returns: 0, or -1 (out of memory). Not in a handler. */
int frametab_copy_object(struct object *o);
/* Unmap that copy (none: nothing). */
void frametab_drop_copy(struct object *o);
/* Its rows in a read-only mapping of their own, or NULL (no usable FDE, out of memory). Not in a handler. */
const struct rows *frametab_build_rows(const struct object *o);
/* Unmap rows frametab_build_rows made (collect -p, when the object is gone; the agent never does: readers
 * may hold them). */
void frametab_free_rows(const struct rows *t);
/* The rows of its pcs [lo, hi) alone, as frametab_build_rows would say them there (NULL: none there, or out
 * of memory); reads the image itself when o has no copy (inside the loader's callback). Not in a handler. */
const struct rows *frametab_build_block(const struct object *o, uint64_t lo, uint64_t hi);

/* The row for pc in t, or NULL (none: outside it, or in a gap before its first row). */
static inline const struct row *frametab_row_of(const struct rows *t, uint64_t pc)
{
	if (pc < t->base || pc >= t->end)
		return NULL;
	uint64_t off = pc - t->base;
	uint64_t page = off >> PAGE_SHIFT;
	if (page + 1 >= t->npages)
		return NULL;
	uint32_t lo = t->pages[page], hi = t->pages[page + 1];
	if (hi >= t->nrows || lo > hi)
		return NULL;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo + 1) / 2;
		if (t->rows[mid].start <= off)
			lo = mid;
		else
			hi = mid - 1;
	}
	return t->rows[lo].start <= off ? &t->rows[lo] : NULL;
}

#endif
