/* alloc_api_lib.c - a library with an allocator's own API, as jemalloc has
 * beside malloc (mallocx), for e2e_alloc_exact: loaded, collect must say
 * that what goes through it is not recorded. It allocates nothing itself. */
#include <stddef.h>

void *mallocx(size_t size, int flags);

void *mallocx(size_t size, int flags)
{
	(void)size;
	(void)flags;
	return NULL;
}
