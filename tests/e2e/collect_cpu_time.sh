# A single thread burns ~1 s of CPU: the trace's summed sample weight times
# the interval must be within 10% of what the thread's own CPU clock measured,
# and the precise source must give ~1000 samples per CPU second at 1 ms.
. "$(dirname "$0")/lib.sh"
"$bin/collect" -o "$scratch/t.zst" "$workloads/collect_busy" 1.0 2>"$scratch/err" ||
	fail "collect exited $?: $(cat "$scratch/err")"
measured=$(value_of cpu_seconds "$scratch/err")
"$bin/analyze" info "$scratch/t.zst" >"$scratch/info" || fail "analyze info failed"
cat "$scratch/info"
profiled=$(info_cpu_seconds "$scratch/info")
samples=$(info_samples "$scratch/info")
[ -n "$profiled" ] && [ -n "$samples" ] || fail "no CPU time or samples line in analyze info"
echo "measured ${measured}s, profiled ${profiled}s, $samples samples"
within "$profiled" "$measured" "$(awk -v m="$measured" 'BEGIN { print m * 0.10 }')" ||
	fail "profiled CPU ${profiled}s is not within 10% of measured ${measured}s"
if grep -q 'perf-task-clock' "$scratch/info"; then
	[ "$samples" -ge 700 ] || fail "only $samples samples for ~1 s at 1 ms with the precise source"
fi
