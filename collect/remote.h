/*
 * remote.h - another process's code as collect -p sees it from outside:
 * the objects it has mapped (from /proc/PID/maps and perf's MMAP2 records),
 * their MODULE records, their frame tables (the agent's .eh_frame rows,
 * built from each object's file: frametab_fde.c), and a walk over those
 * rows on a copy of a thread's stack. Nothing here runs in the target.
 */
#ifndef IPSCOPE_REMOTE_H
#define IPSCOPE_REMOTE_H

#include <stdint.h>
#include <sys/types.h>

struct trace_writer;
struct remote_modules;

/* The objects of process pid (none yet); NULL when out of memory. */
struct remote_modules *remote_modules_new(pid_t pid);
void remote_modules_free(struct remote_modules *rm);
/* Read /proc/PID/maps and write a MODULE record (w may be NULL) for each executable object not known yet;
 * 0, or -1 with errno when the maps cannot be read. */
int remote_modules_scan(struct remote_modules *rm, struct trace_writer *w, uint64_t now_ns);
/* An executable mapping perf reported (MMAP2; inode 0: unknown): a MODULE record when it is a new object; 1 when
 * it was. */
int remote_modules_mapped(struct remote_modules *rm, struct trace_writer *w, uint64_t start, uint64_t len,
			  uint64_t file_offset, uint64_t inode, const char *path, uint64_t now_ns);
/* The process exec'd: every known object is unloaded (MODULE_UNLOAD records) and forgotten. */
void remote_modules_forget(struct remote_modules *rm, struct trace_writer *w, uint64_t now_ns);
/* Whether writing a record failed. */
int remote_modules_write_failed(const struct remote_modules *rm);
/* Objects known, and those whose frame tables could not be built (no file, no .eh_frame_hdr). */
void remote_modules_counts(const struct remote_modules *rm, uint32_t *known, uint32_t *untabled);

/* Whether addr lies in an executable mapping of a known object (a plausible return address). */
int remote_modules_holds_code(struct remote_modules *rm, uint64_t addr);

/* remote_unwind's flags */
#define REMOTE_UNWIND_TRUNCATED 1u /* the walk stopped before the stack's root (no row, a bad read, cap) */

/*
 * Walk a stack from pc, sp, bp (pc exact) over a copy of its bytes [sp, sp + size) into ips (ips[0] = pc),
 * at most cap frames: the number of frames (>= 1). *flags gets REMOTE_UNWIND_TRUNCATED when it did not reach
 * the root. The objects' frame tables are built on first use.
 */
uint32_t remote_unwind(struct remote_modules *rm, uint64_t pc, uint64_t sp, uint64_t bp, const uint8_t *stack,
		       uint64_t size, uint64_t *ips, uint32_t cap, uint32_t *flags);

#endif
