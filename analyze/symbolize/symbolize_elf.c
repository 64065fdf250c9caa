/*
 * symbolize_elf.c - what libelf tells the symbolizer: a module's build-id
 * (to refuse a file rebuilt since the trace was taken), where its DWARF is
 * (in the file, by build-id, by .gnu_debuglink), and its function symbols for
 * modules without DWARF.
 */
#include "symbolize_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "file.h"

#define SYSTEM_DEBUG_DIR "/usr/lib/debug"

/* Open path for libelf, a regular file only (the trace names it: it may be a
 * FIFO); returns the Elf (NULL on failure, errno 0 when not ELF) and the fd. */
static Elf *open_elf(const char *path, int *fd)
{
	static int version_set;
	if (!version_set) {
		if (elf_version(EV_CURRENT) == EV_NONE)
			return NULL;
		version_set = 1;
	}
	*fd = open_regular_file(path);
	if (*fd < 0)
		return NULL;
	errno = 0;
	Elf *elf = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (elf == NULL || elf_kind(elf) != ELF_K_ELF) {
		errno = 0;
		if (elf != NULL)
			elf_end(elf);
		close(*fd);
		return NULL;
	}
	return elf;
}

static void close_elf(Elf *elf, int fd)
{
	elf_end(elf);
	close(fd);
}

/* Copy the NT_GNU_BUILD_ID note found in data, if any. */
static void read_build_id_note(Elf_Data *data, struct sym_elf_info *info)
{
	GElf_Nhdr nhdr;
	size_t offset = 0, name_off, desc_off, next;
	while (data != NULL && offset < data->d_size &&
	       (next = gelf_getnote(data, offset, &nhdr, &name_off, &desc_off)) > 0) {
		if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_namesz == 4 &&
		    memcmp((char *)data->d_buf + name_off, "GNU", 4) == 0 &&
		    nhdr.n_descsz > 0 && nhdr.n_descsz <= sizeof(info->build_id)) {
			memcpy(info->build_id, (char *)data->d_buf + desc_off, nhdr.n_descsz);
			info->build_id_len = nhdr.n_descsz;
			return;
		}
		offset = next;
	}
}

/* Files without section headers still carry their notes in PT_NOTE. */
static void read_build_id_from_segments(Elf *elf, struct sym_elf_info *info)
{
	size_t nphdr;
	if (elf_getphdrnum(elf, &nphdr) != 0)
		return;
	for (size_t i = 0; i < nphdr && info->build_id_len == 0; i++) {
		GElf_Phdr phdr;
		if (gelf_getphdr(elf, (int)i, &phdr) == NULL || phdr.p_type != PT_NOTE)
			continue;
		read_build_id_note(elf_getdata_rawchunk(elf, (int64_t)phdr.p_offset, phdr.p_filesz,
							ELF_T_NHDR),
				   info);
	}
}

void sym_elf_inspect(const char *path, struct sym_elf_info *info)
{
	memset(info, 0, sizeof(*info));
	int fd;
	Elf *elf = open_elf(path, &fd);
	if (elf == NULL) {
		info->open_errno = errno;
		return;
	}
	info->readable = 1;
	size_t shstrndx;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		shstrndx = SIZE_MAX;
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn != NULL; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr shdr;
		if (gelf_getshdr(scn, &shdr) == NULL)
			continue;
		const char *name = shstrndx != SIZE_MAX ? elf_strptr(elf, shstrndx, shdr.sh_name) : NULL;
		if (shdr.sh_type == SHT_NOTE && info->build_id_len == 0) {
			read_build_id_note(elf_getdata(scn, NULL), info);
		} else if (name == NULL || shdr.sh_type == SHT_NOBITS || shdr.sh_size == 0) {
			continue;
		} else if (strcmp(name, ".debug_info") == 0 || strcmp(name, ".zdebug_info") == 0) {
			info->has_debug_info = 1;
		} else if (shdr.sh_type == SHT_SYMTAB) {
			info->has_symtab = 1;
		} else if (strcmp(name, ".gnu_debuglink") == 0) {
			/* A NUL-terminated file name, padding, then a CRC. */
			Elf_Data *data = elf_getdata(scn, NULL);
			if (data != NULL && data->d_buf != NULL && data->d_size > 0) {
				size_t n = strnlen(data->d_buf, data->d_size);
				if (n < data->d_size && n < sizeof(info->debuglink) &&
				    memchr(data->d_buf, '/', n) == NULL)
					memcpy(info->debuglink, data->d_buf, n + 1);
			}
		}
	}
	if (info->build_id_len == 0)
		read_build_id_from_segments(elf, info);
	close_elf(elf, fd);
}

/* 1 when candidate holds DWARF for the module described by want. A debug
 * file without a build-id is taken on trust (the debuglink named it). */
int sym_elf_debug_file_matches(const char *candidate, const struct sym_elf_info *want)
{
	struct sym_elf_info got;
	sym_elf_inspect(candidate, &got);
	if (!got.readable || !got.has_debug_info)
		return 0;
	if (want->build_id_len > 0 && got.build_id_len > 0 &&
	    (want->build_id_len != got.build_id_len ||
	     memcmp(want->build_id, got.build_id, got.build_id_len) != 0))
		return 0;
	return 1;
}

int sym_elf_build_id_path(const char *dir, const uint8_t *id, size_t len, const char *suffix,
			  char *out, size_t out_len)
{
	char hex[2 * 64 + 1];
	if (len < 2 || len > 64)
		return 0;
	for (size_t i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	int n = snprintf(out, out_len, "%s/.build-id/%.2s/%s%s", dir, hex, hex + 2, suffix);
	return n > 0 && (size_t)n < out_len;
}

/* dir/.build-id/xx/yyyy.debug */
static int try_build_id_path(const char *dir, const struct sym_elf_info *info, char *out,
			     size_t out_len)
{
	return sym_elf_build_id_path(dir, info->build_id, info->build_id_len, ".debug", out,
				     out_len) &&
	       sym_elf_debug_file_matches(out, info);
}

/* prefix/middle/name, with empty parts left out. */
static int try_joined_path(const char *prefix, const char *middle, const char *name,
			   const struct sym_elf_info *info, const char *module_path, char *out,
			   size_t out_len)
{
	int n = snprintf(out, out_len, "%s%s%s/%s", prefix, *middle && *prefix ? "/" : "",
			 middle, name);
	return n > 0 && (size_t)n < out_len && strcmp(out, module_path) != 0 &&
	       sym_elf_debug_file_matches(out, info);
}

static int try_debuglink(const char *path, const struct sym_elf_info *info,
			 const char *const *debug_dirs, int ndebug_dirs, char *out, size_t out_len)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash == NULL)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	/* "/usr/lib/debug" + "/usr/bin" wants the leading '/' of dir once. */
	const char *dir_tail = dir[0] == '/' ? dir + 1 : dir;
	const char *link = info->debuglink;
	if (try_joined_path(dir, "", link, info, path, out, out_len) ||
	    try_joined_path(dir, ".debug", link, info, path, out, out_len) ||
	    try_joined_path(SYSTEM_DEBUG_DIR, dir_tail, link, info, path, out, out_len))
		return 1;
	for (int i = 0; i < ndebug_dirs; i++)
		if (try_joined_path(debug_dirs[i], "", link, info, path, out, out_len) ||
		    try_joined_path(debug_dirs[i], dir_tail, link, info, path, out, out_len))
			return 1;
	return 0;
}

void sym_elf_find_debug_file(const char *path, const struct sym_elf_info *info,
			     const char *const *debug_dirs, int ndebug_dirs, char *out,
			     size_t out_len)
{
	if (info->has_debug_info) {
		snprintf(out, out_len, "%s", path);
		return;
	}
	/* The build-id names exactly the right file, so it goes first (as gdb). */
	if (info->build_id_len > 0) {
		for (int i = 0; i < ndebug_dirs; i++)
			if (try_build_id_path(debug_dirs[i], info, out, out_len))
				return;
		if (try_build_id_path(SYSTEM_DEBUG_DIR, info, out, out_len))
			return;
	}
	if (info->debuglink[0] != '\0' &&
	    try_debuglink(path, info, debug_dirs, ndebug_dirs, out, out_len))
		return;
	if (out_len > 0)
		out[0] = '\0';
}

/*
 * Several names often share one address (malloc, __libc_malloc,
 * __GI___libc_malloc): name it as perf and pprof users read it, by the
 * public one: a function before a label, exported (global or weak) before
 * local, the default version before a compatibility one (cfree@GLIBC_2.2.5),
 * then fewer leading underscores, then the shorter name.
 */
static uint32_t alias_rank(int type, int bind, const char *name, size_t length)
{
	uint32_t function = type != STT_NOTYPE;
	uint32_t exported = bind == STB_GLOBAL || bind == STB_WEAK;
	uint32_t default_version = name[length] == '\0' || strncmp(name + length, "@@", 2) == 0;
	uint32_t underscores = (uint32_t)strspn(name, "_");
	if (underscores > 15)
		underscores = 15;
	if (length > 0xffff)
		length = 0xffff;
	return function << 22 | exported << 21 | default_version << 20 | (15 - underscores) << 16 |
	       (0xffff - (uint32_t)length);
}

/*
 * Where the code of a symbol may end at most: the end of its section. A PLT
 * stub must not read as the unsized _init in .init before it, nor .fini's
 * code as the last function of .text.
 */
static uint64_t section_end(Elf *elf, const GElf_Sym *sym, int *executable)
{
	GElf_Shdr shdr;
	Elf_Scn *scn = sym->st_shndx < SHN_LORESERVE ? elf_getscn(elf, sym->st_shndx) : NULL;
	*executable = 0;
	if (scn == NULL || gelf_getshdr(scn, &shdr) == NULL || shdr.sh_addr + shdr.sh_size <= sym->st_value)
		return sym->st_value + (sym->st_size ? sym->st_size : 1);
	/* A debug file keeps the section headers, marked NOBITS, with their flags. */
	*executable = (shdr.sh_flags & SHF_EXECINSTR) != 0;
	return shdr.sh_addr + shdr.sh_size;
}

/* Add the function symbols of one symbol table section. */
static size_t load_symbol_section(struct sym_index *ix, struct sym_strings *st, Elf *elf,
				  Elf_Scn *scn, const GElf_Shdr *shdr)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	if (data == NULL || shdr->sh_entsize == 0)
		return 0;
	size_t count = shdr->sh_size / shdr->sh_entsize, added = 0;
	for (size_t i = 0; i < count; i++) {
		GElf_Sym sym;
		if (gelf_getsym(data, (int)i, &sym) == NULL)
			break;
		int type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);
		/* Assembly often labels code without a type or size (zstd's
		 * HUF_decompress4X1_usingDTable_internal_fast_asm_loop): such a
		 * label in executable code names what follows it. */
		int label = type == STT_NOTYPE && sym.st_size == 0;
		if ((type != STT_FUNC && type != STT_GNU_IFUNC && !label) ||
		    sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE || sym.st_value == 0)
			continue;
		const char *name = elf_strptr(elf, shdr->sh_link, sym.st_name);
		if (name == NULL || name[0] == '\0' || name[0] == '$' || strncmp(name, ".L", 2) == 0)
			continue; /* no name, ARM mapping symbols, assembler-local labels */
		int executable;
		uint64_t limit = section_end(elf, &sym, &executable);
		if (label && !executable)
			continue;
		/* .symtab spells versioned symbols "memcpy@@GLIBC_2.14". */
		size_t length = strcspn(name, "@");
		uint32_t fn = sym_add_function(ix, sym_intern_n(st, name, length), NULL, 0);
		sym_add_symbol(ix, sym.st_value, sym.st_size, limit, fn,
			       alias_rank(type, bind, name, length), label);
		added++;
	}
	return added;
}

size_t sym_elf_load_symbols(struct sym_index *ix, struct sym_strings *st, const char *path)
{
	int fd;
	Elf *elf = open_elf(path, &fd);
	if (elf == NULL)
		return 0;
	/* .symtab has the local functions too; .dynsym is what a stripped
	 * file keeps. */
	Elf_Scn *dynsym = NULL;
	GElf_Shdr dynsym_shdr;
	size_t added = 0;
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn != NULL; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr shdr;
		if (gelf_getshdr(scn, &shdr) == NULL || shdr.sh_type == SHT_NOBITS)
			continue;
		if (shdr.sh_type == SHT_SYMTAB)
			added += load_symbol_section(ix, st, elf, scn, &shdr);
		else if (shdr.sh_type == SHT_DYNSYM) {
			dynsym = scn;
			dynsym_shdr = shdr;
		}
	}
	if (added == 0 && dynsym != NULL)
		added = load_symbol_section(ix, st, elf, dynsym, &dynsym_shdr);
	close_elf(elf, fd);
	return added;
}
