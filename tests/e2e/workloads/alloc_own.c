/*
 * alloc_own - a program with an allocator of its own (as one with jemalloc
 * or mimalloc linked statically): it defines malloc, free, calloc and
 * realloc itself (a bump allocator over a static arena), so the executable's
 * definitions win over any LD_PRELOAD library's and the profiler's hooks are
 * never called for them. Known answer (e2e_alloc_cases): collect --allocs
 * says that the program allocates with a malloc of its own and names it,
 * instead of an empty allocation profile. It makes 1000 allocations of 64 B
 * and frees them (free does nothing here).
 */
#include <stddef.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

static _Alignas(16) unsigned char arena[32 << 20];
static size_t used;

void *malloc(size_t size)
{
	size_t start = (used + 16 + 15) & ~(size_t)15;
	if (size > sizeof arena || start + size > sizeof arena)
		return NULL;
	memcpy(arena + start - sizeof size, &size, sizeof size);
	used = start + size;
	return arena + start;
}

void free(void *p)
{
	(void)p;
}

void *calloc(size_t n, size_t size)
{
	size_t bytes;
	if (__builtin_mul_overflow(n, size, &bytes))
		return NULL;
	return malloc(bytes); /* the arena is static: zeroed, never reused */
}

void *realloc(void *p, size_t size)
{
	void *q = malloc(size);
	if (q && p) {
		size_t old;
		memcpy(&old, (unsigned char *)p - sizeof old, sizeof old);
		memcpy(q, p, old < size ? old : size);
	}
	return q;
}

int main(void)
{
	static void *blocks[1000];
	uint64_t sum = 0;
	for (int i = 0; i < 1000; i++) {
		blocks[i] = malloc(64);
		if (!blocks[i])
			return 1;
		memset(blocks[i], i, 64);
		sum += ((unsigned char *)blocks[i])[7];
	}
	for (int i = 0; i < 1000; i++)
		free(blocks[i]);
	return sum == 0; /* 0: all went well */
}
