# A single thread burns ~1 s of CPU: the trace's summed sample weight times
# the interval must be within 10% of what the thread's own CPU clock measured,
# with either sampling source. The precise source (perf task-clock) must also
# give ~1000 samples per CPU second at 1 ms, not the 250 of the tick. The
# trace says what the agent's signal handler cost, per sample and in all.
. "$(dirname "$0")/lib.sh"
for source in perf timer; do
	"$bin/collect" --source $source -o "$scratch/t.zst" "$workloads/collect_busy" 1.0 2>"$scratch/err" ||
		fail "$source: collect exited $?: $(cat "$scratch/err")"
	measured=$(value_of cpu_seconds "$scratch/err")
	"$bin/analyze" info "$scratch/t.zst" >"$scratch/info" || fail "analyze info failed"
	cat "$scratch/info"
	profiled=$(info_cpu_seconds "$scratch/t.zst")
	samples=$(info_samples "$scratch/t.zst")
	[ -n "$profiled" ] && [ -n "$samples" ] || fail "no samples line in analyze info"
	echo "$source: measured ${measured}s, profiled ${profiled}s, $samples samples"
	within "$profiled" "$measured" "$(awk -v m="$measured" 'BEGIN { print m * 0.10 }')" ||
		fail "$source: profiled CPU ${profiled}s is not within 10% of measured ${measured}s"
	cost=$(sed -n 's/^Agent cost: *\([0-9.]*\) us per sample (.*, \([0-9.]*\)% of the CPU time sampled)$/\1 \2/p' "$scratch/info")
	[ -n "$cost" ] || fail "$source: analyze info does not say what the agent cost"
	set -- $cost
	# A warm sample costs about a microsecond; anything from 0.05 to 200 us is plausible, not 0.
	awk -v c="$1" -v s="$2" 'BEGIN { exit !(c >= 0.05 && c <= 200 && s < 5) }' ||
		fail "$source: implausible agent cost: $1 us per sample, $2% of the CPU time"
	if [ $source = perf ]; then
		grep -q 'perf-task-clock' "$scratch/info" || fail "perf: source not reported"
		[ "$samples" -ge 800 ] || fail "perf: only $samples samples for ~1 s at 1 ms"
	else
		grep -q 'posix-cpu-timer' "$scratch/info" || fail "timer: source not reported"
	fi
done
