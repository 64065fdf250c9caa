/*
 * remote_modules.c - the objects another process has mapped, read from
 * outside (remote.h): each executable mapping of a file in /proc/PID/maps
 * (and each later one perf reports) is matched to its ELF file's program
 * headers, which give the object's load bias, segments and build-id for the
 * MODULE record, as the agent's dl_iterate_phdr scan gives them from inside.
 *
 * Files are opened through /proc/PID/root (the target's mount namespace: a
 * container's /usr/lib is not ours), as regular files only and non-blocking
 * (a path is the target's to choose), and must be the inode the mapping
 * names; a file replaced since it was mapped (an upgrade: "(deleted)") is
 * recorded with its path and no build-id, and its frames are not unwound.
 * The kernel's vdso has no file: it is the same image in every process of
 * this kernel, so collect's own (AT_SYSINFO_EHDR) stands in for it.
 *
 * Files are read, never mapped: anyone who can write one could truncate it
 * while collect reads a mapping of it (SIGBUS). What is read is bounded: the
 * ELF and program headers and the notes when the object is added, the
 * segment holding .eh_frame_hdr when a walk first meets it (remote_unwind.c
 * builds the agent's frame-table rows from it, frametab_fde.c); the file
 * stays open until then.
 */
#include "remote.h"
#include "remote_internal.h"

#include "alloc.h"
#include "frametab_internal.h"
#include "trace.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#define MAX_SEGMENTS 16

#define MAX_SEGMENTS 16
#define MAX_HEADERS (64u << 10) /* program headers and notes read, at most */

struct remote_modules *remote_modules_new(pid_t pid)
{
	struct remote_modules *rm = calloc(1, sizeof *rm);
	if (rm)
		rm->pid = pid;
	return rm;
}

/* Forget the object's file (its rows stay). */
static void drop_file(struct remote_object *ob)
{
	if (ob->fd >= 0)
		close(ob->fd);
	ob->fd = -1;
	ob->mem = NULL;
	ob->file_bytes = 0;
}

static void drop_object(struct remote_object *ob)
{
	drop_file(ob);
	frametab_free_rows(ob->rows);
	free(ob->phdr);
	free(ob->path);
}

void remote_modules_free(struct remote_modules *rm)
{
	if (!rm)
		return;
	for (uint32_t i = 0; i < rm->n; i++)
		drop_object(&rm->objects[i]);
	free(rm->objects);
	free(rm);
}

int remote_modules_write_failed(const struct remote_modules *rm)
{
	return rm->write_failed;
}

void remote_modules_counts(const struct remote_modules *rm, uint32_t *known, uint32_t *untabled)
{
	*known = rm->n;
	*untabled = 0;
	for (uint32_t i = 0; i < rm->n; i++)
		*untabled += rm->objects[i].tables_tried && !rm->objects[i].rows;
}

int remote_object_read(const struct remote_object *ob, uint64_t offset, void *buf, uint64_t n)
{
	if (offset > ob->file_bytes || n > ob->file_bytes - offset)
		return -1;
	if (ob->mem) {
		memcpy(buf, ob->mem + offset, n);
		return 0;
	}
	for (uint64_t done = 0; done < n;) {
		ssize_t got = pread(ob->fd, (uint8_t *)buf + done, n - done, (off_t)(offset + done));
		if (got <= 0)
			return -1; /* an error, or a file cut short since it was opened */
		done += (uint64_t)got;
	}
	return 0;
}

/* The program headers (a copy, in ob->phdr), 0; -1 when the file is not a 64-bit x86-64 ELF file. */
static int read_program_headers(struct remote_object *ob)
{
	ElfW(Ehdr) eh;
	if (remote_object_read(ob, 0, &eh, sizeof eh) < 0 || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64 || eh.e_phentsize != sizeof(ElfW(Phdr)) ||
	    !eh.e_phnum || (uint64_t)eh.e_phnum * sizeof(ElfW(Phdr)) > MAX_HEADERS)
		return -1;
	ElfW(Phdr) *ph = calloc_or_abort(eh.e_phnum, sizeof *ph);
	if (remote_object_read(ob, eh.e_phoff, ph, (uint64_t)eh.e_phnum * sizeof *ph) < 0) {
		free(ph);
		return -1;
	}
	ob->phdr = ph;
	ob->phnum = eh.e_phnum;
	return 0;
}

/* The NT_GNU_BUILD_ID of the object's notes: its length, 0 when it has none. */
static uint32_t build_id_of(const struct remote_object *ob, uint8_t out[32])
{
	for (unsigned i = 0; i < ob->phnum; i++) {
		const ElfW(Phdr) *ph = &ob->phdr[i];
		if (ph->p_type != PT_NOTE || ph->p_filesz > MAX_HEADERS)
			continue;
		uint8_t *notes = realloc_or_abort(NULL, ph->p_filesz + 1);
		uint32_t len = 0;
		if (remote_object_read(ob, ph->p_offset, notes, ph->p_filesz) == 0) {
			const uint8_t *p = notes, *end = notes + ph->p_filesz;
			while (!len && (uint64_t)(end - p) >= sizeof(ElfW(Nhdr))) {
				ElfW(Nhdr) nh;
				memcpy(&nh, p, sizeof nh);
				uint64_t name = (nh.n_namesz + 3ull) & ~3ull, desc = (nh.n_descsz + 3ull) & ~3ull;
				if (name + desc > (uint64_t)(end - p) - sizeof nh)
					break;
				const uint8_t *n = p + sizeof nh;
				if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && memcmp(n, "GNU", 4) == 0 &&
				    nh.n_descsz && nh.n_descsz <= 32) {
					memcpy(out, n + name, nh.n_descsz);
					len = nh.n_descsz;
				}
				p += sizeof nh + name + desc;
			}
		}
		free(notes);
		if (len)
			return len;
	}
	return 0;
}

#define FUSE_MAGIC 0x65735546 /* a filesystem served by a process: the target's, perhaps, which could block a read */

/* The object's file, opened read-only (its size in *bytes): the descriptor, or -1 (not found, not a regular
 * file, not the inode mapped (inode 0: not checked), on FUSE). The path is the target's to choose and to change:
 * it is opened O_PATH first (which opens no device, FIFO or socket), checked, and only then opened for reading,
 * through that very inode. */
static int open_file(pid_t pid, const char *path, uint64_t inode, uint64_t *bytes)
{
	char in_root[PATH_MAX + 32];
	snprintf(in_root, sizeof in_root, "/proc/%d/root%s", (int)pid, path);
	int at = open(in_root, O_PATH | O_CLOEXEC);
	if (at < 0)
		at = open(path, O_PATH | O_CLOEXEC);
	if (at < 0)
		return -1;
	struct stat st;
	struct statfs fs;
	int fd = -1;
	if (fstat(at, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && (!inode || st.st_ino == inode) &&
	    fstatfs(at, &fs) == 0 && fs.f_type != FUSE_MAGIC) {
		char self[64];
		snprintf(self, sizeof self, "/proc/self/fd/%d", at);
		fd = open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	}
	close(at);
	*bytes = (uint64_t)st.st_size;
	return fd;
}

static struct remote_object *add_object(struct remote_modules *rm)
{
	ALLOC_GROW(rm->objects, rm->n + 1, rm->cap);
	struct remote_object *ob = &rm->objects[rm->n++];
	memset(ob, 0, sizeof *ob);
	ob->fd = -1;
	return ob;
}

/* Write ob's MODULE record from its program headers. */
static void write_module(struct remote_modules *rm, struct trace_writer *w, const struct remote_object *ob,
			 uint64_t now_ns)
{
	struct trace_segment seg[MAX_SEGMENTS];
	uint32_t nseg = 0;
	uint8_t build_id[32];
	uint32_t build_id_len = ob->phdr ? build_id_of(ob, build_id) : 0;
	for (unsigned i = 0; ob->phdr && i < ob->phnum && nseg < MAX_SEGMENTS; i++) {
		const ElfW(Phdr) *ph = &ob->phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		seg[nseg++] = (struct trace_segment){ ph->p_vaddr, ph->p_memsz, ph->p_offset,
						      ((ph->p_flags & PF_X) ? TRACE_SEGMENT_EXEC : 0) |
							      ((ph->p_flags & PF_W) ? TRACE_SEGMENT_WRITE : 0) |
							      ((ph->p_flags & PF_R) ? TRACE_SEGMENT_READ : 0) };
	}
	if (!nseg) /* no headers: its executable mapping alone, at bias 0 */
		seg[nseg++] = (struct trace_segment){ ob->text_lo, ob->text_hi - ob->text_lo, ob->map_offset,
						      TRACE_SEGMENT_EXEC | TRACE_SEGMENT_READ };
	struct trace_module m = { (uint32_t)rm->pid, ob->id, now_ns, ob->bias, ob->path,
				  build_id_len ? build_id : NULL, build_id_len, nseg, seg };
	if (w && trace_writer_module(w, &m) < 0)
		rm->write_failed = 1;
}

/* Unload what overlaps [lo, hi): another object was mapped there. */
static void unmap_range(struct remote_modules *rm, struct trace_writer *w, uint64_t lo, uint64_t hi, uint64_t now_ns)
{
	for (uint32_t i = 0; i < rm->n;) {
		struct remote_object *ob = &rm->objects[i];
		if (ob->text_lo < hi && lo < ob->text_hi) {
			struct trace_module_unload u = { (uint32_t)rm->pid, ob->id, now_ns };
			if (w && trace_writer_module_unload(w, &u) < 0)
				rm->write_failed = 1;
			drop_object(ob);
			rm->objects[i] = rm->objects[--rm->n];
			rm->sorted = 0;
		} else {
			i++;
		}
	}
}

int remote_modules_mapped(struct remote_modules *rm, struct trace_writer *w, uint64_t start, uint64_t len,
			  uint64_t file_offset, uint64_t inode, const char *path, uint64_t now_ns)
{
	return remote_modules_mapping(rm, w, start, start + len, file_offset, inode, path, now_ns);
}

/* The size of collect's own vdso (the same image as the target's: one kernel), 0 when it has none. */
static uint64_t own_vdso_bytes(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	uint64_t size = 0;
	while (f && fgets(line, sizeof line, f)) {
		unsigned long long lo, hi;
		if (strstr(line, "[vdso]") && sscanf(line, "%llx-%llx", &lo, &hi) == 2)
			size = hi - lo;
	}
	if (f)
		fclose(f);
	return size;
}

int remote_modules_mapping(struct remote_modules *rm, struct trace_writer *w, uint64_t lo, uint64_t hi,
			   uint64_t file_offset, uint64_t inode, const char *path, uint64_t now_ns)
{
	int vdso = !strcmp(path, "[vdso]");
	if (!vdso && path[0] != '/')
		return 0; /* anonymous, [stack], a JIT's code: no object (a JIT map names it) */
	const char *name = vdso ? "linux-vdso.so.1" : path;
	for (uint32_t i = 0; i < rm->n; i++)
		if (rm->objects[i].text_lo == lo && rm->objects[i].text_hi == hi && !strcmp(rm->objects[i].path, name))
			return 0;
	if (vdso) {
		uint64_t bytes = own_vdso_bytes();
		remote_modules_add(rm, lo, hi, file_offset, name, -1, (const uint8_t *)(uintptr_t)getauxval(AT_SYSINFO_EHDR),
				   bytes, w, now_ns);
	} else {
		uint64_t bytes = 0;
		int fd = open_file(rm->pid, path, inode, &bytes);
		remote_modules_add(rm, lo, hi, file_offset, name, fd, NULL, bytes, w, now_ns);
	}
	return 1;
}

struct remote_object *remote_modules_add(struct remote_modules *rm, uint64_t lo, uint64_t hi, uint64_t file_offset,
					 const char *path, int fd, const uint8_t *mem, uint64_t bytes,
					 struct trace_writer *w, uint64_t now_ns)
{
	unmap_range(rm, w, lo, hi, now_ns);
	struct remote_object *ob = add_object(rm);
	rm->sorted = 0;
	ob->id = ++rm->next_id;
	ob->text_lo = lo;
	ob->text_hi = hi;
	ob->map_offset = file_offset;
	ob->path = strdup_or_abort(path);
	ob->fd = fd;
	ob->mem = fd < 0 ? mem : NULL;
	ob->file_bytes = fd >= 0 || mem ? bytes : 0;
	/* The bias: the PT_LOAD this mapping is of (by its page-aligned file offset) says where vaddr 0 is; an
	 * image in memory (the vdso) is mapped whole from its first page. */
	int placed = 0;
	if ((fd >= 0 || mem) && read_program_headers(ob) == 0)
		for (unsigned i = 0; i < ob->phnum && !placed; i++) {
			const ElfW(Phdr) *ph = &ob->phdr[i];
			if (ph->p_type == PT_LOAD && (mem || (ph->p_offset & ~4095ull) == file_offset)) {
				ob->bias = lo - (ph->p_vaddr & ~4095ull);
				placed = 1;
			}
		}
	if (!placed) {
		free(ob->phdr);
		ob->phdr = NULL;
		ob->phnum = 0;
		drop_file(ob);
	}
	write_module(rm, w, ob, now_ns);
	return ob;
}

int remote_modules_scan(struct remote_modules *rm, struct trace_writer *w, uint64_t now_ns)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/maps", (int)rm->pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	char line[PATH_MAX + 256];
	while (fgets(line, sizeof line, f)) {
		unsigned long long lo, hi, off, inode;
		char perms[8];
		int name_at = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*x:%*x %llu %n", &lo, &hi, perms, &off, &inode, &name_at) < 5 ||
		    perms[2] != 'x')
			continue;
		char *name = line + name_at;
		name[strcspn(name, "\n")] = 0;
		remote_modules_mapping(rm, w, lo, hi, off, inode, name, now_ns);
	}
	fclose(f);
	return 0;
}

void remote_modules_forget(struct remote_modules *rm, struct trace_writer *w, uint64_t now_ns)
{
	unmap_range(rm, w, 0, UINT64_MAX, now_ns);
}
