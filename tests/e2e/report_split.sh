# A program spending ~70% of its CPU in heavy() and ~30% in light(): flat
# shows both within 5 points, and the tree shows both directly under main,
# each at main's call line and with lines inside its own body.
. "$(dirname "$0")/lib.sh"
src=$(dirname "$0")/workloads/report_split.c

profile_workload report_split 1.5
"$bin/analyze" flat "$scratch/t.zst" >"$scratch/flat" || fail "analyze flat failed"
"$bin/analyze" tree "$scratch/t.zst" >"$scratch/tree" || fail "analyze tree failed"
cat "$scratch/flat" "$scratch/tree"

# Flat: the % column (2nd) of the rows whose function is heavy / light.
percent() { awk -v f="$1" '$NF == f && $3 ~ /^[0-9]+$/ { sub("%", "", $2); print $2; exit }' "$scratch/flat"; }
heavy=$(percent heavy)
light=$(percent light)
[ -n "$heavy" ] && [ -n "$light" ] || fail "flat has no row for heavy or light"
within "$heavy" 70 5 || fail "heavy has $heavy% of the CPU, expected 70 +- 5"
within "$light" 30 5 || fail "light has $light% of the CPU, expected 30 +- 5"

# Tree: main at the call line of each (top level: right after the rail, its share before it
# as flat's), heavy/light one level below, at a line inside their bodies.
for f in heavy light; do
	call=$(marker_line "@call-$f" "$src")
	begin=$(marker_line "@$f-begin" "$src")
	end=$(marker_line "@$f-end" "$src")
	share=$(sed -n "s/^ *[0-9]* \+\([0-9.]*\)% ╎[0-9]\+ \+report_split\.c:$call; main\$/\1/p" "$scratch/tree")
	[ -n "$share" ] || fail "tree has no top-level 'report_split.c:$call; main' for the call of $f"
	within "$share" "$(eval echo \$$f)" 1 || fail "tree gives main's call of $f $share%, flat gives $f $(eval echo \$$f)%"
	lines=$(sed -n "s/^ *[0-9]* \+[0-9.]*% ╎ [0-9]\+ \+report_split\.c:\([0-9]*\); $f\$/\1/p" "$scratch/tree")
	[ -n "$lines" ] || fail "tree has no '$f' directly under main"
	for l in $lines; do
		[ "$l" -gt "$begin" ] && [ "$l" -lt "$end" ] ||
			fail "$f shown at line $l, outside its body ($begin..$end)"
	done
done
echo "heavy $heavy%, light $light%: ok"
