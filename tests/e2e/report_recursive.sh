# A recursive function of known depth: the tree shows one nested recurse()
# node per level, and flat counts each sample once per function, so no Count
# exceeds the total however deep the recursion.
. "$(dirname "$0")/lib.sh"
depth=12
src=$(dirname "$0")/workloads/report_recursive.c
call=$(marker_line "@recurse-call" "$src")

profile_workload report_recursive $depth
"$bin/analyze" flat "$scratch/t.zst" >"$scratch/flat" || fail "analyze flat failed"
"$bin/analyze" tree "$scratch/t.zst" >"$scratch/tree" || fail "analyze tree failed"
cat "$scratch/flat" "$scratch/tree"

total=$(sed -n 's/^Total samples: [0-9]* (weight \([0-9]*\) .*/\1/p' "$scratch/flat")
[ -n "$total" ] || fail "no total in flat"
awk -v t="$total" '$3 ~ /^[0-9]+$/ && $1 ~ /^[0-9]+$/ && $1 > t { bad = 1; print "row over total: " $0 }
	END { exit bad }' "$scratch/flat" || fail "a flat Count exceeds the total $total"
recurse=$(awk '$NF == "recurse" && $1 ~ /^[0-9]+$/ { print $1; exit }' "$scratch/flat")
[ -n "$recurse" ] || fail "flat has no recurse row"
[ "$recurse" -le "$total" ] || fail "recurse counted $recurse > total $total"
within "$recurse" "$total" "$(awk -v t="$total" 'BEGIN { print t * 0.05 }')" ||
	fail "recurse has $recurse of $total: it is on every stack"

# depth - 1 nested nodes at the recursive call line, each one level deeper.
nested=$(grep -c "report_recursive\.c:$call; recurse\$" "$scratch/tree")
[ "$nested" -eq $((depth - 1)) ] ||
	fail "tree shows $nested nested recurse nodes at line $call, expected $((depth - 1))"
# Each nested node is indented one column more than the previous one.
awk -v pat="report_recursive.c:$call; recurse" 'index($0, pat) {
	n = index($0, "╎"); rest = substr($0, n + length("╎")); sub(/[0-9].*/, "", rest)
	w = length(rest); if (prev != "" && w <= prev) bad = 1; prev = w }
	END { exit bad }' "$scratch/tree" || fail "recurse nodes are not nested one level each"
echo "recurse $recurse of $total, $nested nested nodes: ok"
