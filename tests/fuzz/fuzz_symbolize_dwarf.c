/*
 * fuzz_symbolize_dwarf.c - libFuzzer target for the symbolizer's DWARF
 * readers (analyze/symbolize/: units and abbreviations, DIEs and forms,
 * line tables, range lists, string offsets and address tables, dwz
 * supplementary files, split DWARF in .dwo files and .dwp packages), ctest
 * fuzz_symbolize_dwarf, built with -DIPSCOPE_FUZZ=ON and clang.
 *
 * Mutating a whole ELF file spends most of the fuzzer's work on headers
 * libelf refuses; here the input is the sections themselves, each free to
 * change size, and the target writes the ELF files around them (a module
 * holding its DWARF, its dwz supplementary file, its .dwo, its .dwp: the
 * names of fuzz_symbolize.h), then symbolizes them (fuzz_sym_run).
 *
 * Input: the header of fuzz_symbolize.h, then records up to the end:
 *
 *   u8  file      FUZZ_SYM_FILE_* (modulo their count)
 *   u8  section   index in FUZZ_SYM_SECTION_NAMES (modulo their count)
 *   u8  flags     FUZZ_SYM_COMPRESSED, FUZZ_SYM_ZDEBUG, FUZZ_SYM_NOBITS
 *   u32 length    little-endian, cut to what the input has left
 *   u8  bytes[length]
 *
 * A file without records is not written. The seeds are the sections of a
 * small workload built several ways (make_symbolize_seeds.sh), split out by
 * make_symbolize_corpus.c.
 */
#include "fuzz_symbolize.h"

#include <elf.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libdeflate.h>

#define MAX_SECTIONS 64

static const char *const section_names[] = {FUZZ_SYM_SECTION_NAMES};
#define NSECTION_NAMES (sizeof(section_names) / sizeof(section_names[0]))

struct section {
	char name[64];
	unsigned flags;
	const uint8_t *data;
	size_t size;
};

struct buffer {
	uint8_t *p;
	size_t len, cap;
};

static void put(struct buffer *b, const void *data, size_t len)
{
	if (b->len + len > b->cap) {
		b->cap = (b->len + len) * 2;
		b->p = realloc(b->p, b->cap);
		fuzz_sym_require(b->p != NULL);
	}
	if (len > 0)
		memcpy(b->p + b->len, data, len);
	b->len += len;
}

static void align(struct buffer *b, size_t to)
{
	static const uint8_t zeros[8];
	put(b, zeros, (to - b->len % to) % to);
}

/* data deflated (zlib) onto b. */
static void put_zlib(struct buffer *b, const uint8_t *data, size_t size)
{
	static struct libdeflate_compressor *c;
	if (c == NULL)
		c = libdeflate_alloc_compressor(1);
	fuzz_sym_require(c != NULL);
	size_t bound = libdeflate_zlib_compress_bound(c, size);
	uint8_t *out = malloc(bound);
	fuzz_sym_require(out != NULL);
	size_t n = libdeflate_zlib_compress(c, data, size, out, bound);
	fuzz_sym_require(n > 0);
	put(b, out, n);
	free(out);
}

/* A little-endian field of n bytes at b->p + at. */
static void set(struct buffer *b, size_t at, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		b->p[at + i] = (uint8_t)(v >> (8 * i));
}

/* The ELF file (ELFCLASS32 when elf32) holding the n sections, as an
 * x86-64 (or i386) executable with section headers only. */
static void write_elf(const char *file, const struct section *sec, size_t n, int elf32)
{
	struct buffer b = {0}, names = {0};
	size_t ehsize = elf32 ? sizeof(Elf32_Ehdr) : sizeof(Elf64_Ehdr);
	size_t shentsize = elf32 ? sizeof(Elf32_Shdr) : sizeof(Elf64_Shdr);
	uint8_t zero[sizeof(Elf64_Ehdr)] = {0};
	put(&b, zero, ehsize);
	put(&names, "", 1);
	uint64_t offset[MAX_SECTIONS + 2], size[MAX_SECTIONS + 2], name_at[MAX_SECTIONS + 2];
	for (size_t i = 0; i < n; i++) {
		const struct section *s = &sec[i];
		name_at[i] = names.len;
		put(&names, s->name, strlen(s->name) + 1);
		align(&b, 8);
		offset[i] = b.len;
		if (s->flags & FUZZ_SYM_NOBITS) {
			size[i] = s->size;
			continue;
		}
		if (s->flags & FUZZ_SYM_ZDEBUG) {
			uint8_t h[12] = {'Z', 'L', 'I', 'B'};
			for (int k = 0; k < 8; k++)
				h[4 + k] = (uint8_t)((uint64_t)s->size >> (8 * (7 - k)));
			put(&b, h, sizeof(h));
			put_zlib(&b, s->data, s->size);
		} else if (s->flags & FUZZ_SYM_COMPRESSED) {
			if (elf32) {
				Elf32_Chdr h = {.ch_type = ELFCOMPRESS_ZLIB, .ch_size = (Elf32_Word)s->size,
						.ch_addralign = 1};
				put(&b, &h, sizeof(h));
			} else {
				Elf64_Chdr h = {.ch_type = ELFCOMPRESS_ZLIB, .ch_size = s->size, .ch_addralign = 1};
				put(&b, &h, sizeof(h));
			}
			put_zlib(&b, s->data, s->size);
		} else {
			put(&b, s->data, s->size);
		}
		size[i] = b.len - offset[i];
	}
	name_at[n] = names.len;
	put(&names, ".shstrtab", sizeof(".shstrtab"));
	offset[n] = b.len;
	size[n] = names.len;
	put(&b, names.p, names.len);
	align(&b, 8);
	size_t shoff = b.len, nshdr = n + 2; /* the null section, n, .shstrtab */
	for (size_t i = 0; i < nshdr; i++) {
		size_t at = b.len;
		uint8_t blank[sizeof(Elf64_Shdr)] = {0};
		put(&b, blank, shentsize);
		if (i == 0)
			continue;
		size_t k = i - 1; /* sections, then .shstrtab at k == n */
		const struct section *s = k < n ? &sec[k] : NULL;
		uint32_t type = s == NULL ? SHT_STRTAB
				: s->flags & FUZZ_SYM_NOBITS ? SHT_NOBITS
				: strncmp(s->name, ".note", 5) == 0 ? SHT_NOTE
								     : SHT_PROGBITS;
		uint64_t flags = s != NULL && (s->flags & FUZZ_SYM_COMPRESSED) &&
					 !(s->flags & (FUZZ_SYM_ZDEBUG | FUZZ_SYM_NOBITS))
				 ? SHF_COMPRESSED
				 : 0;
		uint64_t alignment = type == SHT_NOTE ? 4 : 1;
		if (elf32) {
			set(&b, at + offsetof(Elf32_Shdr, sh_name), name_at[k], 4);
			set(&b, at + offsetof(Elf32_Shdr, sh_type), type, 4);
			set(&b, at + offsetof(Elf32_Shdr, sh_flags), flags, 4);
			set(&b, at + offsetof(Elf32_Shdr, sh_offset), offset[k], 4);
			set(&b, at + offsetof(Elf32_Shdr, sh_size), size[k], 4);
			set(&b, at + offsetof(Elf32_Shdr, sh_addralign), alignment, 4);
		} else {
			set(&b, at + offsetof(Elf64_Shdr, sh_name), name_at[k], 4);
			set(&b, at + offsetof(Elf64_Shdr, sh_type), type, 4);
			set(&b, at + offsetof(Elf64_Shdr, sh_flags), flags, 8);
			set(&b, at + offsetof(Elf64_Shdr, sh_offset), offset[k], 8);
			set(&b, at + offsetof(Elf64_Shdr, sh_size), size[k], 8);
			set(&b, at + offsetof(Elf64_Shdr, sh_addralign), alignment, 8);
		}
	}
	memcpy(b.p, ELFMAG, SELFMAG);
	b.p[EI_CLASS] = elf32 ? ELFCLASS32 : ELFCLASS64;
	b.p[EI_DATA] = ELFDATA2LSB;
	b.p[EI_VERSION] = EV_CURRENT;
	set(&b, EI_NIDENT, ET_EXEC, 2);                         /* e_type */
	set(&b, EI_NIDENT + 2, elf32 ? EM_386 : EM_X86_64, 2);  /* e_machine */
	set(&b, EI_NIDENT + 4, EV_CURRENT, 4);                  /* e_version */
	if (elf32) {
		set(&b, offsetof(Elf32_Ehdr, e_shoff), shoff, 4);
		set(&b, offsetof(Elf32_Ehdr, e_ehsize), ehsize, 2);
		set(&b, offsetof(Elf32_Ehdr, e_shentsize), shentsize, 2);
		set(&b, offsetof(Elf32_Ehdr, e_shnum), nshdr, 2);
		set(&b, offsetof(Elf32_Ehdr, e_shstrndx), nshdr - 1, 2);
	} else {
		set(&b, offsetof(Elf64_Ehdr, e_shoff), shoff, 8);
		set(&b, offsetof(Elf64_Ehdr, e_ehsize), ehsize, 2);
		set(&b, offsetof(Elf64_Ehdr, e_shentsize), shentsize, 2);
		set(&b, offsetof(Elf64_Ehdr, e_shnum), nshdr, 2);
		set(&b, offsetof(Elf64_Ehdr, e_shstrndx), nshdr - 1, 2);
	}
	fuzz_sym_write(file, b.p, b.len);
	free(b.p);
	free(names.p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size); /* libFuzzer calls it */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_sym_input in;
	if (!fuzz_sym_header(data, size, &in))
		return 0;
	static const char *const files[FUZZ_SYM_FILES] = {FUZZ_SYM_MODULE, FUZZ_SYM_SUP, FUZZ_SYM_DWO,
							   FUZZ_SYM_DWP};
	/* One more per file: where records past MAX_SECTIONS are parsed, and dropped. */
	static struct section sec[FUZZ_SYM_FILES][MAX_SECTIONS + 1];
	size_t nsec[FUZZ_SYM_FILES] = {0};
	const uint8_t *p = in.rest, *end = in.rest + in.rest_len;
	while (end - p >= 7) {
		unsigned file = p[0] % FUZZ_SYM_FILES, id = p[1] % NSECTION_NAMES;
		size_t len = (size_t)p[3] | (size_t)p[4] << 8 | (size_t)p[5] << 16 | (size_t)p[6] << 24;
		struct section *s = &sec[file][nsec[file]];
		s->flags = p[2];
		p += 7;
		if (len > (size_t)(end - p))
			len = (size_t)(end - p);
		s->data = p;
		s->size = len;
		p += len;
		const char *name = section_names[id];
		int dwo = file == FUZZ_SYM_FILE_DWO || file == FUZZ_SYM_FILE_DWP;
		/* .zdebug_ is only ever a .debug_ section's compressed form. */
		if ((s->flags & FUZZ_SYM_ZDEBUG) && strncmp(name, ".debug_", 7) != 0)
			s->flags &= ~(unsigned)FUZZ_SYM_ZDEBUG;
		snprintf(s->name, sizeof(s->name), "%s%s%s", s->flags & FUZZ_SYM_ZDEBUG ? ".z" : "",
			 s->flags & FUZZ_SYM_ZDEBUG ? name + 1 : name,
			 dwo && id < FUZZ_SYM_DWO_SUFFIXED ? ".dwo" : "");
		if (nsec[file] < MAX_SECTIONS)
			nsec[file]++;
	}
	for (unsigned f = 0; f < FUZZ_SYM_FILES; f++) {
		if (nsec[f] > 0)
			write_elf(files[f], sec[f], nsec[f], (in.options & FUZZ_SYM_ELF32) != 0);
		else
			fuzz_sym_write(files[f], NULL, 0);
	}
	fuzz_sym_run(&in);
	return 0;
}
