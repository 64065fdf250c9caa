# A plugin loaded with dlopen that does the work: its module is in the trace's
# module map, with its build-id, and its samples are attributed to it.
. "$(dirname "$0")/lib.sh"
"$bin/collect" -q -o "$scratch/t.zst" "$workloads/collect_dlopen" "$workloads/libcollect_plugin.so" ||
	fail "collect failed"
"$bin/analyze" info "$scratch/t.zst" >"$scratch/info" || fail "analyze info failed"
cat "$scratch/info"
grep 'libcollect_plugin.so' "$scratch/info" >"$scratch/line" || fail "plugin missing from the module map"

# Two plugins, one after the other, usually mapped at the same address: each
# one's samples must carry its own name (the trace's unload records and the
# sample times decide which module an address belonged to).
"$bin/collect" -q -o "$scratch/two.zst" "$workloads/collect_dlopen" "$workloads/libcollect_plugin.so" \
	"$workloads/libcollect_plugin_b.so" 2>"$scratch/err" || fail "collect failed: $(cat "$scratch/err")"
cat "$scratch/err"
"$bin/analyze" flat "$scratch/two.zst" >"$scratch/flat" || fail "analyze flat failed"
cat "$scratch/flat"
for function in plugin_work plugin_b_work; do
	ms=$(awk -v f="$function" '$NF == f { print $1; exit }' "$scratch/flat")
	within "${ms:-0}" 300 45 || fail "$function: ${ms:-0} ms, want 300 (samples given to the wrong plugin?)"
done

# A plugin whose constructor burns 0.2 s inside dlopen, where the agent keeps
# the sampling signal blocked: that time reaches the profile when dlopen
# returns, all at once (the CPU-time timer's overruns; perf's own signals are
# dropped there), charged to the line that called dlopen: not lost, not counted
# twice, and the plugin's function keeps its 0.3 s. The constructor's thread
# (0.2 s, created inside that section) is sampled like any other: the
# measured time is the process's, so a thread left unsampled fails the 10%.
"$bin/collect" -q -o "$scratch/ctor.zst" "$workloads/collect_dlopen" "$workloads/libcollect_plugin_ctor.so" \
	2>"$scratch/err" || fail "collect failed: $(cat "$scratch/err")"
measured=$(value_of cpu_seconds "$scratch/err")
profiled=$(info_cpu_seconds "$scratch/ctor.zst")
echo "constructor plugin: measured ${measured}s, profiled ${profiled}s"
within "$profiled" "$measured" "$(awk -v m="$measured" 'BEGIN { print m * 0.10 }')" ||
	fail "constructor plugin: profiled ${profiled}s is not within 10% of measured ${measured}s"
"$bin/analyze" flat "$scratch/ctor.zst" >"$scratch/flat" || fail "analyze flat failed"
cat "$scratch/flat"
self=$(awk '$NF == "run_plugin" { print $3; exit }' "$scratch/flat")
within "${self:-0}" 200 40 || fail "the constructor's time: ${self:-0} ms at dlopen's caller, want 200"
work=$(awk '$NF == "plugin_work" { print $1; exit }' "$scratch/flat")
within "${work:-0}" 300 45 || fail "plugin_work: ${work:-0} ms, want 300"
