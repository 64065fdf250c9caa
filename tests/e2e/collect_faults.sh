# A single thread whose CPU time is mostly page faults (kernel time outside
# system calls, which the perf-task-clock+cpu-timer source does not sample):
# the samples miss much of its time, and analyze info and collect must say
# why with figures: not short threads (it has samples), at most one interval
# for its last partial period, the rest kernel time the sampling does not
# see, which the workload's own clock bounds (its time touching pages plus
# its mmap/munmap calls).
. "$(dirname "$0")/lib.sh"
"$bin/collect" -o "$scratch/f.zst" "$workloads/collect_faults" 0.8 2>"$scratch/err" ||
	fail "collect exited $?: $(cat "$scratch/err")"
faults=$(value_of faults "$scratch/err")
calls=$(value_of calls "$scratch/err")
"$bin/analyze" info "$scratch/f.zst" >"$scratch/info" || fail "analyze info failed"
grep -q '^Source: *perf-task-clock+cpu-timer' "$scratch/info" || { echo "not the perf source: skipped"; exit 0; }
grep '^Measured CPU:' -A2 "$scratch/info"
grep '^collect: the samples cover' "$scratch/err" || true
set -- $(info_json "$scratch/f.zst" | jq -r '.measured_cpu | "\(.measured_ns) \(.sampled_ns) \(.missing.unsampled_threads)
	\(.missing.unsampled_threads_ns) \(.missing.partial_threads) \(.missing.partial_ns) \(.missing.unseen_ns)"')
[ $# -eq 7 ] || fail "analyze info --format json has no measured_cpu.missing figures"
measured=$1 sampled=$2 short=$3 short_ns=$4 partial_ns=$6 unseen=$7
interval=$(info_json "$scratch/f.zst" | jq -r '.interval_ns // empty')
# The one thread has samples: nothing is blamed on threads too short to have one.
[ "$short" -eq 0 ] && [ "$short_ns" -eq 0 ] || fail "$short threads ($short_ns ns) said to have no sample"
# The parts add up to what the samples miss; the last partial period is at most one interval.
[ $((short_ns + partial_ns + unseen)) -eq $((measured - sampled)) ] ||
	fail "missing parts $short_ns + $partial_ns + $unseen ns, measured - sampled is $((measured - sampled)) ns"
[ "$partial_ns" -le "$interval" ] || fail "the last partial interval is $partial_ns ns, more than the $interval ns interval"
# The rest is kernel time: a good part of the missing time, and no more than the kernel work the workload timed.
awk -v u="$unseen" -v m="$measured" -v s="$sampled" -v f="$faults" -v c="$calls" \
	'BEGIN { exit !(m - s > 0.1 * m && u >= 0.9 * (m - s) && u <= (f + c) * 1e9 * 1.05) }' ||
	fail "unseen kernel time $unseen ns of $((measured - sampled)) missing; the workload faulted ${faults}s, called ${calls}s"
echo "faults ${faults}s, calls ${calls}s: missing $((measured - sampled)) ns, $unseen ns of it kernel time not sampled"
# The words: the cause named, short threads not.
grep -A2 '^Measured CPU:' "$scratch/info" | grep -q 'beyond that, not sampled: kernel time outside system calls (page faults' ||
	fail "analyze info does not name kernel time outside system calls: $(grep -A2 '^Measured CPU:' "$scratch/info")"
if grep -qi 'short threads\|ended before their first sample' "$scratch/info" "$scratch/err"; then
	fail "short threads blamed: $(grep -i 'short threads\|ended before' "$scratch/info" "$scratch/err")"
fi
grep -q '^collect: the samples cover .*kernel time outside system calls' "$scratch/err" ||
	fail "collect's summary does not name kernel time: $(grep '^collect: the samples' "$scratch/err")"
