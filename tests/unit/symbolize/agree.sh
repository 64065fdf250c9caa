#!/bin/sh
# agree.sh - does the symbolizer agree with binutils' addr2line -f -i -C?
#
#   agree.sh SYMBOLIZE_BENCH TARGET N SAMPLE
#
# Draws N distinct addresses inside the functions of TARGET ("libc" for the
# C library, with its debug info from libc6-dbg), symbolizes all of them in
# one symbolizer, then compares SAMPLE of them, evenly spread over the
# (random) order, with addr2line: function, file and line of every frame of
# the inline chain. Passes at >= 99% identical chains; exits 77 (skip) when
# libc's debug info is not installed.
#
# Two differences are by design and normalized before comparing:
# - glibc declares its functions with asm names __GI_foo for internal calls;
#   addr2line prints that linkage name, the symbolizer prints foo.
# - gcc clone suffixes ([clone .isra.0], .part.1) are merged into the
#   function name (the default of analyze, --keep-clones to keep them).
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
		echo "agree.sh: no debug info for $target (install libc6-dbg): skipped"
		exit 77
	fi
fi

"$bench" --gen "$n" --seed 42 "$symbols" > "$work/all"
"$bench" "$target" < "$work/all" > "$work/mine"
awk -v step=$((n / sample)) 'NR % step == 0' "$work/all" > "$work/sample"
addr2line -a -f -i -C -e "$target" < "$work/sample" > "$work/theirs"

awk -v want=99 '
function norm(line) {
	sub(/ \(discriminator [0-9]+\)$/, "", line)
	if (line == ":?" || line == "??:?") line = "??:0"
	sub(/^__GI_/, "", line)
	gsub(/ \[clone [^]]*\]/, "", line)
	sub(/\.(part|isra|constprop|cold|lto_priv)(\.[0-9]+)?(\.(part|isra|constprop|cold|lto_priv)(\.[0-9]+)?)*$/, "", line)
	return line
}
FNR == 1 { file++ }
/^0x[0-9a-f]+$/ { addr = $0; next }
{ chain[file, addr] = chain[file, addr] " | " norm($0); if (file == 1) addrs[addr] = 1 }
END {
	for (a in addrs) {
		total++
		if (chain[1, a] == chain[2, a]) { same++; continue }
		if (shown++ < 10) printf "%s\n  addr2line: %s\n  ipscope:   %s\n", a, chain[1, a], chain[2, a]
	}
	pct = total ? 100 * same / total : 0
	printf "agreement with addr2line: %d / %d = %.2f%%\n", same, total, pct
	exit !(total > 0 && pct >= want)
}' "$work/theirs" "$work/mine"
