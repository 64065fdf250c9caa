/*
 * symbolize_fde.c - the bounds of functions no symbol names, from the call
 * frame information: each FDE of .eh_frame (which `strip` keeps, the
 * unwinder needs it) and of .debug_frame covers [pc_begin, pc_begin +
 * pc_range) of one function, so code of a stripped library is grouped by
 * function (liblzma.so.5+0x15b40) rather than shown per address, and
 * analyze source --asm (disasm.c) disassembles the whole of it. The
 * extent is the FDE's own: not the range of one row of its CFA table
 * (what libdw's dwarf_cfi_addrframe answers), which is a part of it.
 *
 * .eh_frame is walked entry by entry rather than through .eh_frame_hdr's
 * table: the table gives starts but not ends, which only the FDEs hold.
 * Compilers emit one FDE per function, and one per split-off part (a .cold
 * part reads as a function of its own, as its symbol would with
 * --keep-clones). An FDE spanning several functions (hand-written assembly
 * with one CFI region around many entry points) names them all by its
 * start: what the FDE says is all that is known (so does the linker's one
 * FDE for all of .plt: stubs symbolize_plt.c cannot name read as .plt's
 * start). Overlapping FDEs (only in damaged files) answer by the nearest
 * start below an address, when its range reaches it.
 *
 * The file comes from a trace, which is untrusted: every read is
 * bounds-checked, lengths and offsets are checked against the section,
 * and an entry that does not parse is skipped (a damaged length ends the
 * walk). Little-endian only, as the DWARF readers.
 */
#include "symbolize_internal.h"
#include "symbolize_cursor.h"

#include <stdlib.h>
#include <string.h>

#include "search.h"

/* Pointer encodings (DW_EH_PE_*, LSB 10.6.1.1): the format in the low
 * nibble, what it is relative to in bits 4-6, 0x80 an indirection. */
enum {
	PE_ABSPTR = 0x00, PE_ULEB128 = 0x01, PE_UDATA2 = 0x02, PE_UDATA4 = 0x03, PE_UDATA8 = 0x04,
	PE_SLEB128 = 0x09, PE_SDATA2 = 0x0a, PE_SDATA4 = 0x0b, PE_SDATA8 = 0x0c,
	PE_PCREL = 0x10, PE_OMIT = 0xff,
};

/* Sign-extend the n-byte value v. */
static uint64_t sign_extend(uint64_t v, unsigned n)
{
	unsigned bits = 8 * n;
	return bits < 64 && (v >> (bits - 1) & 1) ? v | ~(uint64_t)0 << bits : v;
}

/*
 * A pointer in encoding enc at c (address: where c->p is in memory, for
 * pcrel; pointer_size for absptr). Encodings relative to the text, data or
 * function, and indirect ones, never name an FDE's start in files seen in
 * practice: they mark c bad (the FDE is skipped).
 */
static uint64_t pointer(struct sym_cursor *c, unsigned enc, uint64_t address, unsigned pointer_size)
{
	uint64_t v;
	switch (enc & 0x0f) {
	case PE_ABSPTR: v = cursor_fixed(c, pointer_size); break;
	case PE_ULEB128: v = cursor_uleb(c); break;
	case PE_UDATA2: v = cursor_fixed(c, 2); break;
	case PE_UDATA4: v = cursor_fixed(c, 4); break;
	case PE_UDATA8: v = cursor_fixed(c, 8); break;
	case PE_SLEB128: v = (uint64_t)cursor_sleb(c); break;
	case PE_SDATA2: v = sign_extend(cursor_fixed(c, 2), 2); break;
	case PE_SDATA4: v = sign_extend(cursor_fixed(c, 4), 4); break;
	case PE_SDATA8: v = cursor_fixed(c, 8); break;
	default: c->bad = 1; return 0;
	}
	switch (enc & 0x70) {
	case 0: break;
	case PE_PCREL: v += address; break;
	default: c->bad = 1; return 0;
	}
	if (enc & 0x80)
		c->bad = 1;
	return v;
}

/* What an FDE needs of its CIE. */
struct cie {
	uint64_t offset; /* in the section; UINT64_MAX: none parsed yet */
	int ok;
	unsigned fde_enc;
	unsigned address_size;
};

/* One frame section: its bytes, where it is loaded, and its kind. */
struct frame_section {
	const uint8_t *data;
	uint64_t size, address;
	int eh; /* .eh_frame (else .debug_frame): CIE ids, CIE pointers and encodings differ */
	unsigned pointer_size;
};

/* Parse the CIE at offset into cie (cie->ok = 0 when it is unusable). */
static void parse_cie(const struct frame_section *fs, uint64_t offset, struct cie *cie)
{
	memset(cie, 0, sizeof(*cie));
	cie->offset = offset;
	cie->fde_enc = PE_ABSPTR; /* unless 'R' says otherwise */
	cie->address_size = fs->pointer_size;
	if (offset >= fs->size)
		return;
	struct sym_cursor c = {fs->data + offset, fs->data + fs->size, 0};
	unsigned id_size;
	uint64_t length = cursor_initial_length(&c, &id_size);
	if (c.bad || length < id_size || length > (uint64_t)(c.end - c.p))
		return;
	c.end = c.p + length;
	uint64_t id = cursor_fixed(&c, id_size);
	uint64_t want = fs->eh ? 0 : id_size == 8 ? UINT64_MAX : 0xffffffff;
	unsigned version = (unsigned)cursor_fixed(&c, 1);
	if (c.bad || id != want || (version != 1 && version != 3 && version != 4))
		return;
	/* The augmentation: real ones are a few letters ("zR", "zPLR", "zPLRS"). */
	const uint8_t *nul = memchr(c.p, 0, (size_t)(c.end - c.p) < 16 ? (size_t)(c.end - c.p) : 16);
	if (nul == NULL)
		return;
	const char *aug = (const char *)c.p;
	c.p = nul + 1;
	if (version == 4) {
		cie->address_size = (unsigned)cursor_fixed(&c, 1);
		if (cursor_fixed(&c, 1) != 0 || (cie->address_size != 4 && cie->address_size != 8))
			return; /* segment selectors: none in practice */
	}
	cursor_uleb(&c);       /* code alignment */
	cursor_sleb(&c);       /* data alignment */
	if (version == 1)
		cursor_fixed(&c, 1); /* return address register */
	else
		cursor_uleb(&c);
	if (aug[0] != 'z') {
		/* No augmentation data: only "" is understood (.debug_frame's). */
		cie->ok = !c.bad && aug[0] == '\0';
		return;
	}
	uint64_t aug_length = cursor_uleb(&c);
	if (c.bad || aug_length > (uint64_t)(c.end - c.p))
		return;
	struct sym_cursor a = {c.p, c.p + aug_length, 0};
	for (const char *k = aug + 1; *k != '\0' && !a.bad; k++) {
		if (*k == 'R') {
			cie->fde_enc = (unsigned)cursor_fixed(&a, 1);
		} else if (*k == 'L') {
			cursor_fixed(&a, 1);
		} else if (*k == 'P') {
			/* The personality routine, unused: only its size matters, so
			 * whatever it is relative to (and an indirection) is no matter. */
			unsigned enc = (unsigned)cursor_fixed(&a, 1);
			pointer(&a, enc & 0x0f, 0, cie->address_size);
		} else if (*k != 'S' && *k != 'B' && *k != 'G') {
			/* An unknown letter: its data's size is unknown, and 'R' may follow. */
			return;
		}
	}
	cie->ok = !a.bad && cie->fde_enc != PE_OMIT;
}

static void add_range(struct sym_code_ranges *r, uint64_t lo, uint64_t hi)
{
	ALLOC_GROW(r->ranges, r->n + 1, r->cap);
	r->ranges[r->n].lo = lo;
	r->ranges[r->n].hi = hi;
	r->n++;
}

/* Add the range of every FDE of fs that parses. */
static void walk(struct sym_code_ranges *r, const struct frame_section *fs)
{
	struct cie cie = {.offset = UINT64_MAX};
	uint64_t at = 0;
	while (at < fs->size && fs->size - at >= 4) {
		struct sym_cursor c = {fs->data + at, fs->data + fs->size, 0};
		unsigned id_size;
		uint64_t length = cursor_initial_length(&c, &id_size);
		if (length == 0 && fs->eh)
			break; /* the terminator */
		if (c.bad || length > (uint64_t)(c.end - c.p))
			break; /* a damaged length: nothing after it can be trusted */
		uint64_t next = (uint64_t)(c.p - fs->data) + length;
		c.end = c.p + length;
		uint64_t id_at = (uint64_t)(c.p - fs->data);
		uint64_t id = cursor_fixed(&c, id_size);
		uint64_t cie_id = fs->eh ? 0 : id_size == 8 ? UINT64_MAX : 0xffffffff;
		if (!c.bad && id != cie_id) {
			/* An FDE: .eh_frame points back from the id field, .debug_frame
			 * gives the CIE's offset. */
			uint64_t cie_at = fs->eh ? (id <= id_at ? id_at - id : UINT64_MAX) : id;
			if (cie_at != cie.offset)
				parse_cie(fs, cie_at, &cie);
			if (cie.ok) {
				uint64_t address = fs->address + (uint64_t)(c.p - fs->data);
				uint64_t begin = pointer(&c, cie.fde_enc, address, cie.address_size);
				uint64_t range = pointer(&c, cie.fde_enc & 0x0f, 0, cie.address_size);
				/* Begin 0: an FDE of code the linker discarded. */
				if (!c.bad && begin != 0 && range != 0 && begin + range > begin)
					add_range(r, begin, begin + range);
			}
		}
		at = next;
	}
}

void sym_fde_parse(struct sym_code_ranges *r, const uint8_t *data, uint64_t size, uint64_t address, int eh,
		   unsigned pointer_size)
{
	struct frame_section fs = {data, size, address, eh, pointer_size == 4 ? 4 : 8};
	walk(r, &fs);
}

/* The FDEs of one file's frame section name (eh: .eh_frame). */
static void load_section(struct sym_code_ranges *r, struct sym_sections *s, const char *name, int eh)
{
	size_t size;
	const uint8_t *data = sym_section_data(s, name, &size);
	if (data != NULL)
		sym_fde_parse(r, data, size, sym_section_address(s, name), eh, (unsigned)s->pointer_size);
}

void sym_fde_load(struct sym_code_ranges *r, const char *path)
{
	struct sym_sections s;
	if (sym_sections_open(&s, path) == 0) {
		load_section(r, &s, ".eh_frame", 1);
		load_section(r, &s, ".debug_frame", 0);
	}
	sym_sections_close(&s);
}

static int compare_ranges(const void *a, const void *b)
{
	const struct sym_code_range *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return (x->hi < y->hi) - (x->hi > y->hi); /* the widest first: it is kept */
}

void sym_code_ranges_finish(struct sym_code_ranges *r)
{
	if (r->n > 1)
		qsort(r->ranges, r->n, sizeof(*r->ranges), compare_ranges);
	/* One range per start (.eh_frame and .debug_frame both describe the code). */
	size_t kept = 0;
	for (size_t i = 0; i < r->n; i++)
		if (kept == 0 || r->ranges[kept - 1].lo != r->ranges[i].lo)
			r->ranges[kept++] = r->ranges[i];
	r->n = kept;
	r->starts = realloc_or_abort(NULL, (r->n ? r->n : 1) * sizeof(*r->starts));
	for (size_t i = 0; i < r->n; i++)
		r->starts[i] = r->ranges[i].lo;
}

int sym_code_range_find(const struct sym_code_ranges *r, uint64_t addr, uint64_t *lo, uint64_t *hi)
{
	size_t n = u64_first_above(r->starts, 0, r->n, addr);
	if (n == 0 || addr >= r->ranges[n - 1].hi)
		return 0;
	*lo = r->ranges[n - 1].lo;
	*hi = r->ranges[n - 1].hi;
	return 1;
}

void sym_code_ranges_free(struct sym_code_ranges *r)
{
	free(r->ranges);
	free(r->starts);
	memset(r, 0, sizeof(*r));
}
