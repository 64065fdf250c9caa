#!/bin/sh
# make_links.sh - build the workloads whose DWARF lives in other files, as
# Debian packages and large C++ projects ship it, for unit_symbolize_links:
#
#   make_links.sh CC SOURCE_DIR GENERATED_DIR OUT
#
#   OUT/dwz/        gen5 and gen4 stripped, their debug files compressed by
#                   dwz -m with a common file (.gnu_debugaltlink, the file
#                   found by its relative name), and solo's (gen5 again) by
#                   a plain dwz (partial units within the file)
#   OUT/dwz5/       the same with dwz -5 (DWARF 5 .debug_sup, strp_sup and
#                   ref_sup forms), the common file only under
#                   OUT/dwz5/store/.build-id/ (found by build-id)
#   OUT/split4/     the generated program built -gsplit-dwarf -gdwarf-4:
#                   its .dwo files beside the objects
#   OUT/split5/     the same in DWARF 5
#   OUT/dwp4/       split4's program with a binutils dwp package, no .dwo
#   OUT/dwp5/       inline_workload.c split in DWARF 5 with an llvm-dwp
#                   package, no .dwo (llvm-dwp 14 hangs merging several gcc
#                   DWARF 5 units, and binutils dwp crashes on DWARF 5)
#   OUT/split-store/inline_workload
#                   split DWARF 5 whose .dwo is only in OUT/split-store/store/,
#                   a debug directory
#   OUT/split-bad/{missing,truncated,other}/inline_workload
#                   split DWARF 5 whose .dwo is gone, cut to a third, or
#                   from another build (a variant's: another DWO id)
#   OUT/split-corrupt/, OUT/dwz-corrupt/
#                   what the damaged-file test overwrites (its own copies)
#
# The reference builds are the plain ones tests/symbolize.cmake makes
# (generated_dwarf4, generated_dwarf5, cpp_workload, inline_workload): the
# same compiler and flags, so the same code at the same addresses.
set -eu
cc=$1 src=$2 gen=$3 out=$4
rm -rf "$out"
mkdir -p "$out"
cd "$out"

# debug_split FILE: FILE stripped, its DWARF in FILE.debug (debuglink).
debug_split() {
	objcopy --only-keep-debug "$1" "$1.debug"
	objcopy --strip-debug --add-gnu-debuglink="$1.debug" "$1" "$1.stripped"
	mv "$1.stripped" "$1"
}

# build_generated DIR DWARF_VERSION EXTRA_FLAGS: the generated program as
# DIR/gen, one object per source (as a build system compiles).
build_generated() {
	mkdir -p "$1"
	for f in "$gen"/*.c; do
		(cd "$1" && "$cc" -O2 -gdwarf-"$2" $3 -c "$f" -o "$(basename "$f" .c).o")
	done
	(cd "$1" && "$cc" -o gen ./*.o)
}

mkdir dwz dwz5 dwz5/store
for d in dwz dwz5; do
	"$cc" -O2 -gdwarf-5 -o $d/gen5 "$gen"/*.c
	"$cc" -O2 -gdwarf-4 -o $d/gen4 "$gen"/*.c
	for f in gen5 gen4; do debug_split $d/$f; done
done
cp dwz/gen5 dwz/solo
cp dwz/gen5.debug dwz/solo.debug
objcopy --remove-section=.gnu_debuglink --add-gnu-debuglink=dwz/solo.debug dwz/solo
(cd dwz && dwz -m common.debug -M common.debug gen5.debug gen4.debug && dwz solo.debug)
(cd dwz5 && dwz -5 -m common.debug -M /nonexistent/common.debug gen5.debug gen4.debug)
# dwz -5 names the common file by a checksum in its .debug_sup, not a note:
# version (2), is_supplementary (1), empty name (1), length (1), checksum.
sup=$(readelf -SW dwz5/common.debug | sed -n 's/.*\.debug_sup *PROGBITS *[0-9a-f]* \([0-9a-f]*\).*/\1/p')
id=$(od -An -tx1 -v -j $((0x$sup + 5)) -N 20 dwz5/common.debug | tr -d ' \n')
mkdir -p "dwz5/store/.build-id/$(echo "$id" | cut -c1-2)"
mv dwz5/common.debug "dwz5/store/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug"

build_generated split4 4 -gsplit-dwarf
build_generated split5 5 -gsplit-dwarf
build_generated dwp4-objs 4 -gsplit-dwarf
mkdir dwp4 dwp5 dwp5-objs
(cd dwp4-objs && dwp -e gen -o ../dwp4/gen.dwp && cp gen ../dwp4/gen)
rm -rf dwp4-objs
(cd dwp5-objs && "$cc" -O2 -g -gsplit-dwarf -c "$src/inline_workload.c" -o inline_workload.o &&
	"$cc" -o inline_workload inline_workload.o &&
	llvm-dwp -o ../dwp5/inline_workload.dwp inline_workload.dwo </dev/null &&
	cp inline_workload ../dwp5/)
rm -rf dwp5-objs

# split_inline DIR [FLAGS]: inline_workload.c split in DWARF 5, built in DIR.
split_inline() {
	mkdir -p "$1"
	(cd "$1" && "$cc" -O2 -g -gsplit-dwarf -c "$src/inline_workload.c" -o inline_workload.o &&
		"$cc" -o inline_workload inline_workload.o)
}
for k in missing truncated other; do split_inline split-bad/$k; done
# The .dwo moved from the compile directory to a debug directory (found
# there by its base name).
split_inline split-store
mkdir split-store/store
mv split-store/inline_workload.dwo split-store/store/
rm split-bad/missing/inline_workload.dwo
size=$(wc -c <split-bad/truncated/inline_workload.dwo)
head -c $((size / 3)) split-bad/truncated/inline_workload.dwo >split-bad/truncated/cut.dwo
mv split-bad/truncated/cut.dwo split-bad/truncated/inline_workload.dwo
(cd split-bad/other && "$cc" -O2 -g -gsplit-dwarf -DVARIANT=1 -c "$src/inline_workload.c" -o variant.o &&
	mv variant.dwo inline_workload.dwo && rm variant.o)
split_inline split-corrupt
mkdir dwz-corrupt
"$cc" -O2 -g -o dwz-corrupt/a "$src/inline_workload.c"
"$cc" -O2 -g -DVARIANT=1 -o dwz-corrupt/b "$src/inline_workload.c"
debug_split dwz-corrupt/a
debug_split dwz-corrupt/b
(cd dwz-corrupt && dwz -m common.debug -M common.debug a.debug b.debug)
