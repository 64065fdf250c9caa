/*
 * tar.h - writing a tar archive (POSIX ustar, with GNU long names for
 * members whose name does not fit), the format analyze archive packs into,
 * as perf archive does: any tar unpacks it.
 */
#ifndef IPSCOPE_TAR_H
#define IPSCOPE_TAR_H

#include <stddef.h>
#include <stdio.h>

struct tar_writer {
	FILE *out;
	int error; /* errno of the first write error, 0 while all is well */
};

/* Append member with the contents of the regular file at path (opened
 * without blocking, checked before reading): 0, or -1 with a one-line
 * reason in why (the archive is unchanged unless t->error is set). */
int tar_add_file(struct tar_writer *t, const char *member, const char *path, char *why,
		 size_t why_len);
/* Append member holding len bytes of data: 0, or -1 (t->error). */
int tar_add_data(struct tar_writer *t, const char *member, const void *data, size_t len);
/* The two zero blocks that end an archive: 0, or -1 (t->error). */
int tar_finish(struct tar_writer *t);

#endif
