#!/bin/sh
# make_symbolize_seeds.sh - the seeds of the symbolizer's fuzz targets
# (fuzz_symbolize_elf, fuzz_symbolize_dwarf), made at build time from
# tests/unit/symbolize/inline_workload.c (an inlined helper, a few KiB of
# DWARF) built the ways analyze meets binaries:
#
#   make_symbolize_seeds.sh CORPUS_TOOL CC OTHER_CC SOURCE_DIR OUT
#
# CC is the build's compiler, OTHER_CC the other of gcc and clang ("" when
# there is none): their DWARF differs (clang: strx, addrx and rnglistx
# forms; gcc: line_strp, implicit_const). Seeds land in OUT/elf/ and
# OUT/dwarf/, named for the compiler and DWARF version. The compile
# directory recorded is one that does not exist, so split DWARF is found
# where fuzz_symbolize_dwarf writes it (by base name in its debug
# directory), never in this build directory.
set -eu
tool=$1 cc=$2 src=$4 out=$5
rm -rf "$out"
mkdir -p "$out/build" "$out/elf" "$out/dwarf"
cd "$out/build"
map=-fdebug-prefix-map=$out/build=/nonexistent-ipscope-fuzz
build() { # OUTPUT COMPILER FLAGS... (sh has no locals: no variable set here)
	"$2" -O2 "$map" $(shift 2; echo "$@") -o "$1" "$src/inline_workload.c"
}
seed() { # NAME MODULE [make_symbolize_corpus options]
	"$tool" "$out/elf" "$out/dwarf" "$@"
}

compilers=$cc
[ -n "$2" ] && [ -n "$3" ] && compilers="$cc $3"
for c in $compilers; do
	n=$(basename "$c")
	build ${n}5 "$c" -gdwarf-5
	build ${n}4 "$c" -gdwarf-4
	seed ${n}5 ${n}5 -z
	seed ${n}4 ${n}4
done
# The rest from gcc's build when there is one: dwz 0.15 does not know
# clang's DWARF 5 (.debug_addr).
last_cc=$cc
for c in $compilers; do
	case $(basename "$c") in *clang*) ;; *) last_cc=$c ;; esac
done
last=$(basename "$last_cc")

# Compressed sections, both kinds (binutils 2.40 still writes zlib-gnu).
objcopy --compress-debug-sections=zlib ${last}5 zlib
seed zlib zlib
if objcopy --compress-debug-sections=zlib-gnu ${last}5 zlibgnu 2>/dev/null; then
	seed zlibgnu zlibgnu
fi
# A debug file alone (code NOBITS), a stripped module (.symtab and
# .eh_frame), one stripped of all symbols (.eh_frame and .dynsym).
objcopy --only-keep-debug ${last}5 debugonly
objcopy --strip-debug ${last}5 nodebug
objcopy --strip-all ${last}5 stripped
seed debugonly debugonly
seed nodebug nodebug
seed stripped stripped -a ${last}5

# dwz: two builds share a supplementary file named sup.debug (relative to
# the debug file, found beside it), by build-id (.gnu_debugaltlink) and, with
# -5, by checksum (DWARF 5 .debug_sup).
for v in 4 5; do
	mkdir dwz$v
	build dwz$v/a "$last_cc" -gdwarf-$v
	build dwz$v/b "$last_cc" -gdwarf-$v -DVARIANT=1
	objcopy --only-keep-debug dwz$v/a dwz$v/a.debug
	objcopy --only-keep-debug dwz$v/b dwz$v/b.debug
done
# (Left out where dwz cannot read the compiler's DWARF: clang's alone.)
(cd dwz4 && dwz -m sup.debug -M sup.debug a.debug b.debug) &&
	seed dwz4 dwz4/a.debug -s dwz4/sup.debug
(cd dwz5 && dwz -5 -m sup.debug -M sup.debug a.debug b.debug) &&
	seed dwz5 dwz5/a.debug -s dwz5/sup.debug

# Split DWARF: the unit in w.dwo, in DWARF 4 (GNU extensions) and 5, and
# packaged: binutils dwp for DWARF 4, llvm-dwp for DWARF 5 (binutils dwp
# does not handle DWARF 5; llvm-dwp 14 hangs on several gcc DWARF 5 units,
# one is fine).
for c in $compilers; do
	n=$(basename "$c")
	for v in 4 5; do
		d=split-$n$v
		mkdir $d
		(cd $d && "$c" -O2 "-fdebug-prefix-map=$out/build/$d=/nonexistent-ipscope-fuzz" \
			-gdwarf-$v -gsplit-dwarf -c "$src/inline_workload.c" -o w.o && "$c" -o m w.o)
		seed $d $d/m -o $d/w.dwo
		if [ $v = 4 ] && command -v dwp >/dev/null; then
			(cd $d && dwp -o m.dwp w.dwo) && seed dwp-$n$v $d/m -p $d/m.dwp
		elif [ $v = 5 ] && command -v llvm-dwp >/dev/null; then
			(cd $d && llvm-dwp -o m.dwp w.dwo </dev/null) && seed dwp-$n$v $d/m -p $d/m.dwp
		fi
	done
done
