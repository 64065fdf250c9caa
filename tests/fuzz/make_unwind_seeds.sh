#!/bin/sh
# make_unwind_seeds.sh - the seeds of fuzz_remote_unwind, made at build time:
# each program or library given, stripped of debug info (its .eh_frame and
# headers are what is read), behind a header of a 512-byte stack of zeros
# and a pc a little into its text.
#
#   make_unwind_seeds.sh OBJCOPY OUT BINARY...
set -eu
objcopy=$1 out=$2
shift 2
rm -rf "$out"
mkdir -p "$out"
for bin in "$@"; do
	name=$(basename "$bin")
	"$objcopy" --strip-debug "$bin" "$out/$name.elf"
	# u32 512 (stack bytes), u64 0x1040 (pc offset), u64 0 (rbp), then the stack
	{
		printf '\000\002\000\000\100\020\000\000\000\000\000\000\000\000\000\000\000\000\000\000'
		head -c 512 /dev/zero
		cat "$out/$name.elf"
	} >"$out/$name"
	rm "$out/$name.elf"
done
