# More threads alive at once than the first chunk of rings (32) and than the
# old fixed limit (1024): the shared memory grows, every thread is in the
# trace and nothing is lost.
. "$(dirname "$0")/lib.sh"
"$bin/collect" -o "$scratch/t.zst" "$workloads/collect_churn" many 1500 0.001 2>"$scratch/err" ||
	fail "collect exited $?: $(tail -3 "$scratch/err")"
tail -1 "$scratch/err"
"$bin/analyze" info "$scratch/t.zst" >"$scratch/info" || fail "analyze info failed"
threads=$(awk '/^Threads:/ { print $2; exit }' "$scratch/info")
lost=$(awk '/^Lost samples:/ { print $3; exit }' "$scratch/info")
[ "$threads" -eq 1501 ] || fail "$threads threads in the trace, want 1501"
[ "$lost" -eq 0 ] || fail "$lost samples lost"
grep -q 'from 1501 threads, 0 lost' "$scratch/err" || fail "collect's summary disagrees: $(tail -1 "$scratch/err")"
samples=$(info_samples "$scratch/info")
[ "$samples" -ge 500 ] || fail "only $samples samples from 1500 threads of 1 ms"
