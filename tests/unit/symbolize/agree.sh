#!/bin/sh
# agree.sh - does the symbolizer agree with binutils' addr2line -f -i -C?
#
#   agree.sh SYMBOLIZE_BENCH TARGET N SAMPLE
#
# Draws N distinct addresses inside the functions of TARGET ("libc" for the
# C library, with its debug info from libc6-dbg), symbolizes all of them in
# one symbolizer, then compares SAMPLE of them, evenly spread over the
# (random) order, with addr2line: function, file and line of every frame of
# the inline chain. Passes at >= 99% identical chains; fails, naming the
# package, when libc's debug info is not installed (libc6-dbg is in
# scripts/debian-packages.txt).
#
# The symbolizer names functions as addr2line -C does here (--full-names
# --raw-names: whole C++ signatures, internal aliases as DWARF names them).
# Two differences are by design and normalized before comparing:
# - glibc declares its functions with asm names __GI_foo for internal calls;
#   addr2line prints that linkage name, the symbolizer prints foo.
# - gcc clone suffixes ([clone .isra.0], .part.1) are merged into the
#   function name (the default of analyze, --keep-clones to keep them).
# And one known bug of binutils 2.40: in DWARF 5 line programs it reads file
# register N as entry N-1 of the file table (1-based, as DWARF 4), so where a
# compile unit's entries 0 and 1 differ (a .c file #included by a wrapper,
# common in glibc: 5% of its addresses) it names the wrapper with the
# included file's line. elfutils' eu-addr2line and llvm-symbolizer read
# entry N, as the symbolizer does. So an address also agrees when the
# function names match addr2line's and every file:line matches
# eu-addr2line's; both counts are printed.
set -eu
bench=$1 target=$2 n=$3 sample=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

symbols=$target
if [ "$target" = libc ]; then
	target=$(ldd "$bench" | awk '$1 ~ /^libc\.so/ { print $3 }')
	id=$(readelf -n "$target" | awk '/Build ID/ { print $3 }')
	symbols=/usr/lib/debug/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug
	if [ ! -r "$symbols" ]; then
		echo "FAIL: no debug info for $target: the Debian package libc6-dbg has it (scripts/debian-packages.txt)" >&2
		exit 1
	fi
fi

"$bench" --gen "$n" --seed 42 "$symbols" > "$work/all"
"$bench" --full-names --raw-names "$target" < "$work/all" > "$work/mine"
awk -v step=$((n / sample)) 'NR % step == 0' "$work/all" > "$work/sample"
addr2line -a -f -i -C -e "$target" < "$work/sample" > "$work/theirs"
if command -v eu-addr2line >/dev/null; then
	eu-addr2line -a -f -i -C -e "$target" < "$work/sample" > "$work/elfutils"
else
	: > "$work/elfutils"
fi

awk -v want=99 '
function norm(line) {
	sub(/ \(discriminator [0-9]+\)$/, "", line)
	sub(/ inlined at .*$/, "", line)          # eu-addr2line
	if (line ~ /:[0-9]+:[0-9]+$/)             # eu-addr2line: file:line:column
		sub(/:[0-9]+$/, "", line)
	if (line == ":?" || line == "??:?") line = "??:0"
	sub(/^__GI_/, "", line)
	gsub(/ \[clone [^]]*\]/, "", line)
	sub(/\.(part|isra|constprop|cold|lto_priv)(\.[0-9]+)?(\.(part|isra|constprop|cold|lto_priv)(\.[0-9]+)?)*$/, "", line)
	return line
}
FNR == 1 { file++; n = 0 }
/^0x[0-9a-f]+$/ { addr = $0; n = 0; next }
{
	# odd lines of a block are function names, even lines file:line
	if (n++ % 2 == 0) names[file, addr] = names[file, addr] " | " norm($0)
	else places[file, addr] = places[file, addr] " | " norm($0)
	if (file == 1) addrs[addr] = 1
}
END {
	for (a in addrs) {
		total++
		if (names[1, a] == names[3, a] && places[1, a] == places[3, a]) { same++; continue }
		if (names[1, a] == names[3, a] && places[2, a] == places[3, a]) { confirmed++; continue }
		if (shown++ < 10)
			printf "%s\n  addr2line:    %s\n               %s\n  eu-addr2line: %s\n  ipscope:      %s\n               %s\n",
				a, names[1, a], places[1, a], places[2, a], names[3, a], places[3, a]
	}
	pct = total ? 100 * (same + confirmed) / total : 0
	printf "agreement with addr2line: %d / %d = %.2f%% identical, %.2f%% with the file:line of eu-addr2line where binutils misreads DWARF 5 file indexes\n",
		same, total, total ? 100 * same / total : 0, pct
	exit !(total > 0 && pct >= want)
}' "$work/theirs" "$work/elfutils" "$work/mine"
