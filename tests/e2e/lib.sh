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

# Readers of a trace's figures, from `analyze info --format json` (jq), so no
# test scrapes the human text. Each takes the TRACE, or a saved `analyze info`
# text whose "Trace:" line names it (only that line is read).
info_json() {
	trace=$1
	if [ "$(head -c 4 "$1" | od -An -tx1 | tr -d ' \n')" != 28b52ffd ]; then
		trace=$(sed -n 's/^Trace: *//p' "$1" | head -n 1)
	fi
	"$bin/analyze" info --format json "$trace" 2>/dev/null || fail "analyze info --format json $trace failed"
}
# info_samples TRACE: number of samples.
info_samples() {
	info_json "$1" | jq -r '.samples'
}
# info_cpu_seconds TRACE: CPU time the summed weights stand for.
info_cpu_seconds() {
	info_json "$1" | jq -r '.value_types[] | select(.type == "cpu") | .total / 1e9'
}
# info_threads TRACE: "TID CPU_SECONDS" for each thread, in the trace's order.
info_threads() {
	info_json "$1" | jq -r '.threads[] | "\(.tid) \(.values.cpu / 1e9)"'
}
# info_thread_count TRACE, info_lost TRACE: threads, lost samples.
info_thread_count() {
	info_json "$1" | jq -r '.threads | length'
}
info_lost() {
	info_json "$1" | jq -r '.lost_samples'
}

# need COMMAND PACKAGE: fail, naming the Debian package, when COMMAND is not
# installed (scripts/debian-packages.txt lists every test's programs).
need() {
	command -v "$1" >/dev/null 2>&1 ||
		fail "$1 is not installed: the Debian package $2 has it (scripts/debian-packages.txt; scripts/setup build test installs it)"
}
need jq jq
