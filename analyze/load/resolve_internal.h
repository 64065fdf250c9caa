/*
 * resolve_internal.h - what resolve.c (distinct addresses, symbolization)
 * and resolve_modules.c (module maps: ranges, processes, epochs, each
 * module's symbolizer opened once) share: the resolver itself. resolve.c
 * calls resolve_modules.c, never the other way.
 */
#ifndef IPSCOPE_RESOLVE_INTERNAL_H
#define IPSCOPE_RESOLVE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "hashmap.h"
#include "resolve.h"

struct symbol_module;

struct module_info {
	uint8_t build_id[64];
	uint32_t build_id_len;
	struct symbol_module *sm; /* NULL until opened */
	int opened;
	int names_only; /* a system module none of whose frames a report shows: symbol tables only */
	uint64_t key; /* hash of path, build-id, bias and segments: equal records share the module */
};

struct range {
	uint64_t start, end;
	uint32_t module;
	uint32_t order; /* without time to decide, later records win where ranges overlap */
	uint32_t overlapped; /* another module's range shares addresses with this one */
	uint32_t pid, trace_id; /* the record it came from, for unload records */
	uint64_t load_ns, unload_ns; /* live interval; unload_ns UINT64_MAX while mapped */
};

struct address {
	uint64_t ip;
	uint32_t is_return;
	uint32_t location;
	uint32_t module; /* decided when added (overlapping or multi-process traces), else RESOLVE_ANY_MODULE */
	uint32_t pid;
};

#define RESOLVE_ANY_MODULE (UINT32_MAX - 1)

struct resolver {
	struct profile *p;
	const struct load_options *o;
	struct symbolizer *sym;
	struct module_info *modules;
	uint32_t modules_cap;
	struct range *ranges;
	uint32_t nranges, ranges_cap;
	uint32_t first_pid; /* the pid of the first module record */
	int many_pids; /* module records of more than one process */
	struct hashmap module_keys; /* module_info key -> module index */
	struct address *addresses;
	uint32_t naddresses, addresses_cap;
	struct hashmap leaf_index, return_index; /* ip -> address index */
	int overlaps;                           /* some ranges overlap: modules chosen by epoch */
	uint64_t *unloads;                      /* sorted unload times: epoch boundaries */
	uint32_t nunloads;
	struct hashmap module_index;             /* (module, ip, is_return) -> address index */
	struct hashmap string_cache;             /* symbolizer string pointer -> string id */
	struct hashmap functions;                 /* profile functions by key */
	const struct profile_function *seek;
	uint32_t *parameters;                   /* function -> name with C++ parameters */
	uint32_t parameters_cap;
	int downloading;                        /* a debuginfod download under way */
	char **warned;                          /* warnings said so far */
	uint32_t nwarned, warned_cap;
	uint64_t unresolved;
	struct jit_symbols *jit;                /* JIT code outside every module, or NULL (owned) */
};

/* Index of the module whose range holds addr in process pid, or UINT32_MAX; with an epoch, one mapped then
 * is preferred, otherwise (and among equals) the one recorded last. After resolver_finish_modules. */
uint32_t resolve_find_module(const struct resolver *R, uint32_t pid, uint64_t addr, uint32_t epoch);
/* Open module index (once); want: the sorted addresses to be looked up in it (NULL: any). */
struct symbol_module *resolve_open_module(struct resolver *R, uint32_t index, const uint64_t *want, size_t nwant);

#endif
