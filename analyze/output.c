/*
 * output.c - a command's file output, complete or not at all (see output.h).
 */
#include "output.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file.h"

int output_open(struct output *d, const char *path)
{
	memset(d, 0, sizeof(*d));
	if (!path || !strcmp(path, "-")) {
		d->file = stdout;
		return 0;
	}
	d->path = path;
	/* Renaming over /dev/null or a FIFO would replace it (as root, a device
	 * node): only a regular file, or a new one, gets the temporary name.
	 * Whatever else exists is written in place, as a stream. */
	struct stat st;
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		int fd = open_existing_output(path);
		if (fd < 0)
			return -1;
		/* A symlink to a regular file: emptied, as fopen's "w" would. */
		if (fstat(fd, &st) < 0 || (S_ISREG(st.st_mode) && ftruncate(fd, 0) < 0) ||
		    !(d->file = fdopen(fd, "w"))) {
			int saved = errno;
			close(fd);
			errno = saved;
			return -1;
		}
		return 0;
	}
	if (asprintf(&d->temp_path, "%s.XXXXXX", path) < 0) {
		d->temp_path = NULL;
		return -1;
	}
	int fd = mkstemp(d->temp_path);
	if (fd < 0) {
		int saved = errno;
		free(d->temp_path);
		d->temp_path = NULL;
		errno = saved;
		return -1;
	}
	/* mkstemp makes the file 0600; give it the mode a plain fopen would. */
	mode_t mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) < 0 || !(d->file = fdopen(fd, "w"))) {
		int saved = errno;
		close(fd);
		unlink(d->temp_path);
		free(d->temp_path);
		d->temp_path = NULL;
		errno = saved;
		return -1;
	}
	return 0;
}

int output_close(struct output *d, int ok)
{
	int ret = 0;
	if (!d->path) {
		if (fflush(stdout) != 0 || ferror(stdout))
			ret = -1;
	} else if (d->file) {
		/* A write that failed before the last one (a FIFO's reader gone) is
		 * remembered by the stream alone. */
		int failed = ferror(d->file);
		if (fclose(d->file) != 0 || failed)
			ret = -1;
		if (d->temp_path && ok && ret == 0 && rename(d->temp_path, d->path) < 0)
			ret = -1;
		if (d->temp_path && (!ok || ret < 0)) {
			int saved = errno;
			unlink(d->temp_path);
			errno = saved;
		}
	}
	free(d->temp_path);
	return ret;
}

const char *output_name(const struct output *d)
{
	return d->path ? d->path : "standard output";
}
