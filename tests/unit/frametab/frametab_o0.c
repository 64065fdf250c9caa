/* frametab_o0.c - unit_frametab's -O0 code: every frame keeps rbp, its CFA is rbp-based. */
#include "frametab_shared.h"

int o0_recurse(int depth)
{
	if (depth == 0) {
		compare_here("-O0 recursion");
		return 0;
	}
	int r = o0_recurse(depth - 1);
	return r + 1;
}

long o0_spin(long n)
{
	unsigned long s = 0;
	for (long i = 0; i < n; i++)
		s += (unsigned long)i ^ (s >> 3);
	return (long)(s >> 1);
}
