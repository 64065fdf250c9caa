/*
 * remap.h - map one profile's tables into another: strings, modules,
 * functions, lines and locations, stacks, threads. The one place a filter's
 * copy, a merge of several traces or a diff (new minus base) gets its ids
 * in the destination from.
 *
 * Lazy: an entry is mapped the first time it is asked for (and the ones it
 * refers to with it), so a filter that keeps a tenth of the samples copies
 * a tenth of the stacks. Two ways to map:
 *
 *  - copy (flags 0): every source entry becomes an entry of its own in dst
 *    (strings are interned, so equal strings still share an id). A filter's
 *    copy: ids keep their order when profile_remap_tables runs first.
 *  - by name (PROFILE_REMAP_BY_NAME): entries are matched by what they
 *    mean, never by address, so two runs of a rebuilt program line up:
 *    modules by file name (the path's last component), functions by module
 *    name and function name (and their file with PROFILE_REMAP_LINES),
 *    locations by their inline chain of functions (and file:line with
 *    PROFILE_REMAP_LINES; otherwise a line is its function's file at line
 *    0) with address 0, stacks
 *    by their locations, threads by (pid, tid). Entries dst already has
 *    (from an earlier source) are reused: mapping a base and then a new
 *    profile into one dst puts the same frames on the same ids.
 *  - merge (PROFILE_REMAP_MERGE, below): by name, with addresses.
 */
#ifndef IPSCOPE_REMAP_H
#define IPSCOPE_REMAP_H

#include <stdint.h>

#include "profile.h"

#define PROFILE_REMAP_BY_NAME 0x1u /* match by meaning (see above) */
#define PROFILE_REMAP_LINES 0x2u   /* by name: keep and match file:line */
/*
 * A merge of runs of the same binaries (several traces summed): by name
 * with lines, but a module is its path and build-id (two builds of one
 * library stay apart) and keeps its addresses, and a location keeps its
 * address, moved from src's load address of its module to dst's, so that
 * the same instruction of two runs is one location and source --asm,
 * flat --addresses and pprof still see it.
 */
#define PROFILE_REMAP_MERGE 0x4u
/* Every src thread becomes a dst thread of its own, whatever dst has (runs kept apart). */
#define PROFILE_REMAP_THREADS_APART 0x8u

struct profile_remap;

/* A remapping of src's tables into dst (both outlive it). */
struct profile_remap *profile_remap_new(struct profile *dst, const struct profile *src, unsigned flags);
void profile_remap_free(struct profile_remap *m);

/* The dst id of src entry id (mapping it, and what it refers to, if new).
 * Module UINT32_MAX (outside every module) maps to itself. */
uint32_t profile_remap_string(struct profile_remap *m, uint32_t id);
uint32_t profile_remap_module(struct profile_remap *m, uint32_t id);
uint32_t profile_remap_function(struct profile_remap *m, uint32_t id);
uint32_t profile_remap_location(struct profile_remap *m, uint32_t id);
uint32_t profile_remap_stack(struct profile_remap *m, uint32_t id);
uint32_t profile_remap_thread(struct profile_remap *m, uint32_t id);

/* Map every string, module and function of src, in src's order (a copy
 * then keeps their ids and order: outputs sorted by id stay byte-stable). */
void profile_remap_tables(struct profile_remap *m);

/* dst's value types and run description from src's, when dst has none yet
 * (strings remapped): what a copy or a merge starts with. */
void profile_remap_run(struct profile_remap *m);

#endif
