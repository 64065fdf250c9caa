/*
 * fuzz_remote_unwind.c - libFuzzer target for collect -p's reading of
 * another process's objects and stacks (collect/remote_modules.c: ELF and
 * program headers, notes, the .eh_frame_hdr segment; the agent's .eh_frame
 * parser, frametab_fde.c, on it; collect/remote_unwind.c: the walk over a
 * stack copy). The target chooses the files it maps and writes its stack.
 *
 * Input: u32 stack bytes (at most 4096), u64 pc offset into the object's
 * text, u64 rbp, the stack, then the object's whole file. Seeds
 * (make_unwind_seeds.sh) are the test workloads, stripped of debug info.
 * ctest fuzz_remote_unwind runs it with -DIPSCOPE_FUZZ=ON and clang;
 * unit_remote_unwind_fuzz replays the seeds in every build.
 */
#include "remote.h"
#include "remote_internal.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size); /* libFuzzer calls it */

#define TEXT_LO 0x400000ull
#define TEXT_BYTES 0x200000ull
#define STACK_AT 0x7ffff0000000ull

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t stack_bytes;
	uint64_t pc_off, bp;
	if (size < 20)
		return 0;
	memcpy(&stack_bytes, data, 4);
	memcpy(&pc_off, data + 4, 8);
	memcpy(&bp, data + 12, 8);
	stack_bytes %= 4097;
	if (stack_bytes > size - 20)
		stack_bytes = (uint32_t)(size - 20);
	const uint8_t *stack = data + 20, *file = stack + stack_bytes;
	uint64_t file_bytes = size - 20 - stack_bytes;
	struct remote_modules *rm = remote_modules_new(1);
	if (!rm)
		return 0;
	remote_modules_add(rm, TEXT_LO, TEXT_LO + TEXT_BYTES, 0, "/fuzz", -1, file, file_bytes, NULL, 0);
	uint64_t ips[256];
	uint32_t flags;
	uint32_t n = remote_unwind(rm, TEXT_LO + pc_off % TEXT_BYTES, STACK_AT, bp, stack, stack_bytes, ips, 256, &flags);
	if (n < 1 || n > 256)
		__builtin_trap();
	remote_modules_free(rm);
	return 0;
}
