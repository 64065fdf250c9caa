# analyze diff on real traces of report_split: heavy() takes 70% of the CPU
# with one argument and 30% with another, so diffing the runs shows -40 and
# +40 points (within 5) on heavy and light in the tree, flat, TSV and folded
# output, both marked significant (pprof too, when go is installed). Three
# runs with the same argument give three pairs of which no row may be marked
# significant; a trace against itself changes nothing. Then what the command
# says about bad input.
. "$(dirname "$0")/lib.sh"

run() { # run NAME SHARE: report_split 0.6 CPU seconds, heavy's share SHARE
	"$bin/collect" -q -o "$scratch/$1.zst" "$workloads/report_split" 0.6 "$2" 2>"$scratch/err" ||
		fail "collect exited $?: $(cat "$scratch/err")"
}
run a 0.7
run b 0.7
run c 0.7
run s 0.3
diff_of() { # diff_of BASE NEW ARGS...: analyze diff into $scratch/out
	base=$1 new=$2
	shift 2
	"$bin/analyze" diff "$@" "$scratch/$base.zst" "$scratch/$new.zst" >"$scratch/out" 2>"$scratch/err" ||
		fail "analyze diff $* $base $new exited $?: $(cat "$scratch/err")"
}

# Tree: heavy and light directly under main ("╎ " then the frame).
diff_of a s
cat "$scratch/out"
for f in heavy:-40 light:40; do
	name=${f%%:*} want=${f#*:}
	row=$(grep -E "╎ [^ ]*report_split\.c:\?; $name\$" "$scratch/out") || fail "tree has no $name under main"
	pct=$(echo "$row" | awk '{ sub("%", "", $4); print $4 }')
	mark=$(echo "$row" | awk '{ print $5 }')
	within "$pct" "$want" 5 || fail "tree: $name changed $pct points, expected $want +- 5"
	[ "$mark" = "*" ] || fail "tree: $name not marked significant: $row"
done

# Flat and TSV.
diff_of a s --flat
for f in heavy:-40 light:40; do
	name=${f%%:*} want=${f#*:}
	row=$(awk -v f="$name" '$NF == f' "$scratch/out")
	pct=$(echo "$row" | awk '{ sub("%", "", $4); print $4 }')
	[ -n "$pct" ] || fail "flat has no row for $name"
	within "$pct" "$want" 5 || fail "flat: $name changed $pct points, expected $want +- 5"
	[ "$(echo "$row" | awk '{ print $5 }')" = "*" ] || fail "flat: $name not marked significant: $row"
done
diff_of a s --format tsv
for f in heavy:-40 light:40; do
	name=${f%%:*} want=${f#*:}
	row=$(awk -F'\t' -v f="$name" '$12 == f' "$scratch/out")
	within "$(echo "$row" | cut -f4)" "$want" 5 && [ "$(echo "$row" | cut -f7)" = 1 ] ||
		fail "tsv: $name row is '$row'"
done

# Folded: "stack base new"; a function's share is that of the lines it is on.
diff_of a s --format folded
awk 'NF < 3 || $(NF-1) !~ /^[0-9]+$/ || $NF !~ /^[0-9]+$/ { print "bad line: " $0; exit 1 }' "$scratch/out" >&2 ||
	fail "folded output is not 'stack base new'"
for f in heavy:-40 light:40; do
	name=${f%%:*} want=${f#*:}
	pct=$(awk -v f="$name" '{ b += $(NF-1); if ((";" $1 ";") ~ (";" f ";")) { fb += $(NF-1); fn += $NF } }
		END { printf "%.2f", 100 * (fn - fb) / b }' "$scratch/out")
	within "$pct" "$want" 5 || fail "folded: $name changed $pct points, expected $want +- 5"
done
echo "70/30 against 30/70: heavy -40, light +40 points (within 5), significant in tree, flat, tsv and folded"

# pprof: the -diff_base profile go tool pprof reads; percentages of base's total.
# go is in scripts/debian-packages.txt: without it this test fails, never skips.
need go golang-go
{
	export HOME="$scratch/home"
	mkdir -p "$HOME"
	"$bin/analyze" diff --format pprof -o "$scratch/d.pb.gz" "$scratch/a.zst" "$scratch/s.zst" ||
		fail "diff --format pprof failed"
	go tool pprof -top -nodecount=100 "$scratch/d.pb.gz" >"$scratch/top" 2>"$scratch/top.err" ||
		fail "go tool pprof -top failed: $(cat "$scratch/top.err")"
	cat "$scratch/top"
	base_total=$("$bin/analyze" flat --format tsv "$scratch/a.zst" | awk -F'\t' 'NR > 1 { s += $2 } END { print s }')
	grep -q "Total samples = $base_total *\$" "$scratch/top" || fail "pprof's total is not base's $base_total"
	for f in heavy:-40 light:40; do
		name=${f%%:*} want=${f#*:}
		cum=$(awk -v f="$name" '$NF == f { print $4 }' "$scratch/top")
		[ -n "$cum" ] || fail "pprof -top has no $name"
		within "$(awk -v c="$cum" -v t="$base_total" 'BEGIN { print 100 * c / t }')" "$want" 5 ||
			fail "pprof: $name's cum is $cum of $base_total, expected $want% +- 5"
	done
	echo "pprof: total = base's, heavy and light cum -40/+40 points"
}

# Same program, same argument: no row beyond sampling noise.
for pair in "a b" "a c" "b c"; do
	set -- $pair
	for view in "" --flat; do
		diff_of "$1" "$2" $view
		if grep -q ' \* ' "$scratch/out"; then
			cat "$scratch/out"
			fail "runs $1 and $2 of one program: a row is marked significant ($view)"
		fi
	done
done
echo "3 pairs of runs of one program: no row significant at 99% confidence in tree and flat"

# A trace against itself: every delta 0.
diff_of a a --format tsv
awk -F'\t' 'NR > 1 && ($3 != 0 || $1 != $2) { print "changed: " $0; bad = 1 } END { exit bad }' "$scratch/out" >&2 ||
	fail "a trace diffed with itself changed"
diff_of a a
grep -q ' [*~] ╎' "$scratch/out" && fail "a trace diffed with itself has changed rows"
diff_of a a --format folded
awk '$(NF-1) != $NF { exit 1 }' "$scratch/out" || fail "folded self-diff has a line whose base and new differ"
echo "self-diff: every delta 0"

# --value says what was compared; filters apply to both runs.
diff_of a s --value cpu --flat
grep -q '^Values: cpu (nanoseconds)' "$scratch/out" || fail "--value cpu: header does not say cpu"
diff_of a s --flat -C
grep -q ' __libc_start_call_main$' "$scratch/out" || fail "-C shows no system frame"
diff_of a s --flat
grep -q ' __libc_start_call_main$' "$scratch/out" && fail "without -C a system frame is shown"

# Bad input: which trace is wrong, exit 1; a usage error, exit 2.
"$bin/analyze" diff "$scratch/a.zst" "$scratch/missing.zst" >/dev/null 2>"$scratch/err" && fail "missing NEW accepted"
[ $? -eq 1 ] || fail "missing NEW: exit status not 1"
grep -q "new trace $scratch/missing.zst" "$scratch/err" || fail "missing NEW: message does not name it: $(cat "$scratch/err")"
printf 'garbage' >"$scratch/bad.zst"
"$bin/analyze" diff "$scratch/bad.zst" "$scratch/a.zst" >/dev/null 2>"$scratch/err" && fail "corrupt BASE accepted"
grep -q "base trace $scratch/bad.zst" "$scratch/err" || fail "corrupt BASE: message does not name it: $(cat "$scratch/err")"
[ "$(wc -l <"$scratch/err")" -eq 1 ] || fail "corrupt BASE: more than one line: $(cat "$scratch/err")"
# A base cut before its first sample: read with the loader's warning, said
# to have no samples (not blamed on a --tid nobody gave), no share printed.
head -c 800 "$scratch/a.zst" >"$scratch/cut.zst"
"$bin/analyze" diff "$scratch/cut.zst" "$scratch/s.zst" >"$scratch/out" 2>"$scratch/err" ||
	fail "diff of a cut base failed: $(cat "$scratch/err")"
grep -q "$scratch/cut.zst has no samples to compare\$" "$scratch/err" || fail "cut base: $(cat "$scratch/err")"
grep -q -- "--tid" "$scratch/err" && fail "cut base blamed on --tid: $(cat "$scratch/err")"
grep -q "0\.0%" "$scratch/out" && fail "cut base: a share of an empty base printed: $(cat "$scratch/out")"
echo "cut base: no samples, said; no shares of an empty base"
"$bin/analyze" diff --confidence 1.5 "$scratch/a.zst" "$scratch/s.zst" 2>"$scratch/err" && fail "--confidence 1.5 accepted"
[ $? -eq 2 ] || fail "--confidence 1.5: exit status not 2"
# --significant selects report rows: an export, whose viewer adds its stacks
# up into rows of its own, refuses it rather than ignore it.
for format in folded pprof speedscope; do
	"$bin/analyze" diff --significant --format $format -o "$scratch/sig" "$scratch/a.zst" "$scratch/s.zst" \
		2>"$scratch/err" && fail "--significant --format $format accepted"
	rc=$?
	[ $rc -eq 2 ] && [ "$(wc -l <"$scratch/err")" -eq 1 ] && grep -q -- "--significant.*$format" "$scratch/err" ||
		fail "--significant --format $format: exit $rc, said: $(cat "$scratch/err")"
done
"$bin/analyze" diff --significant --format tsv "$scratch/a.zst" "$scratch/s.zst" >/dev/null 2>&1 ||
	fail "--significant --format tsv refused"
"$bin/analyze" diff "$scratch/a.zst" 2>"$scratch/err" && fail "one operand accepted"
grep -q "missing NEW operand" "$scratch/err" || fail "one operand: $(cat "$scratch/err")"

# Sets of runs (--base A1 --base A2 NEW...): each side summed, the noise test over the runs
# as replicates. Two runs of each share against two of another: heavy and light change by 40
# points and are marked; three runs of one share against each other mark nothing.
run s2 0.3
"$bin/analyze" diff --flat --base "$scratch/a.zst" --base "$scratch/b.zst" "$scratch/s.zst" "$scratch/s2.zst" \
	>"$scratch/out" 2>"$scratch/err" || fail "diff --base a --base b s s2 exited $?: $(cat "$scratch/err")"
grep -q "^Noise: *Welch's t-test over the runs of each side, on each run's share (2 base runs, 2 new)" "$scratch/out" ||
	fail "diff of sets does not say its test: $(head -12 "$scratch/out")"
grep -q "^Base: .*a.zst and 1 more trace, in all" "$scratch/out" || fail "diff of sets: header: $(head -3 "$scratch/out")"
for f in heavy:-40 light:40; do
	name=${f%%:*} want=${f#*:}
	row=$(grep -E " $name\$" "$scratch/out") || fail "diff of sets: no $name row: $(cat "$scratch/out")"
	pct=$(echo "$row" | awk '{ sub("%", "", $4); print $4 }')
	within "$pct" "$want" 5 || fail "diff of sets: $name changed $pct points, expected $want +- 5"
	[ "$(echo "$row" | awk '{ print $5 }')" = "*" ] || fail "diff of sets: $name not marked: $row"
done
"$bin/analyze" diff --flat --base "$scratch/a.zst" --base "$scratch/b.zst" "$scratch/c.zst" "$scratch/a.zst" \
	>"$scratch/out" 2>"$scratch/err" || fail "diff --base a --base b c a exited $?: $(cat "$scratch/err")"
grep -q "^Rows: [0-9]* shown, 0 beyond" "$scratch/out" || fail "runs of one share differ beyond noise: $(cat "$scratch/out")"
"$bin/analyze" diff --base "$scratch/a.zst" "$scratch/s.zst" >/dev/null 2>&1 || fail "diff --base a s (sets of one) refused"
"$bin/analyze" diff "$scratch/a.zst" "$scratch/b.zst" "$scratch/s.zst" 2>"$scratch/err" && fail "three operands without --base accepted"
grep -q "unexpected operand.*--base" "$scratch/err" || fail "three operands: $(cat "$scratch/err")"

# Different programs: compared, with a warning.
"$bin/collect" -q -o "$scratch/r.zst" "$workloads/report_recursive" 2>/dev/null || fail "collect report_recursive"
"$bin/analyze" diff "$scratch/a.zst" "$scratch/r.zst" >"$scratch/out" 2>"$scratch/err" ||
	fail "different programs refused: $(cat "$scratch/err")"
grep -q "warning: .*report_split.*report_recursive.*comparing different programs" "$scratch/err" ||
	fail "different programs: no warning: $(cat "$scratch/err")"

# -o FILE: written whole, byte-stable.
"$bin/analyze" diff --format folded -o "$scratch/f1" "$scratch/a.zst" "$scratch/s.zst" || fail "-o failed"
"$bin/analyze" diff --format folded "$scratch/a.zst" "$scratch/s.zst" >"$scratch/f2"
cmp -s "$scratch/f1" "$scratch/f2" || fail "folded -o FILE and stdout differ"
"$bin/analyze" diff --format pprof -o "$scratch/p1" "$scratch/a.zst" "$scratch/s.zst"
"$bin/analyze" diff --format pprof -o "$scratch/p2" "$scratch/a.zst" "$scratch/s.zst"
cmp -s "$scratch/p1" "$scratch/p2" || fail "pprof export not byte-stable"
echo "bad input named, different programs warned, -o and byte-stable exports: ok"
