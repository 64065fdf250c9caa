# More threads alive at once than the first chunk of rings (32) and than the
# old fixed limit (1024): the shared memory grows, every thread is in the
# trace and nothing is lost. Under `ulimit -v 200000` collect still runs the
# program profiled; where it cannot even start, it leaves no file behind.
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

# 200 MB of address space: the program runs, profiled.
(ulimit -v 200000 && "$bin/collect" -o "$scratch/v.zst" "$workloads/collect_busy" 0.3) 2>"$scratch/v.err" ||
	fail "ulimit -v 200000: collect exited $?: $(cat "$scratch/v.err")"
"$bin/analyze" info "$scratch/v.zst" >"$scratch/v.info" || fail "ulimit -v 200000: trace unreadable"
cpu=$(info_cpu_seconds "$scratch/v.info")
within "$cpu" 0.3 0.03 || fail "ulimit -v 200000: profiled ${cpu}s of 0.3 s"
echo "ulimit -v 200000: ${cpu}s profiled"

# Too little to map even the first chunk: a clear error, the program not run, no file.
set +e
(ulimit -v 12000 && exec "$bin/collect" -o "$scratch/small.zst" sh -c "touch '$scratch/ran'") 2>"$scratch/s.err"
rc=$?
set -e
cat "$scratch/s.err"
[ $rc -eq 1 ] || fail "ulimit -v 12000: exit $rc, want 1"
[ ! -e "$scratch/small.zst" ] || fail "ulimit -v 12000: an empty trace file was left behind"
[ ! -e "$scratch/ran" ] || fail "ulimit -v 12000: the program ran unprofiled"
