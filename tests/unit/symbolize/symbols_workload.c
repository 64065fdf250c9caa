/*
 * symbols_workload.c - what the symbol table alone must name right
 * (tests/unit/test_symbolize.c, built -O2 -g -fno-toplevel-reorder so the
 * assembly stays where it is written):
 *
 * - asm_loop: a label without type or size right after a sized function,
 *   as zstd's HUF_decompress4X1_usingDTable_internal_fast_asm_loop is: its
 *   code is asm_loop's, not sized_before's, which ended before it;
 * - asm_func: a function symbol without a size, up to the next symbol;
 * - public_name: a public alias of internal_impl (as glibc's malloc is of
 *   __libc_malloc, whose DWARF says __libc_malloc);
 * - calls through the PLT (puts, strlen).
 */
#include <stdio.h>
#include <string.h>

__attribute__((noinline)) int sized_before(int x)
{
	return x * 3 + 1;
}

__asm__(".text\n"
	".p2align 6\n"
	".globl asm_loop\n"
	"asm_loop:\n"
	"\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop\n"
	"\tret\n"
	".p2align 4\n"
	".globl asm_func\n"
	".type asm_func, @function\n"
	"asm_func:\n"
	"\tnop\n\tnop\n\tnop\n\tnop\n"
	"\tret\n"
	".p2align 4\n");

void asm_loop(void);
void asm_func(void);

__attribute__((noinline)) int __internal_impl(int x)
{
	return x ^ 0x55;
}
extern int public_name(int) __attribute__((alias("__internal_impl")));

int main(int argc, char **argv)
{
	asm_loop();
	asm_func();
	puts(argv[0]);
	return sized_before(argc) + public_name(argc) + (int)strlen(argv[0]);
}
