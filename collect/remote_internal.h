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

/* One object mapped in the target: its executable mapping and, when its file was found, that file's image. */
struct remote_object {
	uint64_t text_lo, text_hi; /* its executable mapping in the target */
	uint64_t bias; /* the target's address less the ELF virtual address */
	uint64_t map_offset; /* the mapping's file offset */
	char *path;
	uint32_t id; /* its MODULE record's */
	uint8_t *image; /* the file, mapped read-only (or collect's own vdso); NULL: not found */
	uint64_t image_bytes;
	int image_is_vdso;
	const ElfW(Phdr) *phdr; /* in image; NULL when it is not an ELF file placed at this mapping */
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

#endif
