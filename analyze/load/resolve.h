/*
 * resolve.h - from raw instruction pointers to profile locations: module
 * maps, distinct-address bookkeeping and symbolization (load.c's passes 2
 * and 3; see load.c for the whole picture).
 */
#ifndef IPSCOPE_RESOLVE_H
#define IPSCOPE_RESOLVE_H

#include <stdint.h>

#include "load.h"
#include "profile.h"
#include "trace.h"

struct resolver;

struct resolver *resolver_new(struct profile *p, const struct load_options *o);
void resolver_free(struct resolver *R);

/* A module record: becomes a profile module and address ranges. */
void resolver_add_module(struct resolver *R, const struct trace_module *m);
/* An unload record: the module's live interval ends. */
void resolver_unload_module(struct resolver *R, const struct trace_module_unload *u);
/* After the last module: index the ranges (and open every module if asked). */
void resolver_finish_modules(struct resolver *R);

/* Pass as epoch where time does not matter. */
#define RESOLVE_ANY_EPOCH UINT32_MAX
/* The epoch (span between module unloads) a sample taken at time_ns belongs to. */
uint32_t resolver_epoch(const struct resolver *R, uint64_t time_ns);
/* Does this frame's address lie where modules of process pid overlapped, so that time decides its module? */
int resolver_is_ambiguous(const struct resolver *R, uint32_t pid, uint64_t ip, int is_return);
/*
 * Note one frame's ip in process pid; is_return: a return address (looked
 * up at ip - 1); epoch: when the sample was taken, for ambiguous addresses
 * (else RESOLVE_ANY_EPOCH). Returns the distinct address's index.
 */
uint32_t resolver_add_address(struct resolver *R, uint32_t pid, uint64_t ip, int is_return, uint32_t epoch);
/* Whether module records came from more than one process (stacks are then resolved per process). */
int resolver_many_processes(const struct resolver *R);
/* resolver_resolve's which: the addresses outside system modules (the program's, JIT code, none), those in them. */
#define RESOLVE_PROGRAM 1u
#define RESOLVE_SYSTEM 2u
/* Symbolize every distinct address of which (RESOLVE_*) once, in address order; the last call also tells
 * overloads apart (every address resolved by then). */
void resolver_resolve(struct resolver *R, unsigned which);
/* The module of a distinct address (UINT32_MAX: none); whether it is a system module. */
uint32_t resolver_address_module(const struct resolver *R, uint32_t address, int *system);
/* System modules are to be opened names only (symbolizer_module_names)... */
void resolver_system_names_only(struct resolver *R);
/* ...but this one (and every mapping of its file) with its debug info: a report shows one of its frames. */
void resolver_module_detail(struct resolver *R, uint32_t module);
/* Profile location of a distinct address (after resolver_resolve). */
uint32_t resolver_location(const struct resolver *R, uint32_t address);

uint64_t resolver_distinct(const struct resolver *R);
uint64_t resolver_unresolved(const struct resolver *R);

/* Name addresses outside every module from these JIT symbols (the
 * resolver owns them from then on). */
struct jit_symbols;
void resolver_set_jit(struct resolver *R, struct jit_symbols *jit);

#endif
