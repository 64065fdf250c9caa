# A function gcc inlines into its caller does most of the work: tree and flat
# show it as its own frame, marked [inlined], with its own file and line,
# under the caller's line that calls it.
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
