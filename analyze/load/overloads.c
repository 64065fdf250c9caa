/*
 * overloads.c - see overloads.h. Two functions collide when they share a
 * short name and their names with parameters differ: geometry::spin(double)
 * and geometry::spin(long) both read geometry::spin. A clone (foo.isra.0)
 * or the same function in two modules has the same parameters: no change.
 * Functions of system modules collide only with each other, the program's
 * with each other: a program's tcache_get(long) is not renamed for glibc's
 * own inlined tcache_get, which only libc's debug info knows and which a
 * report that hides system frames may not read (analyze/load/load_stacks.c).
 */
#include "overloads.h"

#include <stdlib.h>

#include "alloc.h"
#include "hashmap.h"

void overloads_tell_apart(struct profile *p, const uint32_t *parameters)
{
	struct hashmap first; /* name -> first function with it */
	hashmap_init(&first, p->nfunctions);
	uint8_t *ambiguous = calloc_or_abort(p->nstrings, 1);
	for (uint32_t i = 0; i < p->nfunctions; i++) {
		unsigned system = (p->functions[i].flags & PROFILE_FUNCTION_SYSTEM) != 0;
		uint32_t *slot = hashmap_slot(&first, (uint64_t)p->functions[i].name << 1 | system);
		if (*slot == HASHMAP_NONE)
			*slot = i;
		else if (parameters[*slot] != parameters[i])
			ambiguous[p->functions[i].name] |= (uint8_t)(1u << system);
	}
	for (uint32_t i = 0; i < p->nfunctions; i++) {
		unsigned system = (p->functions[i].flags & PROFILE_FUNCTION_SYSTEM) != 0;
		if ((ambiguous[p->functions[i].name] >> system & 1) && !(p->functions[i].flags & PROFILE_FUNCTION_UNKNOWN))
			p->functions[i].name = parameters[i];
	}
	free(ambiguous);
	hashmap_free(&first);
}
