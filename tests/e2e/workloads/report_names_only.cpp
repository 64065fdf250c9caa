/*
 * report_names_only - what a report that hides system frames must name
 * exactly as if it had read libc's debug info (tests/e2e/report_names_only.sh):
 *  - tcache_get(long), a C++ function with the short name of a function
 *    glibc inlines into malloc: with libc's DWARF read, the two are two
 *    overloads of one name;
 *  - tcache_init, an atexit handler named as an allocator internal: an
 *    allocation profile strips it from its stacks, which then hold libc's
 *    frames alone (their innermost one shown);
 *  - system calls (getppid), and whatever the start and the exit run in
 *    libc and the loader alone.
 * usage: report_names_only ROUNDS
 */
#include <cstdlib>
#include <unistd.h>

void *volatile sink;

__attribute__((noinline)) long tcache_get(long n)
{
	long s = 0;
	for (long i = 0; i < n; i++) {
		void *p = malloc(32);
		sink = p;
		free(p);
		s += i;
		if (i % 64 == 0)
			s += getppid();
	}
	return s;
}

__attribute__((noinline)) static void tcache_init()
{
	for (int i = 0; i < 1000; i++) {
		sink = malloc(32);
		free(sink);
	}
}

int main(int argc, char **argv)
{
	atexit(tcache_init);
	return tcache_get(argc > 1 ? atol(argv[1]) : 3000000) == 1;
}
