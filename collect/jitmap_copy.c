/*
 * jitmap_copy.c - the JIT map copy (see jitmap_copy.h). The map is read after the
 * program exited, so it is complete; it is copied as written, in records of
 * whole lines (TRACE_JIT_MAP_MAX_TEXT bytes at most each), and analyze
 * parses it: a damaged line costs that line, not the trace.
 */
#include "jitmap_copy.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"

#define MAX_COPY ((uint64_t)256 << 20) /* a map larger than this is cut */

int jitmap_copy(struct trace_writer *w, pid_t pid, uid_t uid, uint64_t start_realtime_ns,
		uint64_t time_ns, char *message, size_t message_len)
{
	char path[64];
	snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)pid);
	message[0] = '\0';
	/* /tmp is everyone's: another user could leave a FIFO, a device or a
	 * symlink there under the program's pid. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT)
			snprintf(message, message_len, "%s: %s: JIT frames stay unnamed", path,
				 errno == ELOOP ? "a symbolic link, not copied" : strerror(errno));
		return 0;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != uid) {
		snprintf(message, message_len, "%s: not a regular file of yours: not copied", path);
		close(fd);
		return 0;
	}
	/* A pid is reused: a map not written during this run is another
	 * program's, whose names would be wrong here. */
	uint64_t written = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
	if (written + 1000000000ull < start_realtime_ns) { /* a second of slack: coarse clocks */
		snprintf(message, message_len, "%s: last written before this run (a stale map of "
			 "an earlier process with this pid): not copied", path);
		close(fd);
		return 0;
	}
	uint8_t *buf = realloc_or_abort(NULL, TRACE_JIT_MAP_MAX_TEXT);
	size_t have = 0;
	uint64_t copied = 0;
	int rc = 0;
	for (;;) {
		ssize_t got = read(fd, buf + have, TRACE_JIT_MAP_MAX_TEXT - have);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			snprintf(message, message_len, "%s: %s: copied in part", path, strerror(errno));
			got = 0;
		}
		have += (size_t)got;
		/* A record ends at the last whole line, unless one line fills it. */
		size_t cut = have;
		if (got > 0 && have == TRACE_JIT_MAP_MAX_TEXT) {
			uint8_t *nl = memrchr(buf, '\n', have);
			if (nl != NULL)
				cut = (size_t)(nl - buf) + 1;
		} else if (got > 0) {
			continue; /* room left: read more first */
		}
		if (cut > 0) {
			struct trace_jit_map j = {(uint32_t)pid, time_ns, path, buf, (uint32_t)cut};
			if (trace_writer_jit_map(w, &j) < 0) {
				rc = -1;
				break;
			}
			copied += cut;
			memmove(buf, buf + cut, have - cut);
			have -= cut;
		}
		if (got == 0)
			break;
		if (copied >= MAX_COPY) {
			snprintf(message, message_len, "%s: larger than %llu MiB: the rest not copied", path,
				 (unsigned long long)(MAX_COPY >> 20));
			break;
		}
	}
	free(buf);
	close(fd);
	return rc;
}
