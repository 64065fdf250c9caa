# A single thread whose CPU time is mostly page faults (kernel time outside
# system calls, which the user-mode perf event does not count): the timer tick
# that finds the thread in a fault is delivered at the faulting instruction,
# and its time is charged there (sampler.c, kernel_tick), as a system call's
# is charged where the call returns. The samples must hold the thread's CPU
# time (at least 90% of what its own clock measured: before, 60 to 70% was
# missing), the touching line its share within 5 points of what the workload
# timed, and what is still missing must add up, not blamed on short threads.
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
# The parts add up to what the samples miss; the last partial period is at most one interval. The
# thread's end charge is whole intervals, rounded up at random, so the samples may hold up to one
# interval more than it measured: nothing is missing then.
missing=$((measured - sampled))
if [ "$missing" -lt 0 ]; then
	[ $((short_ns + partial_ns + unseen)) -eq 0 ] && [ $((-missing)) -le "$interval" ] ||
		fail "the samples hold $((-missing)) ns more than measured, missing parts $short_ns + $partial_ns + $unseen ns"
else
	[ $((short_ns + partial_ns + unseen)) -eq "$missing" ] ||
		fail "missing parts $short_ns + $partial_ns + $unseen ns, measured - sampled is $missing ns"
fi
[ "$partial_ns" -le "$interval" ] || fail "the last partial interval is $partial_ns ns, more than the $interval ns interval"
echo "faults ${faults}s, calls ${calls}s: measured $measured ns, sampled $sampled ns, $unseen ns kernel time not sampled"
awk -v m="$measured" -v s="$sampled" 'BEGIN { exit !(s >= 0.9 * m && s <= 1.02 * m) }' ||
	fail "the samples hold $sampled ns of the thread's $measured ns (page faults not charged?)"
# Where: the loop that touches the pages (the store, where a fault's tick is charged, and the loop's
# own line, where some of its user-mode time falls: 5% on a 6.18 kernel), which the workload times,
# within 7 points. A tick inside munmap's 5 ms is delivered when the call returns, and the timer's
# overruns count up to there: the call's ticks carry up to a tick more each. With a 250 Hz tick that
# put 15.6% of the samples in the calls (perf record -e task-clock -g: 11.6%, the workload's clock:
# 11.8%), the loop 3 to 5.5 points under its 87%; earlier machines passed within 5 (doc/limitations.md).
cpu=$(value_of cpu "$scratch/err")
"$bin/analyze" flat --lines "$scratch/f.zst" >"$scratch/flat"
source=$(dirname "$0")/workloads/collect_faults.c
store=$(marker_line '@touch \*/' "$source")
loop=$(marker_line @touch-loop "$source")
got=$(awk -v s="$store" -v l="$loop" '$5 == "collect_faults.c" && ($6 == s || $6 == l) { sub("%", "", $4); sum += $4 }
	END { printf "%.1f", sum }' "$scratch/flat")
store_share=$(awk -v s="$store" '$5 == "collect_faults.c" && $6 == s { sub("%", "", $4); print $4 }' "$scratch/flat")
want=$(awk -v f="$faults" -v c="$cpu" 'BEGIN { printf "%.1f", 100 * f / c }')
echo "the touching loop: ${got}% of the samples (its store ${store_share:-0}%), ${want}% of the thread's CPU by its clock"
within "$got" "$want" 7 || fail "the touching loop has ${got}% of the samples, the workload timed ${want}% there"
# Most of it is the faults, at the store.
awk -v s="${store_share:-0}" -v g="$got" 'BEGIN { exit !(s >= 0.75 * g) }' ||
	fail "the store has ${store_share:-0}% of the loop's ${got}%: the faults' time is not charged where they happen"
if grep -qi 'short threads\|ended before their first sample' "$scratch/info" "$scratch/err"; then
	fail "short threads blamed: $(grep -i 'short threads\|ended before' "$scratch/info" "$scratch/err")"
fi
