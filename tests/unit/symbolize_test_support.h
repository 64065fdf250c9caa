/*
 * symbolize_test_support.h - what the symbolizer's unit tests share: paths
 * in the source and build directories (the including file defines
 * source_dir and bin_dir), and facts read from a workload with libelf,
 * independently of the symbolizer (a function symbol's extent, a section's
 * address, the line of a marker in a source file).
 */
#ifndef IPSCOPE_SYMBOLIZE_TEST_SUPPORT_H
#define IPSCOPE_SYMBOLIZE_TEST_SUPPORT_H

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* dir/name in one of 64 rotating buffers: enough for any test's live paths. */
static inline char *path_in(const char *dir, const char *name)
{
	static char buf[32][4096];
	static int next;
	char *p = buf[next++ % 32];
	/* Composed apart first: dir may be an earlier result of this function. */
	char composed[4096];
	size_t n = strlen(dir), m = strlen(name);
	if (n + 1 + m >= sizeof(composed))
		n = m = 0; /* too long for a test path: "/" fails loudly */
	memcpy(composed, dir, n);
	composed[n] = '/';
	memcpy(composed + n + 1, name, m);
	composed[n + 1 + m] = '\0';
	memcpy(p, composed, n + m + 2);
	return p;
}

static inline int ends_with(const char *s, const char *suffix)
{
	size_t n = s ? strlen(s) : 0, m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Line number of the first line of file containing marker, 0 if none. */
static inline uint32_t marker_line(const char *file, const char *marker)
{
	FILE *f = fopen(file, "r");
	char line[1024];
	uint32_t n = 0;
	while (f && fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, marker)) {
			fclose(f);
			return n;
		}
	}
	if (f)
		fclose(f);
	return 0;
}

/* Address and size of the function symbol name in path's .symtab. */
static inline int symbol_extent(const char *path, const char *name, uint64_t *addr, uint64_t *size)
{
	elf_version(EV_CURRENT);
	int fd = open(path, O_RDONLY), found = 0;
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	for (Elf_Scn *scn = elf ? elf_nextscn(elf, NULL) : NULL; scn && !found;
	     scn = elf_nextscn(elf, scn)) {
		GElf_Shdr shdr;
		Elf_Data *data;
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_SYMTAB ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < shdr.sh_size / shdr.sh_entsize && !found; i++) {
			GElf_Sym sym;
			const char *s;
			if (gelf_getsym(data, (int)i, &sym) &&
			    (s = elf_strptr(elf, shdr.sh_link, sym.st_name)) && strcmp(s, name) == 0) {
				*addr = sym.st_value;
				*size = sym.st_size;
				found = 1;
			}
		}
	}
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return found;
}

/* Address of section name in path, 0 if none. */
static inline uint64_t section_address(const char *path, const char *name)
{
	elf_version(EV_CURRENT);
	int fd = open(path, O_RDONLY);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	size_t shstrndx;
	uint64_t addr = 0;
	if (elf && elf_getshdrstrndx(elf, &shstrndx) == 0)
		for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn && !addr; scn = elf_nextscn(elf, scn)) {
			GElf_Shdr shdr;
			const char *s;
			if (gelf_getshdr(scn, &shdr) && (s = elf_strptr(elf, shstrndx, shdr.sh_name)) &&
			    strcmp(s, name) == 0)
				addr = shdr.sh_addr;
		}
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return addr;
}

#endif
