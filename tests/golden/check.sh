#!/bin/sh
# check.sh - CPU traces give byte-identical tree, flat, folded and speedscope
# output, and the same `go tool pprof -top` numbers, as main did before the
# values model (commit 626e6a0), but for deliberate changes: a stack the
# agent cut at max frames has a [truncated] frame at its root (issue 9); tree
# has a column of each node's share of the total (issue 27: the outputs saved
# again after checking that removing that column gives main's bytes, but for
# tree-width's names, shortened 8 columns more); the commands pin Julia's
# filters (--nodefraction 0) and order (--sortedby filefuncline) where the
# defaults changed, and tree-default, tree-nodefraction and flat-default
# hold the new defaults' outputs. Each
# line of tests/golden/commands is run on its trace and compared with
# tests/golden/expected/NAME.
#
# usage: check.sh BUILD_DIR            compare (the ctest e2e_golden)
#        check.sh BUILD_DIR --save     write expected/ from BUILD_DIR's analyze
set -eu
here=$(cd "$(dirname "$0")" && pwd)
analyze=$(cd "$1" && pwd)/bin/analyze
save=${2:-}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export TZ=UTC LC_ALL=C
failed=0
cd "$here"
while IFS='|' read -r name trace args; do
	case $name in '#'* | '') continue ;; esac
	out=$scratch/$name
	case $name in
	*.pprof-top)
		command -v go >/dev/null || { echo "FAIL $name: go not installed (scripts/debian-packages.txt has golang-go)"; failed=1; continue; }
		# shellcheck disable=SC2086
		"$analyze" $args -o "$scratch/p.pb.gz" "$trace.trace.zst" 2>/dev/null
		# the default sample type, then each type by name
		for index in "" samples cpu; do
			echo "== -sample_index=$index"
			HOME=$scratch go tool pprof -top -nodecount=1000 ${index:+-sample_index=$index} \
				"$scratch/p.pb.gz" 2>&1
		done >"$out"
		;;
	*)
		# shellcheck disable=SC2086
		"$analyze" $args "$trace.trace.zst" >"$out" 2>/dev/null || echo "exit $?" >>"$out"
		;;
	esac
	if [ "$save" = --save ]; then
		cp "$out" "expected/$name"
	elif ! cmp -s "$out" "expected/$name"; then
		echo "FAIL: $name (analyze $args $trace.trace.zst) differs from main's:" >&2
		diff "expected/$name" "$out" | head -20 | cut -c1-300 >&2
		failed=1
	fi
done <commands
[ "$save" = --save ] && echo "saved $(ls expected | wc -l) outputs" && exit 0
[ $failed -eq 0 ] || exit 1
echo "golden: every output identical to main's"
