# Several traces in one report (issue 35): `analyze flat a b` is, row by row,
# the sum of `flat a` and `flat b` (by function and line, and by instruction
# with --no-combine, where the same instruction of two runs at different
# load addresses is one row); tree, the three exports and info take several
# traces with the same totals; allocation traces sum their counts and bytes;
# traces whose values mean other things (wall and CPU, other intervals) are
# refused with a message naming the trace, as is an unreadable one.
. "$(dirname "$0")/lib.sh"
a=$bin/analyze
c=$bin/collect
demo=$bin/ipscope-demo
"$c" -q -o "$scratch/a.zst" "$demo" >/dev/null 2>"$scratch/err" || fail "collect a: $(cat "$scratch/err")"
"$c" -q -o "$scratch/b.zst" "$demo" >/dev/null 2>"$scratch/err" || fail "collect b: $(cat "$scratch/err")"
"$c" -q -o "$scratch/busy.zst" "$workloads/collect_busy" 0.2 2>"$scratch/err" || fail "collect busy: $(cat "$scratch/err")"
A=$scratch/a.zst B=$scratch/b.zst Z=$scratch/busy.zst

# sum_rows KEYCOLS FILE...: "key<TAB>count<TAB>self<TAB>4 values" summed per key over flat's TSVs
# of CPU traces (samples, samples_self, cpu, cpu_self).
sum_rows() {
	keys=$1
	shift
	# The value columns are count, self and the 8th on but "module" (a trace of many programs has it).
	awk -F'\t' -v keys="$keys" 'FNR == 1 { delete name; for (i = 1; i <= NF; i++) name[i] = $i; next }
		{ n = split(keys, k, ","); key = ""; for (i = 1; i <= n; i++) key = key $(k[i]) "|"
		  v[key, 1] += $1; v[key, 2] += $2; nf[key] = 0
		  for (i = 8; i <= NF; i++) if (name[i] != "module") v[key, i] += $i }
		END { for (key in nf) { line = key "\t" v[key, 1] "\t" v[key, 2];
		      for (i = 8; i <= 11; i++) line = line "\t" v[key, i]; print line } }' "$@" | sort
}

# 1. flat of three traces (two programs) = the sum of each alone, per function and line.
for t in "$A" "$B" "$Z"; do "$a" flat -C --format tsv "$t" >"$t.tsv" 2>/dev/null || fail "flat $t"; done
"$a" flat -C --format tsv "$A" "$B" "$Z" >"$scratch/abz.tsv" 2>/dev/null || fail "flat a b busy exited $?"
sum_rows 3,4,5,7 "$A.tsv" "$B.tsv" "$Z.tsv" >"$scratch/want"
sum_rows 3,4,5,7 "$scratch/abz.tsv" >"$scratch/got"
[ -s "$scratch/want" ] || fail "flat printed no rows"
cmp -s "$scratch/want" "$scratch/got" ||
	fail "flat a b busy is not the sum of its traces' rows: $(diff "$scratch/want" "$scratch/got" | head -20)"
# ...each row once: a function of both demo runs is one row, not two (of two programs, a
# function of each, such as their _start, is a row of each).
"$a" flat -C --format tsv "$A" "$B" >"$scratch/ab.tsv" 2>/dev/null || fail "flat a b exited $?"
sum_rows 3,4,5,7 "$A.tsv" "$B.tsv" >"$scratch/want"
sum_rows 3,4,5,7 "$scratch/ab.tsv" >"$scratch/got"
cmp -s "$scratch/want" "$scratch/got" || fail "flat a b is not a's plus b's: $(diff "$scratch/want" "$scratch/got" | head)"
[ "$(tail -n +2 "$scratch/ab.tsv" | wc -l)" -eq "$(wc -l <"$scratch/want")" ] ||
	fail "flat a b repeats rows: $(tail -n +2 "$scratch/ab.tsv" | wc -l) rows for $(wc -l <"$scratch/want") keys"

# 2. By instruction: the two demo runs' addresses differ (ASLR); the merge moves b's onto a's
# module, so an instruction of both is one row: as many rows as distinct instructions, keyed
# by what a page-aligned load address leaves alone (the low 12 bits).
"$a" flat -C --no-combine --format tsv "$A" >"$scratch/a.ins" 2>/dev/null
"$a" flat -C --no-combine --format tsv "$B" >"$scratch/b.ins" 2>/dev/null
"$a" flat -C --no-combine --format tsv "$A" "$B" >"$scratch/ab.ins" 2>/dev/null || fail "flat --no-combine a b"
low12() { awk -F'\t' 'BEGIN { OFS = "\t" } FNR > 1 && $6 != "" { $6 = substr($6, length($6) - 2) } { print }' "$@"; }
low12 "$scratch/a.ins" >"$scratch/a.low"; low12 "$scratch/b.ins" >"$scratch/b.low"; low12 "$scratch/ab.ins" >"$scratch/ab.low"
sum_rows 3,4,5,6,7 "$scratch/a.low" "$scratch/b.low" >"$scratch/want"
sum_rows 3,4,5,6,7 "$scratch/ab.low" >"$scratch/got"
cmp -s "$scratch/want" "$scratch/got" || fail "flat --no-combine a b is not a's plus b's per instruction: $(diff "$scratch/want" "$scratch/got" | head)"
[ "$(tail -n +2 "$scratch/ab.ins" | wc -l)" -eq "$(wc -l <"$scratch/want")" ] ||
	fail "flat --no-combine a b: $(tail -n +2 "$scratch/ab.ins" | wc -l) rows for $(wc -l <"$scratch/want") instructions (b's addresses not moved onto a's module?)"
grep -q "^Traces: *3 summed: 3 processes, 2 programs" <<EOT || fail "flat's header does not say what was summed: $("$a" flat "$A" "$B" "$Z" 2>&1 | head -3)"
$("$a" flat "$A" "$B" "$Z" 2>/dev/null | head -3)
EOT

# 3. tree, folded, pprof and speedscope of several traces: the same total as flat.
total=$(awk -F'\t' 'FNR > 1 { s += $2 } END { print s }' "$scratch/abz.tsv")
"$a" tree -C "$A" "$B" "$Z" >"$scratch/tree" 2>/dev/null || fail "tree a b busy exited $?"
grep -q "^Total samples: [0-9]* (weight $total = " "$scratch/tree" || fail "tree a b busy: want weight $total: $(tail -n 2 "$scratch/tree")"
folded=$("$a" export -C --format folded "$A" "$B" "$Z" 2>/dev/null | awk '{ s += $NF } END { print s }')
[ "$folded" = "$total" ] || fail "folded a b busy sums to $folded, flat to $total"
"$a" export --format pprof -o "$scratch/abz.pb" "$A" "$B" "$Z" 2>/dev/null || fail "export pprof a b busy"
if command -v go >/dev/null; then
	go tool pprof -raw "$scratch/abz.pb" >"$scratch/raw" 2>&1 || fail "go tool pprof -raw: $(head -5 "$scratch/raw")"
	pp=$(awk '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 } on && $1 ~ /^[0-9]+$/ { s += $1 } END { print s }' "$scratch/raw")
	[ "$pp" = "$total" ] || fail "pprof of a b busy holds $pp samples, flat $total"
fi
"$a" export --format speedscope -o "$scratch/abz.json" "$A" "$B" "$Z" 2>/dev/null || fail "export speedscope a b busy"
ss=$(jq '[.profiles[].weights | add] | add / 1000000' "$scratch/abz.json") # ns, at the default 1 ms
[ "$ss" = "$total" ] || fail "speedscope of a b busy weighs $ss ms, flat $total samples of 1 ms"

# 4. info describes each trace, then what they add up to; as JSON an array of them.
"$a" info "$A" "$B" >"$scratch/info" 2>/dev/null || fail "info a b exited $?"
[ "$(grep -c '^Trace: ' "$scratch/info")" -eq 2 ] || fail "info a b does not describe both traces"
grep -q "^All 2 traces: " "$scratch/info" || fail "info a b has no summing line: $(tail -n 2 "$scratch/info")"
[ "$("$a" info --format json "$A" "$B" 2>/dev/null | jq length)" = 2 ] || fail "info --format json a b is not an array of two"

# 5. Allocation traces: counts and bytes add up.
"$c" -q --allocs -o "$scratch/m1.zst" "$workloads/alloc_cases" threads 2>"$scratch/err" || fail "collect --allocs: $(cat "$scratch/err")"
"$c" -q --allocs -o "$scratch/m2.zst" "$workloads/alloc_cases" threads 2>"$scratch/err" || fail "collect --allocs: $(cat "$scratch/err")"
one=$("$a" flat -C --format tsv --value alloc_objects "$scratch/m1.zst" 2>/dev/null | awk -F'\t' 'FNR > 1 { s += $2 } END { print s }')
both=$("$a" flat -C --format tsv --value alloc_objects "$scratch/m1.zst" "$scratch/m2.zst" 2>/dev/null | awk -F'\t' 'FNR > 1 { s += $2 } END { print s }')
[ "$one" -ge 402000 ] && [ "$both" -eq $((one * 2)) ] || fail "two allocation traces of $one objects each sum to $both"

# 6. What cannot be summed, or read, is refused naming the trace.
"$c" -q -m wall -o "$scratch/w.zst" "$workloads/collect_busy" 0.05 2>/dev/null || fail "collect -m wall"
"$c" -q -i 100us -o "$scratch/fast.zst" "$workloads/collect_busy" 0.05 2>/dev/null || fail "collect -i 100us"
for bad in "$scratch/w.zst:wall mode" "$scratch/fast.zst:sampled every 100000 nanoseconds" "$scratch/none.zst:No such file"; do
	t=${bad%%:*} why=${bad#*:}
	if "$a" flat "$A" "$t" >/dev/null 2>"$scratch/err"; then fail "flat a $t succeeded"; fi
	grep -q "$t.*$why" "$scratch/err" || fail "flat a $t: want '$why' naming it: $(cat "$scratch/err")"
done
# A truncated trace among others is read to its last complete record, with a warning.
head -c 6000 "$B" >"$scratch/cut.zst"
"$a" flat "$A" "$scratch/cut.zst" >/dev/null 2>"$scratch/err" || fail "flat a cut exited $?: $(cat "$scratch/err")"
grep -q "cut.zst: truncated" "$scratch/err" || fail "flat a cut: no truncation warning: $(cat "$scratch/err")"
echo "ok: flat, tree, exports and info of several traces sum their parts ($total samples)"
