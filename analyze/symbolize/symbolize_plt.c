/*
 * symbolize_plt.c - names for PLT stubs: "malloc@plt" instead of
 * module+0xoffset, as objdump, perf and gdb name them, so that a sample in
 * the jump to a library function reads as a call to it.
 *
 * No symbol covers a stub; what a stub jumps through is its GOT slot, and
 * the dynamic relocation of that slot (R_X86_64_JUMP_SLOT in .rela.plt, or
 * R_X86_64_GLOB_DAT in .rela.dyn for .plt.got) names the function. Each
 * stub of .plt, .plt.sec (IBT) and .plt.got is decoded for its
 * "jmp *slot(%rip)" (ff 25, after an endbr64 or bnd prefix when present),
 * which works whatever order the linker put the slots in. Only x86-64 is
 * decoded; other machines keep module+offset for their stubs.
 */
#include "symbolize_internal.h"

#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "file.h"

struct slot_name {
	uint64_t got; /* address of the GOT slot */
	const char *name;
};

static int compare_slots(const void *a, const void *b)
{
	uint64_t x = ((const struct slot_name *)a)->got, y = ((const struct slot_name *)b)->got;
	return (x > y) - (x < y);
}

/* Append the named slots a relocation section fills. */
static void add_relocations(Elf *elf, Elf_Scn *scn, const GElf_Shdr *shdr, struct slot_name **slots,
			    size_t *n, size_t *cap)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	Elf_Scn *symtab = elf_getscn(elf, shdr->sh_link);
	GElf_Shdr sym_shdr;
	Elf_Data *syms = symtab != NULL ? elf_getdata(symtab, NULL) : NULL;
	if (data == NULL || syms == NULL || gelf_getshdr(symtab, &sym_shdr) == NULL ||
	    shdr->sh_entsize == 0)
		return;
	size_t count = shdr->sh_size / shdr->sh_entsize;
	for (size_t i = 0; i < count; i++) {
		GElf_Rela rela;
		GElf_Sym sym;
		if (gelf_getrela(data, (int)i, &rela) == NULL)
			break;
		unsigned type = (unsigned)GELF_R_TYPE(rela.r_info);
		size_t index = GELF_R_SYM(rela.r_info);
		if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) || index == 0 ||
		    gelf_getsym(syms, (int)index, &sym) == NULL)
			continue;
		const char *name = elf_strptr(elf, sym_shdr.sh_link, sym.st_name);
		if (name == NULL || name[0] == '\0')
			continue;
		ALLOC_GROW(*slots, *n + 1, *cap);
		(*slots)[(*n)++] = (struct slot_name){.got = rela.r_offset, .name = name};
	}
}

static const char *slot_lookup(const struct slot_name *slots, size_t n, uint64_t got)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (slots[mid].got < got)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && slots[lo].got == got ? slots[lo].name : NULL;
}

/* Name each stub of one PLT section; returns how many were named. */
static size_t name_stubs(struct sym_index *ix, struct sym_strings *st, Elf_Scn *scn,
			 const GElf_Shdr *shdr, const struct slot_name *slots, size_t nslots)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	if (data == NULL || data->d_buf == NULL || data->d_size < shdr->sh_size)
		return 0;
	uint64_t size = shdr->sh_entsize >= 8 && shdr->sh_entsize <= 64 ? shdr->sh_entsize : 16;
	const uint8_t *bytes = data->d_buf;
	size_t named = 0;
	for (uint64_t at = 0; at + size <= shdr->sh_size; at += size) {
		const char *name = NULL;
		for (uint64_t j = 0; j + 6 <= size && name == NULL; j++) {
			if (bytes[at + j] != 0xff || bytes[at + j + 1] != 0x25)
				continue;
			int32_t disp;
			memcpy(&disp, bytes + at + j + 2, 4);
			uint64_t next = shdr->sh_addr + at + j + 6;
			name = slot_lookup(slots, nslots, next + (uint64_t)(int64_t)disp);
		}
		if (name == NULL)
			continue; /* PLT0, or a stub this decoder does not know */
		char buf[512];
		snprintf(buf, sizeof(buf), "%.*s@plt", (int)strcspn(name, "@"), name);
		uint32_t fn = sym_add_function(ix, sym_intern(st, buf), NULL, 0);
		sym_add_symbol(ix, shdr->sh_addr + at, size, shdr->sh_addr + shdr->sh_size, fn,
			       UINT32_MAX, 0);
		named++;
	}
	return named;
}

size_t sym_elf_load_plt(struct sym_index *ix, struct sym_strings *st, const char *path)
{
	int fd = open_regular_file(path); /* the trace names it: it may be a FIFO */
	if (fd < 0 || elf_version(EV_CURRENT) == EV_NONE) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	GElf_Ehdr ehdr;
	size_t shstrndx, named = 0;
	if (elf == NULL || gelf_getehdr(elf, &ehdr) == NULL || ehdr.e_machine != EM_X86_64 ||
	    elf_getshdrstrndx(elf, &shstrndx) != 0) {
		if (elf != NULL)
			elf_end(elf);
		close(fd);
		return 0;
	}
	struct slot_name *slots = NULL;
	size_t nslots = 0, cap = 0;
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn != NULL; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr shdr;
		if (gelf_getshdr(scn, &shdr) != NULL && shdr.sh_type == SHT_RELA)
			add_relocations(elf, scn, &shdr, &slots, &nslots, &cap);
	}
	if (nslots > 1)
		qsort(slots, nslots, sizeof(*slots), compare_slots);
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn != NULL && nslots > 0;
	     scn = elf_nextscn(elf, scn)) {
		GElf_Shdr shdr;
		const char *name;
		if (gelf_getshdr(scn, &shdr) == NULL || shdr.sh_type != SHT_PROGBITS ||
		    !(shdr.sh_flags & SHF_EXECINSTR) ||
		    (name = elf_strptr(elf, shstrndx, shdr.sh_name)) == NULL)
			continue;
		if (strcmp(name, ".plt") == 0 || strcmp(name, ".plt.sec") == 0 ||
		    strcmp(name, ".plt.got") == 0)
			named += name_stubs(ix, st, scn, &shdr, slots, nslots);
	}
	free(slots);
	elf_end(elf);
	close(fd);
	return named;
}
