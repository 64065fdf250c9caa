/*
 * output.h - where a command's file output goes (-o FILE): standard output
 * for "-" or none, otherwise a regular file written beside itself under a
 * temporary name and renamed into place at the end, so a failed command
 * never leaves a truncated file that looks complete. A device, FIFO or
 * symlink is written as it is (renaming over /dev/null would replace it).
 * export, diff and plot write their files through it.
 */
#ifndef IPSCOPE_OUTPUT_H
#define IPSCOPE_OUTPUT_H

#include <stdio.h>

struct output {
	FILE *file;
	const char *path; /* NULL for stdout */
	char *temp_path;  /* NULL when writing path directly */
};

/* Open path (NULL or "-": stdout): 0, or -1 with errno set. */
int output_open(struct output *d, const char *path);
/* Finish (ok: rename into place) or abandon (remove) it: 0, or -1 with errno set. */
int output_close(struct output *d, int ok);
/* The name a message gives it: path, or "standard output". */
const char *output_name(const struct output *d);

#endif
