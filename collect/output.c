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
 *
 * Where nothing is lost by it (a device, a pipe, a file collect created),
 * the trace's header is written before the program starts, so a
 * destination that takes nothing (/dev/full, a full disk, a pipe with no
 * reader) is refused and the program not run, rather than run unprofiled.
 */
#include "collect.h"

#include "file.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
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
		out->fd = open_existing_output(path);
	if (out->fd < 0 || fstat(out->fd, &st) < 0) {
		fprintf(stderr, "collect: cannot write %s: %s\n", path, output_error_text(errno));
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

int output_starts_early(const struct output *out)
{
	return !out->regular || out->created;
}

struct trace_writer *output_start_trace(struct output *out, int zstd_level)
{
	if (output_claim(out) < 0)
		return NULL;
	/* Before the program runs collect does not ignore SIGPIPE yet (forward.c,
	 * after the fork, so the program inherits its own disposition): a pipe
	 * with no reader must be an error here, not collect's death. */
	struct sigaction ignore, was;
	memset(&ignore, 0, sizeof ignore);
	ignore.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &ignore, &was);
	struct trace_writer *w = trace_writer_open(out->fd, zstd_level);
	int err = errno;
	sigaction(SIGPIPE, &was, NULL);
	if (!w)
		fprintf(stderr, "collect: cannot write the trace to %s: %s\n", out->path ? out->path : "standard output",
			err == EIO ? "zstd failed (out of memory?)" : strerror(err));
	errno = err;
	return w;
}

void output_abandon(struct output *out)
{
	if (out->created)
		unlink(out->path);
	if (out->path)
		close(out->fd);
	out->created = 0;
}
