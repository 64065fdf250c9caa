# --value in every command: a CPU trace's two value types, samples (timer
# periods, the default) and cpu (nanoseconds), agree with each other in
# tree, flat (text and TSV), info's JSON and every export; a type the trace
# does not have is a usage error naming the types it has.
. "$(dirname "$0")/lib.sh"
a=$bin/analyze
profile_workload report_split 0.3
t=$scratch/t.zst
interval=$(info_json "$t" | jq -r '.interval_ns')
samples=$(info_json "$t" | jq -r '.value_types[] | select(.type == "samples") | .total')
cpu=$(info_json "$t" | jq -r '.value_types[] | select(.type == "cpu") | .total')
[ "$samples" -gt 100 ] || fail "too few samples: $samples"
[ "$cpu" -eq $((samples * interval)) ] || fail "cpu total $cpu is not samples $samples x interval $interval"

# Every command takes --value; unknown types are usage errors listing the trace's.
for cmd in info tree flat "export --format folded"; do
	set +e
	"$a" $cmd --value alloc_space "$t" >/dev/null 2>"$scratch/err"
	rc=$?
	set -e
	[ $rc -eq 2 ] || fail "analyze $cmd --value alloc_space exited $rc, expected 2"
	[ "$(wc -l <"$scratch/err")" -eq 1 ] && grep -q "has the value types samples, cpu" "$scratch/err" ||
		fail "analyze $cmd --value alloc_space said: $(cat "$scratch/err")"
	"$a" $cmd --value cpu "$t" >/dev/null 2>&1 || fail "analyze $cmd --value cpu failed"
done

# flat: the TSV's columns of both types, and the text's counts in the chosen one.
"$a" flat --format tsv "$t" >"$scratch/tsv" 2>/dev/null
head -n 1 "$scratch/tsv" | grep -qx "$(printf 'count\tself\tfile\tline\tfunction\taddress\tinlined\tsamples\tsamples_self\tcpu\tcpu_self')" ||
	fail "TSV header: $(head -n 1 "$scratch/tsv")"
awk -F'\t' -v i="$interval" 'NR > 1 && ($10 != $8 * i || $11 != $9 * i || $1 != $8) { bad = 1; print }
	END { exit bad }' "$scratch/tsv" || fail "TSV cpu columns are not samples x interval"
self=$(awk -F'\t' 'NR > 1 { s += $2 } END { printf "%.0f", s }' "$scratch/tsv")
[ "$self" -eq "$samples" ] || fail "TSV self column sums to $self, not $samples"
"$a" flat --value cpu --format tsv "$t" 2>/dev/null | awk -F'\t' 'NR > 1 && $1 != $10 { bad = 1 } END { exit bad }' ||
	fail "flat --value cpu --format tsv: count is not the cpu column"
"$a" flat --value cpu "$t" 2>/dev/null >"$scratch/flat"
grep -q "^Values: cpu (nanoseconds)$" "$scratch/flat" || fail "flat --value cpu does not say what it counts"
heavy=$(awk -F'\t' '$5 == "heavy" { print $10; exit }' "$scratch/tsv")
awk -v h="$heavy" '$NF == "heavy" && $1 == h { found = 1 } END { exit !found }' "$scratch/flat" ||
	fail "flat --value cpu has no heavy row of $heavy ns"

# tree: the top node's count in each type.
"$a" tree --value cpu "$t" 2>/dev/null | grep -q "; main$" || fail "tree --value cpu has no main"
"$a" tree --value cpu "$t" 2>/dev/null | grep -q "Total samples: .* (weight $samples = " ||
	fail "tree --value cpu footer lost the totals"

# exports: folded in the chosen type, speedscope in ns either way, pprof's default.
for v in samples cpu; do
	sum=$("$a" export --format folded --value $v "$t" 2>/dev/null | awk '{ s += $NF } END { printf "%.0f", s }')
	want=$samples
	[ $v = cpu ] && want=$cpu
	[ "$sum" = "$want" ] || fail "folded --value $v sums to $sum, want $want"
done
"$a" export --format speedscope --value samples "$t" 2>/dev/null | jq -e '[.profiles[].unit] | all(. == "nanoseconds")' >/dev/null ||
	fail "speedscope does not show a count of periods as nanoseconds"
echo "values: ok ($samples samples, $cpu ns)"
