#!/bin/sh
# gen_program.sh - write a large C program for the symbolizer's agreement
# test: MODULES source files whose functions gcc -O2 inlines into each other
# (several levels, across a shared header), splits into .cold and .part
# clones, and scatters over .text, .text.unlikely and .text.startup, so that
# compile units need range lists.
#
#   gen_program.sh DIR MODULES
set -eu
dir=$1 modules=$2
mkdir -p "$dir"

cat > "$dir/common.h" <<'H'
/* common.h - helpers every module inlines: frames in a header of their own. */
#ifndef COMMON_H
#define COMMON_H
#include <stdio.h>
#include <stdlib.h>
static inline unsigned rotate(unsigned x, unsigned r)
{
	r &= 31;
	return r ? (x << r) | (x >> (32 - r)) : x;
}
static inline unsigned scramble(unsigned x, unsigned k)
{
	x ^= rotate(x, k) * 2654435761u;
	x += rotate(x ^ k, 7);
	return x;
}
__attribute__((cold, noinline)) void report_unusual(const char *where, unsigned value);
#endif
H

i=0
while [ "$i" -lt "$modules" ]; do
	cat > "$dir/module_$i.c" <<C
/* module_$i.c - generated: inline chains, a cold path, a switch. */
#include "common.h"

static inline unsigned leaf_$i(unsigned x)
{
	for (int k = 0; k < ($i % 5) + 2; k++)
		x = scramble(x, (unsigned)k + $i);
	return x;
}

static inline unsigned middle_$i(unsigned x, unsigned y)
{
	unsigned r = leaf_$i(x) ^ leaf_$i(y + $i);
	if (__builtin_expect(r == 0xdeadbeefu, 0))
		report_unusual("middle_$i", r);
	return r;
}

static unsigned table_$i(unsigned x)
{
	switch (x % 6) {
	case 0: return middle_$i(x, 1);
	case 1: return rotate(x, 3) + $i;
	case 2: return scramble(x, 11);
	case 3: return x * 7 + leaf_$i(x);
	case 4: return middle_$i(x >> 1, x);
	default: return x ^ $i;
	}
}

unsigned entry_$i(const unsigned *v, int n)
{
	unsigned s = $i;
	for (int k = 0; k < n; k++) {
		s += table_$i(v[k]);
		if (__builtin_expect(v[k] == 0x12345u, 0)) {
			fprintf(stderr, "entry_$i: unusual %u\n", v[k]);
			s ^= middle_$i(s, v[k]);
		}
	}
	return s;
}
C
	i=$((i + 1))
done

{
	echo "/* main.c - generated: calls every module. */"
	echo '#include "common.h"'
	i=0
	while [ "$i" -lt "$modules" ]; do
		echo "unsigned entry_$i(const unsigned *v, int n);"
		i=$((i + 1))
	done
	cat <<'M'
void report_unusual(const char *where, unsigned value)
{
	fprintf(stderr, "%s: %u\n", where, value);
	abort();
}

int main(int argc, char **argv)
{
	unsigned v[64], s = 0;
	for (int k = 0; k < 64; k++)
		v[k] = (unsigned)(argc * 31 + k);
	(void)argv;
M
	i=0
	while [ "$i" -lt "$modules" ]; do
		echo "	s += entry_$i(v, 64);"
		i=$((i + 1))
	done
	printf '\tprintf("%%u\\n", s);\n'
	echo '	return 0;'
	echo '}'
} > "$dir/main.c"
