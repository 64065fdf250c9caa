# A plugin loaded with dlopen that does the work: its module is in the trace's
# module map, with its build-id, and its samples are attributed to it.
. "$(dirname "$0")/lib.sh"
"$bin/collect" -q -o "$scratch/t.zst" "$workloads/collect_dlopen" "$workloads/libcollect_plugin.so" ||
	fail "collect failed"
"$bin/analyze" info "$scratch/t.zst" >"$scratch/info" || fail "analyze info failed"
cat "$scratch/info"
grep 'libcollect_plugin.so' "$scratch/info" >"$scratch/line" || fail "plugin missing from the module map"
