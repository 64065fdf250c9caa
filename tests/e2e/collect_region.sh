# Region control (issue 9): ipscope_start()/ipscope_stop() from ipscope.h
# under collect --paused give samples from the region only (and, without
# --paused, pause after it); SIGUSR2 to collect turns sampling off; --delay
# and --duration cut the run's wall time (checked in wall mode, whose samples
# are wall time whatever the load). Workload: tests/e2e/workloads/collect_region.c.
. "$(dirname "$0")/lib.sh"
"$workloads/collect_region" || fail "the workload fails without collect (ipscope.h must be a no-op then)"
# works FLAT: the *_work functions that have more than ${min:-0} samples, sorted
works() {
	awk -v m="${min:-0}" '$NF ~ /_work$/ && $1 > m { print $NF }' "$1" | sort | tr '\n' ' '
}
region() {
	name=$1
	want=$2
	shift 2
	"$bin/collect" -q -o "$scratch/$name.zst" "$@" 2>"$scratch/err" || fail "$name: collect exited $?: $(cat "$scratch/err")"
	! grep -q 'samples cover' "$scratch/err" || fail "$name: collect warns of missing samples: $(cat "$scratch/err")"
	"$bin/analyze" flat "$scratch/$name.zst" >"$scratch/$name.flat"
	got=$(works "$scratch/$name.flat")
	echo "$name: samples in: $got"
	[ "$got" = "$want" ] || fail "$name: samples in '$got', want '$want': $(cat "$scratch/$name.flat")"
}
region paused "region_work " --paused "$workloads/collect_region"
cpu=$(info_cpu_seconds "$scratch/paused.zst")
within "$cpu" 0.4 0.04 || fail "paused: ${cpu}s in the region of 0.4 s"
region unpaused "before_work region_work " "$workloads/collect_region"
# SIGUSR2 from outside the tree (the program's own is not for collect: collect_signals.sh): sent
# while the program waits, after before_work. Asynchronous: collect notices it and the agents see
# the flag within a few ms, during which after_work may still be sampled (1 sample seen under ASan
# on a loaded machine).
"$bin/collect" -q -o "$scratch/sigusr2.zst" "$workloads/collect_region" toggle "$scratch/toggle" 2>"$scratch/err" &
collect_pid=$!
i=0
while [ ! -e "$scratch/toggle" ] && [ $i -lt 1000 ]; do
	sleep 0.01
	i=$((i + 1))
done
kill -USR2 $collect_pid
sleep 0.1
rm -f "$scratch/toggle"
wait $collect_pid || fail "sigusr2: collect exited $?: $(cat "$scratch/err")"
"$bin/analyze" flat "$scratch/sigusr2.zst" >"$scratch/sigusr2.flat"
got=$(min=10 works "$scratch/sigusr2.flat")
[ "$got" = "before_work " ] || fail "sigusr2: samples in '$got', want 'before_work ': $(cat "$scratch/sigusr2.flat")"

# --delay and --duration, in wall time.
"$bin/collect" -q -m wall --delay 300ms --duration 400ms -o "$scratch/d.zst" "$workloads/collect_region" timed 1.2 ||
	fail "--delay --duration: collect exited $?"
wall=$(info_json "$scratch/d.zst" | jq '.value_types[] | select(.type == "wall") | .total / 1e9')
echo "--delay 300ms --duration 400ms: ${wall}s sampled"
within "$wall" 0.4 0.04 || fail "--delay 300ms --duration 400ms: ${wall}s of wall time sampled, want 0.4"
[ "$(info_json "$scratch/d.zst" | jq -r '.metadata.delay_ns')" = 300000000 ] || fail "the trace does not say the delay"
"$bin/collect" -q -m wall --delay 300ms -o "$scratch/e.zst" "$workloads/collect_region" timed 0.6 ||
	fail "--delay: collect exited $?"
json=$(info_json "$scratch/e.zst")
wall=$(echo "$json" | jq '.value_types[] | select(.type == "wall") | .total / 1e9')
run=$(echo "$json" | jq '.duration_ns / 1e9')
echo "--delay 300ms: ${wall}s sampled of a ${run}s run"
within "$wall" "$(awk -v r="$run" 'BEGIN { print r - 0.3 }')" 0.06 || fail "--delay 300ms: ${wall}s sampled of a ${run}s run"
echo "region control: ok"
