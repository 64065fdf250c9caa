/*
 * inline_workload.c - symbolization workload: mix_step (inline_helper.h) is
 * inlined into churn, which stays a function of its own (noinline). Its
 * output depends on argv so nothing is computed at compile time.
 */
#include <stdio.h>
#include <stdlib.h>

#include "inline_helper.h"

#ifndef VARIANT
#define VARIANT 0 /* a rebuild with another value gets another build-id */
#endif

__attribute__((noinline)) unsigned long churn(unsigned long seed, unsigned long n)
{
	unsigned long x = seed + VARIANT;
	for (unsigned long i = 0; i < n; i++)
		x = mix_step(x, i); /* MARK:call */
	return x;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000;
	printf("%lu\n", churn((unsigned long)argc, n));
	return 0;
}
