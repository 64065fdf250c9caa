/* alloc_exact_lib.c - the library alloc_exact.cpp dlopens (e2e_alloc_exact):
 * its constructor allocates 35 bytes its destructor frees; lib_strdup makes
 * a string the program frees, lib_free frees a block the program made.
 * Loaded with RTLD_DEEPBIND its malloc and free bind to libc's, not the
 * profiler's: the agent must point them at its hooks. */
#include <stdlib.h>
#include <string.h>

char *lib_strdup(const char *s);
void lib_free(void *p);

static void *kept;

__attribute__((constructor)) static void lib_start(void)
{
	kept = malloc(35);
}

__attribute__((destructor)) static void lib_stop(void)
{
	free(kept);
}

char *lib_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *copy = malloc(n);
	return copy ? memcpy(copy, s, n) : NULL;
}

void lib_free(void *p)
{
	free(p);
}
