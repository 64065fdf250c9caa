# analyze source --asm on report_split (~70% of the CPU in heavy(), whose
# inner loop is the hot part): heavy's instructions add up to its self
# cost (the stacks ending in heavy or in code inlined into it, from the
# folded export; its clock_gettime calls, a hidden system frame, go to the
# call), every function's add up to the trace's self cost, and the hottest
# instruction lies in the inner loop (its source line, from the listing's
# debug info), which holds most of heavy's cost. Then a stripped
# copy (objcopy --strip-all): the same function found by its FDE, the same
# instructions at the same addresses, the hottest again in the loop, its
# total the flat self cost of the addresses inside it; with the file gone,
# the costs by address. Bad uses: errors.
. "$(dirname "$0")/lib.sh"
need objcopy binutils
src=$(dirname "$0")/workloads/report_split.c
begin=$(marker_line "@heavy-begin" "$src")
loop=$(awk -v b="$begin" 'NR > b && /for \(unsigned long i = 0; i < 100000; i\+\+\)/ { print NR; exit }' "$src")
body=$((loop + 1))
grep -n "" "$src" | grep -q "^$body:.*split_sink += i ^ (i >> 3);" || fail "heavy's loop body is not line $body"

profile_workload report_split 1.0
a=$bin/analyze
"$a" source --asm heavy --value samples --format tsv "$scratch/t.zst" >"$scratch/g.tsv" || fail "source --asm --format tsv failed"
head -1 "$scratch/g.tsv" | grep -q "^function	address	samples	cpu	line	instruction$" ||
	fail "TSV header: $(head -1 "$scratch/g.tsv")"
awk -F'\t' 'NR > 1 && $1 != "heavy" { exit 1 }' "$scratch/g.tsv" || fail "functions other than heavy: $(cut -f1 "$scratch/g.tsv" | sort -u)"
awk -F'\t' -v l="$loop" -v b="$body" 'NR > 1 { sum += $3; if ($3 > max) { max = $3; hot = $2; line = $5 }
	if ($5 == l || $5 == b) inloop += $3 } END { print hot, line, sum, inloop }' "$scratch/g.tsv" >"$scratch/hot"
read -r hot hotline sum inloop <"$scratch/hot"
# heavy's self cost: the stacks that end in heavy or in code inlined into it.
heavy=$("$a" export --format folded --annotate-inline --value samples "$scratch/t.zst" |
	awk '/(^|;)heavy(;[^;]*_\[i\])* [0-9]+$/ { s += $NF } END { print s + 0 }')
echo "heavy: $sum samples over its instructions (its self: $heavy), hottest $hot (line $hotline), $inloop in the loop (lines $loop-$body)"
[ "$sum" -eq "$heavy" ] || fail "heavy's instructions add up to $sum samples, its self cost is $heavy"
[ "$hotline" = "$loop" ] || [ "$hotline" = "$body" ] || fail "the hottest instruction $hot is at line $hotline, not in the loop ($loop-$body)"
[ $((100 * inloop)) -ge $((85 * sum)) ] || fail "only $inloop of heavy's $sum samples in the loop"
"$a" source --asm . --value samples --format tsv "$scratch/t.zst" | awk -F'\t' 'NR > 1 { s += $3 } END { print s }' >"$scratch/all"
# (A thread's time after its last sample, charged at its end, is no instruction's: its leaf is
# "[thread exit: unsampled]".)
self=$("$a" flat --value samples --format tsv "$scratch/t.zst" |
	awk -F'\t' 'NR > 1 && $5 != "[thread exit: unsampled]" { s += $9 } END { print s }')
[ "$(cat "$scratch/all")" -eq "$self" ] || fail "every function's instructions add up to $(cat "$scratch/all"), the self costs to $self"

# The text: heading, the hottest row marked, the total.
"$a" source --asm heavy "$scratch/t.zst" >"$scratch/text" || fail "source --asm failed"
sed -n '/^heavy in /,/^Total /p' "$scratch/text" | head -5
grep -q "^heavy in .*report_split \[0x[0-9a-f]*, 0x[0-9a-f]*) (symbol table): " "$scratch/text" || fail "no heading: $(head -6 "$scratch/text")"
grep -Eq "^=> +$hot +[0-9.]+ m?s +[0-9.]+% +$hotline │ [a-z]" "$scratch/text" || fail "the hottest row $hot is not marked: $(grep " $hot " "$scratch/text")"
grep -q "^Total cpu in heavy: " "$scratch/text" || fail "no total line"

# Stripped: no symbols, no lines; the FDE gives heavy's extent.
objcopy --strip-all "$workload" "$scratch/split"
"$bin/collect" -q -o "$scratch/s.zst" "$scratch/split" 1.0 2>"$scratch/err" || fail "collect (stripped): $(cat "$scratch/err")"
"$a" source --asm 'split\+' --value samples --format tsv "$scratch/s.zst" >"$scratch/s.tsv" 2>"$scratch/err" ||
	fail "source --asm (stripped) failed: $(cat "$scratch/err")"
first=$(sed -n 2p "$scratch/s.tsv" | cut -f1)
awk -F'\t' -v f="$first" 'NR > 1 && $1 == f' "$scratch/s.tsv" >"$scratch/s1"
cut -f2 "$scratch/s1" >"$scratch/s.addr"
awk -F'\t' 'NR > 1 { print $2 }' "$scratch/g.tsv" >"$scratch/g.addr"
cmp -s "$scratch/s.addr" "$scratch/g.addr" || fail "the costliest stripped function $first is not heavy's instructions"
read -r shot ssum <<E
$(awk -F'\t' '{ sum += $3; if ($3 > max) { max = $3; hot = $2 } } END { print hot, sum }' "$scratch/s1")
E
sline=$(awk -F'\t' -v h="$shot" '$2 == h { print $5 }' "$scratch/g.tsv")
echo "stripped: $first, $ssum samples, hottest $shot (line $sline in the build with debug info)"
[ "$sline" = "$loop" ] || [ "$sline" = "$body" ] || fail "the stripped hottest instruction $shot is at line $sline, not in the loop"
lo=$(head -1 "$scratch/s.addr")
hi=$(tail -1 "$scratch/s.addr")
flat=0
"$a" flat --value samples --format tsv "$scratch/s.zst" 2>/dev/null | awk -F'\t' '$5 ~ /^split\+0x[0-9a-f]+$/ && $9 != 0 { print $5, $9 }' >"$scratch/sflat"
while read -r name n; do
	off=$((0x${name##*+0x}))
	[ "$off" -ge $((lo)) ] && [ "$off" -le $((hi)) ] && flat=$((flat + n))
done <"$scratch/sflat"
[ "$ssum" -eq "$flat" ] || fail "the stripped function's instructions add up to $ssum, flat's addresses in it to $flat"
"$a" source --asm 'split\+' "$scratch/s.zst" 2>/dev/null | grep -q "^$first in .* (FDE: stripped code): " ||
	fail "no FDE heading for $first"

# The module gone: one listing of its addresses, their flat self costs all there.
mv "$scratch/split" "$scratch/split.away"
"$a" source --asm 'split\+' --value samples "$scratch/s.zst" >"$scratch/gone" 2>/dev/null || fail "source --asm (module gone) failed"
grep -q "^Note: .*file not found.*: costs by address only" "$scratch/gone" || fail "no note for the missing module: $(sed -n 5,7p "$scratch/gone")"
total=$("$a" flat --value samples --format tsv "$scratch/s.zst" 2>/dev/null |
	awk -F'\t' '$5 ~ /^split\+0x[0-9a-f]+$/ { s += $9 } END { print s }')
grep -q "^Total samples in split: $total\$" "$scratch/gone" || fail "the addresses do not add up to $total: $(grep ^Total "$scratch/gone")"
mv "$scratch/split.away" "$scratch/split"

# Bad uses: a FUNCTION matching nothing, --asm with FILE (usage errors, 2).
set +e
"$a" source --asm no_such_function "$scratch/t.zst" 2>"$scratch/err"
rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q "no function of .* matches 'no_such_function'" "$scratch/err" || fail "no match: rc $rc, $(cat "$scratch/err")"
set +e
"$a" source --asm heavy "$scratch/t.zst" report_split.c 2>"$scratch/err"
rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q "not a FILE" "$scratch/err" || fail "--asm with FILE: rc $rc, $(cat "$scratch/err")"
echo "PASS"
