/*
 * output.c - where the trace goes: a file, or a device or pipe (-o /dev/stdout,
 * -o /dev/null, a FIFO), or collect's stdout.
 *
 * The destination is opened before the program runs, so a path collect
 * cannot write fails fast, and a terminal is refused (a binary trace would
 * garble it). A regular file is emptied and made private only once the
 * program has started: if it cannot be run, a file collect created is
 * removed and an existing one is left as it was. Devices and pipes are
 * written as streams: never truncated, never chmod'ed (they are not ours).
 */
#include "collect.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int refuse_terminal(void)
{
	fprintf(stderr, "collect: refusing to write a binary trace to a terminal: use -o FILE or redirect stdout\n");
	return 2;
}

int output_open(struct output *out, const char *path)
{
	struct stat st;
	memset(out, 0, sizeof *out);
	out->path = path;
	if (!path) {
		out->fd = STDOUT_FILENO;
		out->is_stdout = 1;
		return isatty(STDOUT_FILENO) ? refuse_terminal() : 0;
	}
	out->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (out->fd >= 0) {
		out->created = out->regular = 1;
		return 0;
	}
	if (errno == EEXIST)
		out->fd = open(path, O_WRONLY | O_CLOEXEC);
	if (out->fd < 0 || fstat(out->fd, &st) < 0) {
		fprintf(stderr, "collect: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	out->regular = S_ISREG(st.st_mode);
	if (!out->regular && isatty(out->fd)) {
		close(out->fd);
		return refuse_terminal();
	}
	/* -o /dev/stdout, or any other name of collect's stdout: the program must not write into the trace. */
	struct stat so;
	out->is_stdout = fstat(STDOUT_FILENO, &so) == 0 && so.st_dev == st.st_dev && so.st_ino == st.st_ino;
	return 0;
}

int output_claim(struct output *out)
{
	struct stat st;
	if (!out->path || !out->regular || out->created)
		return 0;
	/* It holds the command line and addresses: private, like a file collect creates. */
	if (ftruncate(out->fd, 0) < 0 || fstat(out->fd, &st) < 0 ||
	    (st.st_uid == geteuid() && fchmod(out->fd, 0600) < 0)) {
		fprintf(stderr, "collect: cannot write %s: %s\n", out->path, strerror(errno));
		return -1;
	}
	return 0;
}

void output_abandon(struct output *out)
{
	if (out->created)
		unlink(out->path);
	if (out->path)
		close(out->fd);
	out->created = 0;
}
