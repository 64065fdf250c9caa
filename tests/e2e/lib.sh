# lib.sh - what the end-to-end test scripts share: where the binaries are, a
# scratch directory removed on exit, and assertions that say what failed.
# Sourced with the build directory as $1.
set -eu
build=$1
bin=$build/bin
workloads=$build/tests/workloads
scratch=$(mktemp -d)
# Hermetic: no debuginfod server but the one a test starts (Debian's
# /etc/profile.d sets DEBUGINFOD_URLS for login shells).
unset DEBUGINFOD_URLS
trap 'rm -rf "$scratch"' EXIT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# profile_workload NAME ARGS...: collect -q the workload NAME with ARGS into
# $scratch/t.zst, failing with collect's stderr.
profile_workload() {
	workload=$workloads/$1
	shift
	"$bin/collect" -q -o "$scratch/t.zst" "$workload" "$@" 2>"$scratch/err" ||
		fail "collect exited $?: $(cat "$scratch/err")"
}

# marker_line MARKER FILE: number of the first line of FILE that holds MARKER
# (workload sources mark the lines reports must show, e.g. "@call-hot").
marker_line() {
	grep -n -- "$1" "$2" | head -n 1 | cut -d: -f1
}

# within A B TOLERANCE: true when |A - B| <= TOLERANCE (decimal numbers).
within() {
	awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'
}

# value_of KEY FILE: the number after "KEY=" in FILE (first match).
value_of() {
	grep -o "$1=[0-9.]*" "$2" | head -n 1 | cut -d= -f2
}

# Readers of `analyze info` output. Durations there are "861.0 ms", "1.20 s"...
to_seconds() {
	case $2 in
	ns) scale=0.000000001 ;;
	us) scale=0.000001 ;;
	ms) scale=0.001 ;;
	s) scale=1 ;;
	min) scale=60 ;;
	*) fail "unknown duration unit '$2'" ;;
	esac
	awk -v v="$1" -v s="$scale" 'BEGIN { printf "%.6f\n", v * s }'
}
# info_samples INFO: number of samples.
info_samples() {
	awk '/^Samples:/ { gsub(",", "", $2); print $2; exit }' "$1"
}
# info_cpu_seconds INFO: CPU time the summed weights stand for.
info_cpu_seconds() {
	set -- $(sed -n 's/^Samples:.*= \([0-9.]*\) \([a-z]*\) of CPU.*/\1 \2/p' "$1" | head -n 1)
	to_seconds "$1" "$2"
}
# info_threads INFO: "TID CPU_SECONDS" for each thread in the threads table.
info_threads() {
	awk '/^ +PID +TID/ { on = 1; next } on && !/^ +[0-9]/ { on = 0 } on { print $2, $4, $5 }' "$1" |
		while read -r tid value unit; do echo "$tid $(to_seconds "$value" "$unit")"; done
}
