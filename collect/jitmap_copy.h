/*
 * jitmap_copy.h - copy a JIT runtime's perf map (/tmp/perf-PID.map) into the
 * trace at the end of the run, so that analyze can name JIT code later,
 * when the file may be gone.
 */
#ifndef IPSCOPE_JITMAP_COPY_H
#define IPSCOPE_JITMAP_COPY_H

#include <stddef.h>
#include <sys/types.h>

#include "trace.h"

/*
 * Copy /tmp/perf-PID.map, if the program wrote one, as JIT_MAP records: only
 * a regular file owned by uid, opened without following a symlink and
 * without blocking, last written after the run started (start_realtime_ns:
 * an older one was left by an earlier process with the same pid). Returns 0
 * (message "" when all is well or there is no map, else one line on why it
 * was not or only partly copied), or -1 with errno when the trace could not
 * be written.
 */
int jitmap_copy(struct trace_writer *w, pid_t pid, uid_t uid, uint64_t start_realtime_ns,
		uint64_t time_ns, char *message, size_t message_len);

#endif
