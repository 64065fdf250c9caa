/*
 * output.h - where a command's file output goes (-o FILE): standard output
 * for "-" or none, otherwise a regular file written beside itself under a
 * temporary name and renamed into place at the end, so a failed command
 * never leaves a truncated file that looks complete. A device, FIFO or
 * symlink is written in place through d->file, as a stream (renaming over
 * /dev/null would replace it); a socket is refused.
 * export, diff and plot write their files through it.
 */
#ifndef IPSCOPE_OUTPUT_H
#define IPSCOPE_OUTPUT_H

#include <stdio.h>

struct output {
	FILE *file;
	const char *path; /* NULL for stdout */
	char *temp_path;  /* NULL when writing path in place (a stream) */
};

/* Open path (NULL or "-": stdout): 0, or -1 with errno set (say it with
 * output_error_text, file.h). */
int output_open(struct output *d, const char *path);
/* Finish (ok: rename into place) or abandon (remove) it: 0, or -1 with errno set. */
int output_close(struct output *d, int ok);
/* The name a message gives it: path, or "standard output". */
const char *output_name(const struct output *d);

#endif
