/*
 * file.c - open only regular files, and -o paths that exist (see file.h).
 */
#include "file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int open_regular_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -1;
	struct stat st;
	int err = fstat(fd, &st) != 0 ? errno : !S_ISREG(st.st_mode) ? EINVAL : 0;
	if (err) {
		close(fd);
		errno = err;
		return -1;
	}
	int flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
		err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

const char *open_error_text(int err)
{
	switch (err) {
	case ENOENT:
	case ENOTDIR:
		return "file not found";
	case EACCES:
	case EPERM:
		return "permission denied";
	case EINVAL:
		return "not a regular file";
	default:
		return strerror(err);
	}
}

int open_existing_output(const char *path)
{
	struct stat st;
	/* open(2) of a socket fails with ENXIO, "No such device or address",
	 * which would send the user looking for a missing device. */
	if (stat(path, &st) == 0 && S_ISSOCK(st.st_mode)) {
		errno = EOPNOTSUPP;
		return -1;
	}
	return open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
}

const char *output_error_text(int err)
{
	return err == EOPNOTSUPP ? "a socket, not a file (write to a file, a device or a FIFO)" : strerror(err);
}
