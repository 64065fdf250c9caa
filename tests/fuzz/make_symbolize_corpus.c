/*
 * make_symbolize_corpus.c - writes the seeds of the symbolizer's fuzz
 * targets from real binaries (make_symbolize_seeds.sh builds them), at build
 * time: nothing binary is committed.
 *
 *   make_symbolize_corpus ELF_DIR DWARF_DIR NAME MODULE [-a FILE] [-z]
 *                         [-s SUP] [-o DWO] [-p DWP]
 *
 * ELF_DIR/NAME (fuzz_symbolize_elf): the header of fuzz_symbolize.h, then
 * MODULE as it is. DWARF_DIR/NAME (fuzz_symbolize_dwarf): the header, then
 * a record for each section of FUZZ_SYM_SECTION_NAMES that MODULE and the
 * dwz supplementary file SUP, split DWARF file DWO and package DWP have
 * (decompressed). -z: with a second seed NAME.z whose module sections are
 * compressed, alternately with SHF_COMPRESSED and as .zdebug_. The header's
 * addresses are the starts and middles of the largest functions of the
 * symbol table of MODULE, or of FILE (-a) when MODULE has none.
 */
#include "fuzz_symbolize.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const section_names[] = {FUZZ_SYM_SECTION_NAMES};
#define NSECTION_NAMES (sizeof(section_names) / sizeof(section_names[0]))

static void die(const char *what, const char *detail)
{
	fprintf(stderr, "make_symbolize_corpus: %s: %s\n", what, detail);
	exit(1);
}

struct buffer {
	uint8_t *p;
	size_t len, cap;
};

static void put(struct buffer *b, const void *data, size_t len)
{
	if (b->len + len > b->cap) {
		b->cap = (b->len + len) * 2 + 4096;
		if ((b->p = realloc(b->p, b->cap)) == NULL)
			die("out of memory", "");
	}
	memcpy(b->p + b->len, data, len);
	b->len += len;
}

static void put_le(struct buffer *b, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint8_t byte = (uint8_t)(v >> (8 * i));
		put(b, &byte, 1);
	}
}

static void save(const char *dir, const char *name, const struct buffer *b)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (f == NULL || fwrite(b->p, 1, b->len, f) != b->len || fclose(f) != 0)
		die(path, strerror(errno));
}

static Elf *open_elf(const char *path, int *fd)
{
	if ((*fd = open(path, O_RDONLY)) < 0)
		die(path, strerror(errno));
	Elf *elf = elf_begin(*fd, ELF_C_READ, NULL);
	if (elf == NULL || elf_kind(elf) != ELF_K_ELF)
		die(path, "not ELF");
	return elf;
}

struct function {
	uint64_t addr, size;
};

static int larger_first(const void *a, const void *b)
{
	const struct function *x = a, *y = b;
	return (x->size < y->size) - (x->size > y->size);
}

/* The starts and middles of the largest functions of path's .symtab: how many. */
static size_t addresses(const char *path, uint64_t *out)
{
	int fd;
	Elf *elf = open_elf(path, &fd);
	struct function *fns = NULL;
	size_t n = 0;
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn != NULL; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr shdr;
		Elf_Data *data;
		if (gelf_getshdr(scn, &shdr) == NULL || shdr.sh_type != SHT_SYMTAB ||
		    shdr.sh_entsize == 0 || (data = elf_getdata(scn, NULL)) == NULL)
			continue;
		for (size_t i = 0; i < shdr.sh_size / shdr.sh_entsize; i++) {
			GElf_Sym sym;
			if (gelf_getsym(data, (int)i, &sym) == NULL)
				break;
			if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_size == 0 ||
			    sym.st_shndx == SHN_UNDEF)
				continue;
			if ((fns = realloc(fns, (n + 1) * sizeof(*fns))) == NULL)
				die("out of memory", "");
			fns[n++] = (struct function){sym.st_value, sym.st_size};
		}
	}
	qsort(fns, n, sizeof(*fns), larger_first);
	size_t count = 0;
	for (size_t i = 0; i < n && count + 2 <= FUZZ_SYM_MAX_ADDRS; i++) {
		out[count++] = fns[i].addr;
		out[count++] = fns[i].addr + fns[i].size / 2;
	}
	free(fns);
	elf_end(elf);
	close(fd);
	return count;
}

static void put_header(struct buffer *b, const uint64_t *addrs, size_t n)
{
	uint8_t h[2] = {FUZZ_SYM_DEMANGLE, (uint8_t)n};
	put(b, h, 2);
	for (size_t i = 0; i < n; i++)
		put_le(b, addrs[i], 8);
}

/* A record for each section of path the DWARF target knows. compress:
 * the module's sections compressed (alternating the two kinds). */
static void put_sections(struct buffer *b, const char *path, unsigned file, int compress)
{
	int fd;
	Elf *elf = open_elf(path, &fd);
	size_t shstrndx;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		die(path, "no section names");
	unsigned nrecords = 0;
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn != NULL; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr shdr;
		const char *name;
		if (gelf_getshdr(scn, &shdr) == NULL || shdr.sh_type == SHT_NOBITS ||
		    (name = elf_strptr(elf, shstrndx, shdr.sh_name)) == NULL)
			continue;
		/* .zdebug_x holds .debug_x, GNU-compressed. */
		int gnu = strncmp(name, ".zdebug_", 8) == 0;
		char plain[64];
		snprintf(plain, sizeof(plain), "%s%s", gnu ? ".debug_" : "", gnu ? name + 8 : name);
		size_t len = strlen(plain);
		if (len > 4 && strcmp(plain + len - 4, ".dwo") == 0)
			plain[len - 4] = '\0';
		size_t id = 0;
		while (id < NSECTION_NAMES && strcmp(section_names[id], plain) != 0)
			id++;
		if (id == NSECTION_NAMES)
			continue;
		if (gnu ? elf_compress_gnu(scn, 0, 0) < 0
			: (shdr.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
			die(path, "cannot decompress a section");
		Elf_Data *data = elf_getdata(scn, NULL);
		if (data == NULL)
			continue;
		uint8_t flags = 0;
		if (compress && strncmp(plain, ".debug_", 7) == 0)
			flags = nrecords % 2 ? FUZZ_SYM_ZDEBUG : FUZZ_SYM_COMPRESSED;
		uint8_t h[3] = {(uint8_t)file, (uint8_t)id, flags};
		put(b, h, 3);
		put_le(b, data->d_size, 4);
		if (data->d_size > 0)
			put(b, data->d_buf, data->d_size);
		nrecords++;
	}
	elf_end(elf);
	close(fd);
}

int main(int argc, char **argv)
{
	if (argc < 5)
		die("usage", "ELF_DIR DWARF_DIR NAME MODULE [-a FILE] [-z] [-s SUP] [-o DWO] [-p DWP]");
	if (elf_version(EV_CURRENT) == EV_NONE)
		die("libelf", elf_errmsg(-1));
	const char *elf_dir = argv[1], *dwarf_dir = argv[2], *name = argv[3], *module = argv[4];
	const char *addrs_from = module, *links[FUZZ_SYM_FILES] = {module};
	int compress = 0;
	for (int i = 5; i < argc; i++) {
		if (strcmp(argv[i], "-z") == 0) {
			compress = 1;
			continue;
		}
		if (i + 1 >= argc)
			die("missing argument", argv[i]);
		const char *arg = argv[++i];
		if (strcmp(argv[i - 1], "-a") == 0)
			addrs_from = arg;
		else if (strcmp(argv[i - 1], "-s") == 0)
			links[FUZZ_SYM_FILE_SUP] = arg;
		else if (strcmp(argv[i - 1], "-o") == 0)
			links[FUZZ_SYM_FILE_DWO] = arg;
		else if (strcmp(argv[i - 1], "-p") == 0)
			links[FUZZ_SYM_FILE_DWP] = arg;
		else
			die("unknown option", argv[i - 1]);
	}
	uint64_t addrs[FUZZ_SYM_MAX_ADDRS];
	size_t naddrs = addresses(addrs_from, addrs);

	struct buffer b = {0};
	put_header(&b, addrs, naddrs);
	FILE *f = fopen(module, "rb");
	if (f == NULL)
		die(module, strerror(errno));
	uint8_t chunk[65536];
	size_t n;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		put(&b, chunk, n);
	fclose(f);
	save(elf_dir, name, &b);

	for (int z = 0; z <= compress; z++) {
		b.len = 0;
		put_header(&b, addrs, naddrs);
		for (unsigned file = 0; file < FUZZ_SYM_FILES; file++)
			if (links[file] != NULL)
				put_sections(&b, links[file], file, z && file == FUZZ_SYM_FILE_MODULE);
		char seed[256];
		snprintf(seed, sizeof(seed), "%s%s", name, z ? ".z" : "");
		save(dwarf_dir, seed, &b);
	}
	free(b.p);
	return 0;
}
