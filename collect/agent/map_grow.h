/*
 * map_grow.h - the agent's one growth idiom for memory it must not take
 * from malloc (its hooks are malloc: a scan or a table build that grew with
 * realloc would record itself, or count as the agent's own allocating while
 * a program's signal handler allocates). A mapping, grown by mremap.
 * Header-only so that frametab's files, which a unit test builds without the
 * rest of the agent, share it.
 */
#ifndef IPSCOPE_MAP_GROW_H
#define IPSCOPE_MAP_GROW_H

#include <stddef.h>
#include <sys/mman.h>

/* A private anonymous mapping of new_bytes holding old's first old_bytes (old NULL: a new one); NULL if refused. */
static inline void *map_grow(void *old, size_t old_bytes, size_t new_bytes)
{
	void *m = old ? mremap(old, old_bytes, new_bytes, MREMAP_MAYMOVE)
		      : mmap(NULL, new_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return m == MAP_FAILED ? NULL : m;
}

#endif
