/*
 * file.h - opening the files a trace names (module paths, debug links,
 * build-id paths, --debug-dir candidates). A trace is untrusted: such a path
 * may be a FIFO, a device or a directory, and a plain open() of a FIFO
 * blocks forever. Only regular files are opened here. And the one way
 * collect and analyze open an -o path that already exists, which may be a
 * device or a FIFO that must be written, never replaced.
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

/*
 * Open an existing path to write it as a shell's > would, but never create
 * or truncate it: a device or a FIFO (blocking until it has a reader) is
 * written as a stream; a regular file, which the caller may truncate,
 * stays as it was. O_NOCTTY: a terminal named by -o never becomes the
 * controlling one. Returns the fd (close-on-exec), or -1 with errno set: the
 * open's own, or EOPNOTSUPP for a socket (open(2) cannot write one).
 */
int open_existing_output(const char *path);

/* Why an output could not be opened or written: "a socket, not a file"
 * for EOPNOTSUPP, else strerror(err). */
const char *output_error_text(int err);

#endif
