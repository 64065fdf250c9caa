# collect -p, CPU (issue 30): a program started without collect
# (tests/e2e/workloads/attach_target.c) is attached to for a known window.
# Its main thread splits its CPU 3:1 between two functions; during the
# window it dlopens a plugin and starts a named thread: the profile must hold
# the split, the plugin's function by name (a module mapped after the
# attach), the new thread, and say the program ran on. The program must not
# notice: it finishes on its own, exit 0, its last sleep not cut short.
. "$(dirname "$0")/lib.sh"
need jq jq
target=$workloads/attach_target
"$target" 4 "$workloads/libcollect_plugin.so" >"$scratch/out" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q ready "$scratch/out" 2>/dev/null && break; sleep 0.05; done
grep -q ready "$scratch/out" || fail "attach_target did not start: $(cat "$scratch/out")"
sleep 0.3
"$bin/collect" -p "$pid" --duration 2s -o "$scratch/t.zst" 2>"$scratch/err" ||
	fail "collect -p exited $?: $(cat "$scratch/err")"
cat "$scratch/err"
wait "$pid" || fail "the attached program exited $? (3: a sleep was cut short): $(cat "$scratch/out")"
[ "$(stat -c %a "$scratch/t.zst")" = 600 ] || fail "the trace is not mode 0600"

"$bin/analyze" info "$scratch/t.zst" >"$scratch/info" || fail "analyze info failed"
sed -n '/^Command/,/^Trace file/p' "$scratch/info"
info_json "$scratch/t.zst" >"$scratch/info.json"
jq -e '.metadata.attached == "1"' "$scratch/info.json" >/dev/null 2>&1 ||
	grep -q '^  attached *1' "$scratch/info" || fail "the trace does not say it was attached"
grep -q '^Exit: *still running' "$scratch/info" || fail "info does not say the program ran on: $(grep ^Exit "$scratch/info")"
duration=$(jq -r '.duration_ns' "$scratch/info.json")
within "$duration" 2000000000 150000000 || fail "the trace spans ${duration} ns, not the 2 s window"

# The 3:1 split of the main thread (the plugin takes one_quarter's place after 1 s).
"$bin/analyze" flat "$scratch/t.zst" >"$scratch/flat"
total() { awk -v f="$1" '$NF == f { s += $1 } END { print s + 0 }' "$scratch/flat"; }
three=$(total three_quarters)
one=$(total one_quarter)
plugin=$(total plugin_work)
late=$(total late_work)
echo "three_quarters $three, one_quarter $one, plugin_work $plugin, late_work $late"
share=$(awk -v a="$three" -v b="$one" -v c="$plugin" 'BEGIN { printf "%.1f", 100 * a / (a + b + c) }')
echo "three_quarters: ${share}% of the main thread's work (75% by construction)"
within "$share" 75 5 || fail "three_quarters has ${share}% of the main thread's work, not 75%"
[ "$plugin" -gt 30 ] || fail "plugin_work (dlopen'ed after the attach) is not named in the profile: $plugin samples"
grep -q 'libcollect_plugin.so' "$scratch/info" || fail "the plugin mapped after the attach is not in the modules"
# The thread started after the attach: named, and its 0.3 s of CPU.
late_cpu=$(jq -r '.threads[] | select(.name == "late") | .values.cpu / 1e9' "$scratch/info.json")
[ -n "$late_cpu" ] || fail "the thread started after the attach is not in the trace: $(jq -c '[.threads[].name]' "$scratch/info.json")"
within "$late_cpu" 0.3 0.05 || fail "the late thread has ${late_cpu} s of CPU, it burnt 0.3 s"
# Stacks reach main: the unwinder walked the copies to the root.
awk '$NF == "main" && $1 > 0' "$scratch/flat" | grep -q . || fail "no stack reaches main"
truncated=$(jq -r '.stacks.truncated_samples // 0' "$scratch/info.json")
echo "truncated samples: $truncated"

# Every analyze command and export reads an attached trace as a launched one.
"$bin/analyze" tree "$scratch/t.zst" >/dev/null || fail "analyze tree failed"
for f in pprof speedscope folded; do
	"$bin/analyze" export -f "$f" -o "$scratch/t.$f" "$scratch/t.zst" || fail "export -f $f failed"
	[ -s "$scratch/t.$f" ] || fail "export -f $f is empty"
done
grep -q 'three_quarters' "$scratch/t.folded" || fail "the folded export has no three_quarters"
"$bin/analyze" archive -o "$scratch/t.tar" "$scratch/t.zst" >/dev/null 2>&1 || fail "analyze archive failed"

# A Debian program (perl, essential: stripped, names from libperl's symbol table): every stack
# walks from its leaf (an opcode, often in its epilogue) up through the interpreter's loop.
perl -e '$t = time; while (time - $t < 3) { $s += $_ for 1 .. 1000 }' &
perl=$!
sleep 0.3
"$bin/collect" -q -p "$perl" --duration 1s -o "$scratch/perl.zst" || fail "collect -p perl exited $?"
wait "$perl" || fail "perl exited $?"
"$bin/analyze" flat -C "$scratch/perl.zst" 2>/dev/null >"$scratch/perl.flat"
head -n 10 "$scratch/perl.flat"
samples=$(info_samples "$scratch/perl.zst")
runops=$(awk '$NF == "Perl_runops_standard" { print $1 }' "$scratch/perl.flat")
echo "perl: $samples samples, ${runops:-0} through Perl_runops_standard"
[ "$samples" -gt 100 ] || fail "perl: $samples samples in 1 s"
[ "${runops:-0}" -ge $((samples * 95 / 100)) ] || fail "perl: only ${runops:-0} of $samples stacks reach the interpreter's loop"
grep -q 'Perl_pp_' "$scratch/perl.flat" || fail "perl: no opcode function named"
echo ok
