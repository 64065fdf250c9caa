# A function gcc inlines into its caller does most of the work: tree and flat
# show it as its own frame, marked [inlined], with its own file and line,
# under the caller's line that calls it; with --no-inline (tree, flat and
# every exporter) its cost is the caller's own, at that line.
. "$(dirname "$0")/lib.sh"
dir=$(dirname "$0")/workloads
hot=$(marker_line "@hot-line" "$dir/report_inline_hot.h")
call=$(marker_line "@call-hot" "$dir/report_inline.c")

profile_workload report_inline 1.0
"$bin/analyze" tree "$scratch/t.zst" >"$scratch/tree" || fail "analyze tree failed"
"$bin/analyze" flat "$scratch/t.zst" >"$scratch/flat" || fail "analyze flat failed"
cat "$scratch/tree" "$scratch/flat"

# compute at the call line, hot_kernel one level below it, inlined, at its line.
grep -n "report_inline\.c:$call; compute\$" "$scratch/tree" >"$scratch/caller" ||
	fail "tree has no 'report_inline.c:$call; compute'"
caller_at=$(head -n 1 "$scratch/caller" | cut -d: -f1)
sed -n "$((caller_at + 1))p" "$scratch/tree" |
	grep -q "report_inline_hot\.h:$hot; hot_kernel \[inlined\]\$" ||
	fail "the line after compute is not 'report_inline_hot.h:$hot; hot_kernel [inlined]'"
# It does most of the work: over half of the total in flat.
pct=$(awk 'NF >= 2 && $(NF-1) == "hot_kernel" && $NF == "[inlined]" { sub("%", "", $2); print $2; exit }' "$scratch/flat")
[ -n "$pct" ] || fail "flat has no 'hot_kernel [inlined]' row"
awk -v p="$pct" 'BEGIN { exit !(p > 50) }' || fail "hot_kernel has only $pct%"
grep -q "report_inline_hot\.h" "$scratch/flat" || fail "flat does not name report_inline_hot.h"
echo "hot_kernel $pct%: ok"
# Its self share: its inclusive one also holds the thread's end charge, whose self is the
# "[thread exit: unsampled]" leaf below it (one sample in a thousand: 100.0% against 99.9%).
hot_self=$(awk 'NF >= 2 && $(NF-1) == "hot_kernel" && $NF == "[inlined]" { sub("%", "", $4); print $4; exit }' "$scratch/flat")

# --no-inline: no inlined frame anywhere, compute's self time has hot_kernel's.
"$bin/analyze" flat --no-inline "$scratch/t.zst" >"$scratch/flat" || fail "flat --no-inline failed"
cat "$scratch/flat"
grep -q "hot_kernel\|\[inlined\]" "$scratch/flat" && fail "flat --no-inline shows an inlined frame"
self=$(awk '$NF == "compute" { sub("%", "", $4); print $4; exit }' "$scratch/flat")
[ -n "$self" ] && awk -v s="$self" -v p="$hot_self" 'BEGIN { exit !(s >= p) }' ||
	fail "compute's self share ${self:-none}% under --no-inline is below hot_kernel's $hot_self%"
"$bin/analyze" tree --no-inline "$scratch/t.zst" >"$scratch/tree" || fail "tree --no-inline failed"
grep -q "report_inline\.c:$call; compute\$" "$scratch/tree" || fail "tree --no-inline lost compute's call line"
grep -q "hot_kernel" "$scratch/tree" && fail "tree --no-inline shows hot_kernel"
for format in folded speedscope pprof; do
	"$bin/analyze" export --no-inline --format $format -o "$scratch/out.$format" "$scratch/t.zst" ||
		fail "export --no-inline --format $format failed"
done
grep -q "hot_kernel" "$scratch/out.folded" "$scratch/out.speedscope" && fail "an export kept hot_kernel"
# pprof's string table keeps every name; what its samples say is what counts.
go tool pprof -top -symbolize=none "$scratch/out.pprof" >"$scratch/pprof.top" 2>&1 ||
	fail "go tool pprof: $(cat "$scratch/pprof.top")"
grep -q "hot_kernel" "$scratch/pprof.top" && fail "pprof --no-inline kept hot_kernel"
grep -q "compute" "$scratch/pprof.top" || fail "pprof --no-inline lost compute: $(cat "$scratch/pprof.top")"
grep -q "compute" "$scratch/out.folded" || fail "folded --no-inline lost compute"
echo "--no-inline: compute ${self}% self: ok"
