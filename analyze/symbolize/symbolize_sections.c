/*
 * symbolize_sections.c - a debug file's sections, read through libelf and
 * decompressed at most once, for the DWARF readers (symbolize_dies.c,
 * symbolize_lines.c, symbolize_ranges.c), which read the bytes directly.
 *
 * Sections that never help name code (.debug_loc, .debug_loclists:
 * variable locations, a quarter of libc's DWARF) are never touched.
 *
 * Compressed sections are inflated here with libdeflate rather than by
 * libelf's elf_compress (zlib's streaming inflate): the compression header
 * gives the exact size, so one whole-buffer call does it, faster. The buffer
 * is mapped with its pages already present: touching fresh pages one fault at
 * a time was costly too on a virtual machine (bench/README.md, "analyze:
 * symbolizing").
 */
#include "symbolize_internal.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <libdeflate.h>

#include "file.h"

struct sym_section {
	char name[64]; /* "" for sections never read */
	GElf_Shdr shdr;
	uint64_t size; /* decompressed */
	int zlib_gnu;  /* .zdebug_*: GNU-style compression */
	int loaded;
	const uint8_t *data;
	uint8_t *inflated; /* data, when we decompressed it (ours to free) */
};

/* Sections whose contents never help name code. */
static int unwanted(const char *name)
{
	return strcmp(name, ".debug_loclists") == 0 || strcmp(name, ".debug_loc") == 0;
}

/* Decompressed size of a section, from its compression header. */
static uint64_t plain_size(Elf_Scn *scn, const GElf_Shdr *shdr, int zlib_gnu)
{
	if (shdr->sh_type == SHT_NOBITS)
		return 0;
	if (shdr->sh_flags & SHF_COMPRESSED) {
		GElf_Chdr chdr;
		return gelf_getchdr(scn, &chdr) != NULL ? chdr.ch_size : 0;
	}
	if (zlib_gnu) { /* "ZLIB" then the size, 8 bytes big-endian */
		Elf_Data *raw = elf_rawdata(scn, NULL);
		if (raw == NULL || raw->d_size < 12 || memcmp(raw->d_buf, "ZLIB", 4) != 0)
			return 0;
		uint64_t size = 0;
		for (int i = 4; i < 12; i++)
			size = size << 8 | ((const uint8_t *)raw->d_buf)[i];
		return size;
	}
	return shdr->sh_size;
}

int sym_sections_open(struct sym_sections *s, const char *path)
{
	memset(s, 0, sizeof(*s));
	s->fd = open_regular_file(path); /* the trace names it: it may be a FIFO */
	if (s->fd < 0 || elf_version(EV_CURRENT) == EV_NONE)
		return -1;
	/* Mapped: only the sections asked for are touched, and elf_compress
	 * puts their decompressed bytes in buffers of its own. */
	Elf *elf = elf_begin(s->fd, ELF_C_READ_MMAP, NULL);
	size_t shstrndx, count;
	if (elf == NULL || elf_getshdrstrndx(elf, &shstrndx) != 0 || elf_getshdrnum(elf, &count) != 0 ||
	    count > 0xffff) {
		if (elf != NULL)
			elf_end(elf);
		return -1;
	}
	s->elf = elf;
	s->pointer_size = gelf_getclass(elf) == ELFCLASS32 ? 4 : 8;
	const char *ident = elf_getident(elf, NULL);
	s->big_endian = ident != NULL && ident[EI_DATA] == ELFDATA2MSB;
	s->sections = calloc(count ? count : 1, sizeof(*s->sections));
	if (s->sections == NULL)
		return -1;
	s->nsections = count;
	for (size_t i = 1; i < count; i++) {
		struct sym_section *sec = &s->sections[i];
		Elf_Scn *scn = elf_getscn(elf, i);
		const char *name;
		if (scn == NULL || gelf_getshdr(scn, &sec->shdr) == NULL ||
		    (name = elf_strptr(elf, shstrndx, sec->shdr.sh_name)) == NULL)
			continue;
		/* .zdebug_info is read as the .debug_info it holds. */
		sec->zlib_gnu = strncmp(name, ".zdebug_", 8) == 0;
		snprintf(sec->name, sizeof(sec->name), "%s%s", sec->zlib_gnu ? ".debug_" : "",
			 sec->zlib_gnu ? name + 8 : name);
		if (unwanted(sec->name))
			sec->name[0] = '\0';
		sec->size = plain_size(scn, &sec->shdr, sec->zlib_gnu);
	}
	return 0;
}

void sym_sections_close(struct sym_sections *s)
{
	if (s->elf != NULL)
		elf_end(s->elf);
	if (s->fd >= 0)
		close(s->fd);
	for (size_t i = 0; i < s->nsections; i++)
		if (s->sections[i].inflated != NULL)
			munmap(s->sections[i].inflated, s->sections[i].size);
	free(s->sections);
	if (s->inflater != NULL)
		libdeflate_free_decompressor(s->inflater);
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}

/*
 * Inflate a zlib-compressed section whole into a buffer of its exact size:
 * the stream follows the ELF compression header (ELFCOMPRESS_ZLIB) or, in
 * .zdebug_*, "ZLIB" and the size. 1 done, 0 damaged, -1 not a kind handled
 * here (left to libelf).
 */
static int inflate_section(struct sym_sections *s, Elf_Scn *scn, struct sym_section *sec)
{
	size_t skip;
	if (sec->zlib_gnu) {
		skip = 12;
	} else {
		GElf_Chdr chdr;
		if (gelf_getchdr(scn, &chdr) == NULL || chdr.ch_type != ELFCOMPRESS_ZLIB)
			return -1;
		skip = s->pointer_size == 4 ? sizeof(Elf32_Chdr) : sizeof(Elf64_Chdr);
	}
	Elf_Data *raw = elf_rawdata(scn, NULL);
	if (raw == NULL || raw->d_buf == NULL || raw->d_size < skip || sec->size == 0 ||
	    (uint64_t)(size_t)sec->size != sec->size)
		return 0;
	if (s->inflater == NULL)
		s->inflater = libdeflate_alloc_decompressor();
	if (s->inflater == NULL)
		return -1;
	/* A damaged header can claim any size: a buffer is only allocated
	 * when the claim is within what deflate can expand to (1032:1). */
	size_t in_size = raw->d_size - skip;
	if (sec->size / 1032 > in_size)
		return 0;
	uint8_t *out = mmap(NULL, sec->size, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (out == MAP_FAILED)
		return 0;
	if (libdeflate_zlib_decompress(s->inflater, (const uint8_t *)raw->d_buf + skip, in_size,
				       out, sec->size, NULL) != LIBDEFLATE_SUCCESS) {
		munmap(out, sec->size);
		return 0;
	}
	sec->inflated = out;
	sec->data = out;
	return 1;
}

/* Bytes of section i, decompressed on first use; NULL when unreadable. */
static const uint8_t *load(struct sym_sections *s, size_t i)
{
	struct sym_section *sec = &s->sections[i];
	if (sec->loaded)
		return sec->data;
	sec->loaded = 1;
	Elf_Scn *scn = elf_getscn(s->elf, i);
	if (scn == NULL || sec->shdr.sh_type == SHT_NOBITS)
		return NULL;
	int compressed = sec->zlib_gnu || (sec->shdr.sh_flags & SHF_COMPRESSED);
	if (compressed) {
		int res = inflate_section(s, scn, sec);
		if (res >= 0)
			return sec->data;
	}
	if (sec->zlib_gnu ? elf_compress_gnu(scn, 0, 0) < 0
			  : compressed && elf_compress(scn, 0, 0) < 0)
		return NULL;
	Elf_Data *data = elf_getdata(scn, NULL);
	if (data == NULL || data->d_buf == NULL || data->d_size != sec->size)
		return NULL;
	sec->data = data->d_buf;
	return sec->data;
}

const uint8_t *sym_section_data(struct sym_sections *s, const char *name, size_t *size)
{
	*size = 0;
	for (size_t i = 1; i < s->nsections; i++) {
		if (strcmp(s->sections[i].name, name) != 0)
			continue;
		const uint8_t *data = load(s, i);
		*size = data != NULL ? s->sections[i].size : 0;
		return data;
	}
	return NULL;
}

struct sym_slice sym_section_slice(struct sym_sections *s, const char *name)
{
	size_t size;
	const uint8_t *data = sym_section_data(s, name, &size);
	return (struct sym_slice){.data = data, .size = data != NULL ? size : 0};
}

uint64_t sym_section_address(const struct sym_sections *s, const char *name)
{
	for (size_t i = 1; i < s->nsections; i++)
		if (strcmp(s->sections[i].name, name) == 0)
			return s->sections[i].shdr.sh_addr;
	return 0;
}
