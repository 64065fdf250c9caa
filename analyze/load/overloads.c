/*
 * overloads.c - see overloads.h. Two functions collide when they share a
 * short name and their names with parameters differ: geometry::spin(double)
 * and geometry::spin(long) both read geometry::spin. A clone (foo.isra.0)
 * or the same function in two modules has the same parameters: no change.
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
		uint32_t *slot = hashmap_slot(&first, p->functions[i].name);
		if (*slot == HASHMAP_NONE)
			*slot = i;
		else if (parameters[*slot] != parameters[i])
			ambiguous[p->functions[i].name] = 1;
	}
	for (uint32_t i = 0; i < p->nfunctions; i++)
		if (ambiguous[p->functions[i].name] && !(p->functions[i].flags & PROFILE_FUNCTION_UNKNOWN))
			p->functions[i].name = parameters[i];
	free(ambiguous);
	hashmap_free(&first);
}
