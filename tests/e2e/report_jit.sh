# JIT code named from the runtime's perf map, copied into the trace at the
# end of the run (the file is removed before analyze runs): a tiny C JIT
# whose map has garbage lines (skipped, one warning), then node with
# --perf-basic-prof running two known hot JS functions.
. "$(dirname "$0")/lib.sh"
profile_workload report_jit 0.5
pid=$("$bin/analyze" info "$scratch/t.zst" | awk '$1 == "pid" { print $2 }')
rm -f "/tmp/perf-$pid.map" # analyze must need only the trace
"$bin/analyze" flat "$scratch/t.zst" >"$scratch/flat" 2>"$scratch/err" || fail "analyze flat failed"
cat "$scratch/flat" "$scratch/err"
self=$(awk '$NF == "jit_busy_loop" { sub("%", "", $4); print $4; exit }' "$scratch/flat")
[ -n "$self" ] || fail "no jit_busy_loop row"
awk -v s="$self" 'BEGIN { exit !(s > 80) }' || fail "jit_busy_loop has only $self% self"
[ "$(grep -c "warning: /tmp/perf-$pid.map" "$scratch/err")" -eq 1 ] || fail "want one warning about the map"
grep -q "4 of 5 lines are not 'START SIZE name' in hex (the first: line 1): skipped" "$scratch/err" ||
	fail "the warning does not count the bad lines"
echo "C JIT: jit_busy_loop $self%: ok"

# The same JIT started by a shell: the map of every process of the tree is copied, not the first's
# alone (a node run by a script had 95% of its time unnamed).
"$bin/collect" -q -o "$scratch/c.zst" sh -c "'$workloads/report_jit' 0.5; true" 2>"$scratch/err" ||
	fail "collect sh -c report_jit exited $?: $(cat "$scratch/err")"
for p in $("$bin/analyze" info --format json "$scratch/c.zst" 2>/dev/null | jq '.processes[].pid'); do
	rm -f "/tmp/perf-$p.map"
done
"$bin/analyze" flat --pid "$("$bin/analyze" info --format json "$scratch/c.zst" 2>/dev/null |
	jq '[.processes[] | select(.command | test("^[^ ]*report_jit"))][0].pid')" "$scratch/c.zst" >"$scratch/cflat" 2>/dev/null
self=$(awk '$NF == "jit_busy_loop" { sub("%", "", $4); print $4; exit }' "$scratch/cflat")
awk -v s="${self:-0}" 'BEGIN { exit !(s > 80) }' || fail "the shell's child: jit_busy_loop ${self:-no}% self: $(cat "$scratch/cflat")"
echo "C JIT under sh: jit_busy_loop $self%: ok"

# A map not written during the run (dated before it, as an earlier process
# with the same pid would have left it) is not copied: its names are not ours.
"$bin/collect" -q -o "$scratch/s.zst" sh -c \
	'printf "1000 10 stale_\156ame\n" >/tmp/perf-$$.map && touch -d 2020-01-01 /tmp/perf-$$.map &&
	 echo $$ >'"$scratch/pid" 2>"$scratch/err" || fail "collect sh exited $?: $(cat "$scratch/err")"
rm -f "/tmp/perf-$(cat "$scratch/pid").map"
grep -q "last written before this run .*not copied" "$scratch/err" ||
	fail "no warning about the stale map: $(cat "$scratch/err")"
"$bin/analyze" info "$scratch/s.zst" >/dev/null 2>&1 || fail "analyze info of the stale-map trace failed"
# (the map's text is "stale_name"; the command lines in the trace, sh's and
# touch's, which name the map's path, spell it "stale_\156ame")
zstd -dc "$scratch/s.zst" 2>/dev/null | grep -qa "stale_name" &&
	fail "the stale map was copied"

# node: names present, shares plausible (hotAlpha does twice hotBeta's work).
need node nodejs
cat >"$scratch/app.js" <<'JS'
// Two known hot functions: hotAlpha is called twice as often as hotBeta.
function hotAlpha(n) { let x = 0; for (let i = 0; i < n; i++) x = (x * 31 + i) % 1000003; return x; }
function hotBeta(n) { let x = 1; for (let i = 0; i < n; i++) x = (x * 31 + i) % 999983; return x; }
const end = Date.now() + Number(process.argv[2]);
let t = 0;
while (Date.now() < end) { t += hotAlpha(100000); t += hotAlpha(100000); t += hotBeta(100000); }
console.log(t);
JS
# node writes isolate-*-v8.log files into its working directory: run it in scratch.
(cd "$scratch" && "$bin/collect" -q -o "$scratch/n.zst" node --perf-basic-prof "$scratch/app.js" 1200 \
	>/dev/null 2>"$scratch/err") || fail "collect node exited $?: $(cat "$scratch/err")"
pid=$("$bin/analyze" info "$scratch/n.zst" | awk '$1 == "pid" { print $2 }')
rm -f "/tmp/perf-$pid.map"
"$bin/analyze" flat "$scratch/n.zst" >"$scratch/flat" 2>"$scratch/err" || fail "analyze flat failed"
head -n 12 "$scratch/flat"
a=$(awk '$NF == "hotAlpha" { sub("%", "", $4); s += $4 } END { print s + 0 }' "$scratch/flat")
b=$(awk '$NF == "hotBeta" { sub("%", "", $4); s += $4 } END { print s + 0 }' "$scratch/flat")
# Their sum is node's time in JIT code, which its compiler and GC threads cut into on a busy
# machine (31% on a loaded 2-core run, 60% alone): the ratio is the check, the sum only a floor.
awk -v a="$a" -v b="$b" 'BEGIN { exit !(a + b > 15 && a / (a + b) > 0.5 && a / (a + b) < 0.8) }' ||
	fail "hotAlpha $a% and hotBeta $b% self: not the 2:1 of the work they do"
grep -q "app\.js *2 hotAlpha" "$scratch/flat" || fail "hotAlpha is not placed at app.js:2"
"$bin/analyze" tree "$scratch/n.zst" >"$scratch/tree" || fail "analyze tree failed"
grep -q "node::Start" "$scratch/tree" || fail "the JS frames are not under node's own stack"
echo "node: hotAlpha $a%, hotBeta $b% self: ok"
