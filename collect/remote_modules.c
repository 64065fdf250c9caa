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
 * Frame tables are the agent's rows (frametab_fde.c), built from the file's
 * mapped .eh_frame_hdr segment the first time a walk meets the object.
 */
#include "remote.h"
#include "remote_internal.h"

#include "alloc.h"
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
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_SEGMENTS 16

struct remote_modules *remote_modules_new(pid_t pid)
{
	struct remote_modules *rm = calloc(1, sizeof *rm);
	if (rm)
		rm->pid = pid;
	return rm;
}

static void drop_image(struct remote_object *ob)
{
	if (ob->image && !ob->image_is_vdso)
		munmap(ob->image, ob->image_bytes);
	ob->image = NULL;
}

void remote_modules_free(struct remote_modules *rm)
{
	if (!rm)
		return;
	for (uint32_t i = 0; i < rm->n; i++) {
		drop_image(&rm->objects[i]);
		free(rm->objects[i].path);
	}
	free(rm->objects);
	free(rm);
}

void remote_modules_counts(const struct remote_modules *rm, uint32_t *known, uint32_t *untabled)
{
	*known = rm->n;
	*untabled = 0;
	for (uint32_t i = 0; i < rm->n; i++)
		*untabled += rm->objects[i].tables_tried && !rm->objects[i].rows;
}

/* The ELF header and program headers of an image of size bytes, or NULL when it is not a 64-bit ELF file of ours. */
static const ElfW(Phdr) *program_headers(const uint8_t *image, uint64_t size, unsigned *phnum)
{
	if (size < sizeof(ElfW(Ehdr)) || memcmp(image, ELFMAG, SELFMAG) != 0 || image[EI_CLASS] != ELFCLASS64)
		return NULL;
	const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)image;
	if (eh->e_machine != EM_X86_64 || eh->e_phentsize != sizeof(ElfW(Phdr)) || eh->e_phoff > size ||
	    (uint64_t)eh->e_phnum * sizeof(ElfW(Phdr)) > size - eh->e_phoff)
		return NULL;
	*phnum = eh->e_phnum;
	return (const ElfW(Phdr) *)(image + eh->e_phoff);
}

/* The NT_GNU_BUILD_ID of an image (read through its file offsets): its length, 0 when it has none. */
static uint32_t build_id_of(const uint8_t *image, uint64_t size, const ElfW(Phdr) *ph, unsigned phnum, uint8_t out[32])
{
	for (unsigned i = 0; i < phnum; i++) {
		if (ph[i].p_type != PT_NOTE || ph[i].p_offset > size || ph[i].p_filesz > size - ph[i].p_offset)
			continue;
		const uint8_t *p = image + ph[i].p_offset, *end = p + ph[i].p_filesz;
		while ((uint64_t)(end - p) >= sizeof(ElfW(Nhdr))) {
			ElfW(Nhdr) nh;
			memcpy(&nh, p, sizeof nh);
			uint64_t name = (nh.n_namesz + 3ull) & ~3ull, desc = (nh.n_descsz + 3ull) & ~3ull;
			if (name + desc > (uint64_t)(end - p) - sizeof nh)
				break;
			const uint8_t *n = p + sizeof nh;
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && memcmp(n, "GNU", 4) == 0 && nh.n_descsz &&
			    nh.n_descsz <= 32) {
				memcpy(out, n + name, nh.n_descsz);
				return nh.n_descsz;
			}
			p += sizeof nh + name + desc;
		}
	}
	return 0;
}

/* Map the object's file read-only: the image, or NULL (ob->why says why). */
static int map_file(struct remote_modules *rm, struct remote_object *ob, uint64_t inode)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "/proc/%d/root%s", (int)rm->pid, ob->path);
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		fd = open(ob->path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && (!inode || st.st_ino == inode);
	void *m = ok ? mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
	close(fd);
	if (m == MAP_FAILED)
		return -1;
	ob->image = m;
	ob->image_bytes = (uint64_t)st.st_size;
	return 0;
}

static struct remote_object *add_object(struct remote_modules *rm)
{
	ALLOC_GROW(rm->objects, rm->n + 1, rm->cap);
	struct remote_object *ob = &rm->objects[rm->n++];
	memset(ob, 0, sizeof *ob);
	return ob;
}

/* Write ob's MODULE record from its image's program headers. */
static void write_module(struct remote_modules *rm, struct trace_writer *w, const struct remote_object *ob,
			 const ElfW(Phdr) *ph, unsigned phnum, uint64_t now_ns)
{
	struct trace_segment seg[MAX_SEGMENTS];
	uint32_t nseg = 0;
	uint8_t build_id[32];
	uint32_t build_id_len = ph ? build_id_of(ob->image, ob->image_bytes, ph, phnum, build_id) : 0;
	for (unsigned i = 0; ph && i < phnum && nseg < MAX_SEGMENTS; i++) {
		if (ph[i].p_type != PT_LOAD)
			continue;
		seg[nseg++] = (struct trace_segment){ ph[i].p_vaddr, ph[i].p_memsz, ph[i].p_offset,
						      ((ph[i].p_flags & PF_X) ? TRACE_SEGMENT_EXEC : 0) |
							      ((ph[i].p_flags & PF_W) ? TRACE_SEGMENT_WRITE : 0) |
							      ((ph[i].p_flags & PF_R) ? TRACE_SEGMENT_READ : 0) };
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
			drop_image(ob);
			free(ob->path);
			rm->objects[i] = rm->objects[--rm->n];
			rm->sorted = 0;
		} else {
			i++;
		}
	}
}

int remote_modules_mapped(struct remote_modules *rm, struct trace_writer *w, uint64_t start, uint64_t len,
			  uint64_t file_offset, const char *path, uint64_t now_ns)
{
	return remote_modules_mapping(rm, w, start, start + len, file_offset, 0, path, now_ns);
}

int remote_modules_mapping(struct remote_modules *rm, struct trace_writer *w, uint64_t lo, uint64_t hi,
			   uint64_t file_offset, uint64_t inode, const char *path, uint64_t now_ns)
{
	int vdso = !strcmp(path, "[vdso]");
	if (!vdso && path[0] != '/')
		return 0; /* anonymous, [stack], a JIT's code: no object (a JIT map names it) */
	for (uint32_t i = 0; i < rm->n; i++)
		if (rm->objects[i].text_lo == lo && rm->objects[i].text_hi == hi && !strcmp(rm->objects[i].path, vdso ? "linux-vdso.so.1" : path))
			return 0;
	unmap_range(rm, w, lo, hi, now_ns);
	struct remote_object *ob = add_object(rm);
	rm->sorted = 0;
	ob->id = ++rm->next_id;
	ob->text_lo = lo;
	ob->text_hi = hi;
	ob->map_offset = file_offset;
	ob->path = strdup_or_abort(vdso ? "linux-vdso.so.1" : path);
	if (vdso) {
		ob->image = (uint8_t *)(uintptr_t)getauxval(AT_SYSINFO_EHDR);
		ob->image_is_vdso = 1;
		ob->image_bytes = ob->image ? hi - lo : 0;
	} else {
		map_file(rm, ob, inode);
	}
	unsigned phnum = 0;
	const ElfW(Phdr) *ph = ob->image ? program_headers(ob->image, ob->image_bytes, &phnum) : NULL;
	/* The bias: the PT_LOAD this mapping is of (by its page-aligned file offset) says where vaddr 0 is; the
	 * vdso is mapped whole from its first page. */
	int placed = 0;
	for (unsigned i = 0; ph && i < phnum && !placed; i++) {
		if (ph[i].p_type != PT_LOAD)
			continue;
		if (vdso || (ph[i].p_offset & ~4095ull) == file_offset) {
			ob->bias = lo - (ph[i].p_vaddr & ~4095ull);
			placed = 1;
		}
	}
	if (!placed) {
		ph = NULL;
		drop_image(ob);
	}
	ob->phdr = ph;
	ob->phnum = phnum;
	write_module(rm, w, ob, ph, phnum, now_ns);
	return 1;
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
