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
