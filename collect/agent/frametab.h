/*
 * frametab.h - the agent's table-driven unwinder (frametab.c): frame tables
 * built from each loaded object's .eh_frame when it is mapped, and a walk
 * over them that reads the stack and nothing else. No dependency on the
 * rest of the agent, so a unit test can compare it with libunwind.
 */
#ifndef IPSCOPE_FRAMETAB_H
#define IPSCOPE_FRAMETAB_H

#include <link.h>
#include <stdint.h>

/* Why a walk gave up (frametab_unwind's negative returns), for the statistics of a debug build. */
enum frametab_stop {
	FRAMETAB_NO_TABLE = -1, /* a pc outside every table, or in a gap between FDEs */
	FRAMETAB_UNMODELLED = -2, /* a CFA rule the table does not express (expressions, other registers) */
	FRAMETAB_BAD_STACK = -3, /* a read outside [sp, stack_hi), or a CFA that does not climb */
	FRAMETAB_CHANGED = -4, /* the tables were being republished meanwhile */
	FRAMETAB_UNBUILT = -5, /* an object's rows are not built yet, and this walk is the first to ask */
};

/* Publish the objects iterate lists, forget those no longer listed; eager: build their rows now, else
 * when a walk needs them (frametab_build_wanted). Not in a signal handler (it maps memory and parses),
 * one caller at a time with the next (modules.c's lock). */
void frametab_rescan(int (*iterate)(int (*)(struct dl_phdr_info *, size_t, void *), void *), int eager);
/* Whether a walk met an object whose rows are not built yet. Async-signal-safe. */
int frametab_wanted(void);
/* Ask for the rows of the pcs of a stack another unwinder took (ips[0] exact, the rest return addresses),
 * so that the next walk there need not decline; 1 when this was the first ask since the last build (wake
 * the builder). Async-signal-safe. */
int frametab_want(const uint64_t *ips, uint32_t n);
/* Build the rows walks asked for; the same rules as frametab_rescan. */
void frametab_build_wanted(int (*iterate)(int (*)(struct dl_phdr_info *, size_t, void *), void *));
/* A forked child: a rescan the fork interrupted in another thread is forgotten (tables are kept). */
void frametab_forget(void);
/* A thread's cache of rows it looked up and of its last walk (32 KiB, mmap'd); NULL when out of memory. Not in a handler. */
struct frametab_cache;
struct frametab_cache *frametab_cache_new(void);
void frametab_cache_free(struct frametab_cache *cache);
/*
 * Walk the stack from pc, sp, bp (pc exact: an interrupted or current pc, not a return address) into
 * ips (ips[0] = pc), at most cap frames, reading only [sp, stack_hi) of the stack. The number of frames
 * when the walk reached the end of the stack or cap, else a negative enum frametab_stop (the caller
 * unwinds another way). cache: the calling thread's own, or NULL. token (or NULL): when the walk answered
 * with cache, nonzero, and equal to the token of the cache's walk before it exactly when its frames (ips
 * and count) are that walk's too; else 0. Async-signal-safe: no lock, no allocation, no system call.
 */
int frametab_unwind(uint64_t pc, uint64_t sp, uint64_t bp, uint64_t stack_lo, uint64_t stack_hi, uint64_t *ips,
		    uint32_t cap, struct frametab_cache *cache, uint64_t *token);
/* Objects with rows built, rows in them, blocks of objects built by the block (for tests and statistics). */
void frametab_stats(uint32_t *tables, uint64_t *rows, uint32_t *blocks);

#endif
