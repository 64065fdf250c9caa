/*
 * remote_internal.h - what remote_modules.c (the objects and their records)
 * and remote_unwind.c (their frame tables and the walk) share.
 */
#ifndef IPSCOPE_REMOTE_INTERNAL_H
#define IPSCOPE_REMOTE_INTERNAL_H

#include <link.h>
#include <stdint.h>
#include <sys/types.h>

struct trace_writer;
struct rows;

/* One object mapped in the target: its executable mapping and, when its file was found, where to read it. */
struct remote_object {
	uint64_t text_lo, text_hi; /* its executable mapping in the target */
	uint64_t bias; /* the target's address less the ELF virtual address */
	uint64_t map_offset; /* the mapping's file offset */
	char *path;
	uint32_t id; /* its MODULE record's */
	int fd; /* its file, until its rows are built; -1: none (or mem) */
	const uint8_t *mem; /* or its file's bytes in memory (collect's own vdso, a fuzzer's input); not owned */
	uint64_t file_bytes;
	ElfW(Phdr) *phdr; /* a copy; NULL when it is not an ELF file placed at this mapping */
	unsigned phnum;
	int tables_tried; /* its rows were built, or tried */
	const struct rows *rows; /* its .eh_frame rows; NULL: none */
};

struct remote_modules {
	pid_t pid;
	struct remote_object *objects;
	uint32_t n, cap;
	uint32_t next_id;
	int sorted; /* objects are sorted by text_lo */
	int write_failed;
	uint32_t last; /* the object the last lookup found */
};

/* An executable mapping [lo, hi) of path at file_offset (inode 0: not checked): a MODULE record when it is a new
 * object (1), else 0. */
int remote_modules_mapping(struct remote_modules *rm, struct trace_writer *w, uint64_t lo, uint64_t hi,
			   uint64_t file_offset, uint64_t inode, const char *path, uint64_t now_ns);

/* Add the object mapped at [lo, hi) from file_offset of path, whose file is fd (or, fd < 0, the bytes at mem; both
 * bytes long; neither: not found), and write its MODULE record (w may be NULL). fd becomes the object's. An image
 * in memory is placed by its first PT_LOAD (the vdso is mapped whole), a file by file_offset. */
struct remote_object *remote_modules_add(struct remote_modules *rm, uint64_t lo, uint64_t hi, uint64_t file_offset,
					 const char *path, int fd, const uint8_t *mem, uint64_t bytes,
					 struct trace_writer *w, uint64_t now_ns);
/* n bytes of the object's file at offset into buf: 0, or -1 (outside the file, a read error). */
int remote_object_read(const struct remote_object *ob, uint64_t offset, void *buf, uint64_t n);

#endif
