/*
 * file.h - opening the files a trace names (module paths, debug links,
 * build-id paths, --debug-dir candidates). A trace is untrusted: such a path
 * may be a FIFO, a device or a directory, and a plain open() of a FIFO
 * blocks forever. Only regular files are opened here.
 */
#ifndef IPSCOPE_FILE_H
#define IPSCOPE_FILE_H

/*
 * Open path read-only (close-on-exec) if it is a regular file: the open
 * itself never blocks (O_NONBLOCK, cleared again after fstat). Returns the
 * fd, or -1 with errno set: the open's own (ENOENT, EACCES...), or EINVAL
 * when path is not a regular file.
 */
int open_regular_file(const char *path);

/* The reason open_regular_file failed, in a few words: "file not found",
 * "permission denied", "not a regular file", or strerror(err). */
const char *open_error_text(int err);

#endif
