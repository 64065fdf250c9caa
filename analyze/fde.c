/*
 * fde.c - FDE extents from .eh_frame (fde.h).
 */
#include "fde.h"

#include <elfutils/libdw.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

#define PE_OMIT 0xffu

/* One encoded pointer at *p (the field at address field) in encoding enc: 0, or -1 when it cannot be read. */
static int read_encoded(const uint8_t **p, const uint8_t *end, uint8_t enc, uint64_t field, int wide, uint64_t *out)
{
	const uint8_t *q = *p;
	uint64_t v = 0;
	int64_t sv;
	size_t size = 0;
	switch (enc & 0x0f) {
	case 0x00: size = wide ? 8 : 4; break;
	case 0x02: case 0x0a: size = 2; break;
	case 0x03: case 0x0b: size = 4; break;
	case 0x04: case 0x0c: size = 8; break;
	case 0x01: case 0x09: { /* LEB128 */
		unsigned shift = 0;
		uint8_t byte = 0x80;
		while (q < end && (byte & 0x80) && shift < 64) {
			byte = *q++;
			v |= (uint64_t)(byte & 0x7f) << shift;
			shift += 7;
		}
		if (byte & 0x80)
			return -1;
		if ((enc & 0x0f) == 0x09 && shift < 64 && (byte & 0x40))
			v |= ~(uint64_t)0 << shift;
		break;
	}
	default:
		return -1;
	}
	if (size) {
		if ((size_t)(end - q) < size)
			return -1;
		memcpy(&v, q, size); /* little-endian only: fde_table_read checks */
		q += size;
		if ((enc & 0x08) && size < 8) { /* signed: sign-extend */
			sv = (int64_t)(v << (64 - 8 * size)) >> (64 - 8 * size);
			v = (uint64_t)sv;
		}
	}
	switch (enc & 0x70) {
	case 0x00: break;
	case 0x10: v += field; break; /* pc-relative */
	default: return -1;           /* data-, text-, function-relative: not in .eh_frame in practice */
	}
	if (enc & 0x80) /* indirect: the value is where the pointer is, not in the file's code */
		return -1;
	*p = q;
	*out = v;
	return 0;
}

/* The FDE pointer encoding of cie ('R' of its augmentation), or PE_OMIT when not understood. */
static uint8_t cie_encoding(const Dwarf_CIE *cie, int wide)
{
	const char *aug = cie->augmentation;
	if (!aug || !*aug)
		return 0x00;
	if (aug[0] != 'z' || !cie->augmentation_data)
		return PE_OMIT;
	const uint8_t *p = cie->augmentation_data, *end = p + cie->augmentation_data_size;
	for (const char *c = aug + 1; *c; c++) {
		uint64_t ignored;
		if (*c == 'R')
			return p < end ? *p : PE_OMIT;
		if (*c == 'L' && p < end)
			p++;
		else if (*c == 'P' && p < end) {
			uint8_t enc = *p++;
			if (read_encoded(&p, end, enc & 0x0f, 0, wide, &ignored) < 0)
				return PE_OMIT;
		} else if (*c != 'S' && *c != 'B')
			return PE_OMIT;
	}
	return 0x00;
}

static int by_lo(const void *a, const void *b)
{
	const struct fde_range *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

void fde_table_read(struct fde_table *t, Elf *elf)
{
	memset(t, 0, sizeof(*t));
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	size_t shstrndx;
	if (!ident || ident[EI_DATA] != ELFDATA2LSB || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return;
	int wide = ident[EI_CLASS] == ELFCLASS64;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		const char *name;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_PROGBITS &&
		    (name = elf_strptr(elf, shstrndx, sh.sh_name)) && !strcmp(name, ".eh_frame"))
			break;
	}
	Elf_Data *data = scn ? elf_getdata(scn, NULL) : NULL;
	if (!data || !data->d_buf)
		return;
	const uint8_t *base = data->d_buf;
	size_t cap = 0;
	Dwarf_Off off = 0, next, cie_off = (Dwarf_Off)-1;
	uint8_t enc = PE_OMIT;
	Dwarf_CFI_Entry e;
	while (dwarf_next_cfi(ident, data, true, off, &next, &e) == 0) {
		if (!dwarf_cfi_cie_p(&e)) {
			Dwarf_CFI_Entry c;
			Dwarf_Off ignored;
			if (e.fde.CIE_pointer != cie_off) { /* FDEs of one CIE come in runs */
				cie_off = e.fde.CIE_pointer;
				enc = dwarf_next_cfi(ident, data, true, cie_off, &ignored, &c) == 0 && dwarf_cfi_cie_p(&c)
					      ? cie_encoding(&c.cie, wide)
					      : PE_OMIT;
			}
			const uint8_t *p = e.fde.start;
			uint64_t lo, len;
			if (enc != PE_OMIT &&
			    read_encoded(&p, e.fde.end, enc, sh.sh_addr + (uint64_t)(e.fde.start - base), wide, &lo) == 0 &&
			    read_encoded(&p, e.fde.end, enc & 0x0f, 0, wide, &len) == 0 && len && lo + len > lo) {
				ALLOC_GROW(t->ranges, t->n + 1, cap);
				t->ranges[t->n++] = (struct fde_range){lo, lo + len};
			}
		}
		if (next == (Dwarf_Off)-1 || next <= off)
			break;
		off = next;
	}
	qsort(t->ranges, t->n, sizeof(*t->ranges), by_lo);
}

int fde_table_find(const struct fde_table *t, uint64_t vaddr, uint64_t *lo, uint64_t *hi)
{
	size_t a = 0, b = t->n; /* the last FDE starting at or below vaddr */
	while (a < b) {
		size_t mid = a + (b - a) / 2;
		if (t->ranges[mid].lo <= vaddr)
			a = mid + 1;
		else
			b = mid;
	}
	if (a == 0 || vaddr >= t->ranges[a - 1].hi)
		return 0;
	*lo = t->ranges[a - 1].lo;
	*hi = t->ranges[a - 1].hi;
	return 1;
}

void fde_table_free(struct fde_table *t)
{
	free(t->ranges);
	memset(t, 0, sizeof(*t));
}
