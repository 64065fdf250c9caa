# lib.sh - what the end-to-end test scripts share: where the binaries are, a
# scratch directory removed on exit, and assertions that say what failed.
# Sourced with the build directory as $1.
set -eu
build=$1
bin=$build/bin
workloads=$build/tests/workloads
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# within A B TOLERANCE: true when |A - B| <= TOLERANCE (decimal numbers).
within() {
	awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'
}

# value_of KEY FILE: the number after "KEY=" in FILE (first match).
value_of() {
	grep -o "$1=[0-9.]*" "$2" | head -n 1 | cut -d= -f2
}
