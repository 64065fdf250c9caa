# Wall mode (issue 9): four threads, one busy and three that burn and then
# block (nanosleep, a condition variable, read on a pipe). Each thread
# measures its own time blocked (tests/e2e/workloads/collect_wall.c): in wall
# mode its off-CPU share must be that within 5 points, and the blocked stacks
# must end in the call each waits in, under the line that makes it. The same
# program in cpu mode shows only the busy work.
. "$(dirname "$0")/lib.sh"
src=$(dirname "$0")/workloads/collect_wall.c
"$bin/collect" -q -m wall -o "$scratch/w.zst" "$workloads/collect_wall" four 1.5 >"$scratch/out" 2>"$scratch/err" ||
	fail "collect -m wall exited $?: $(cat "$scratch/err")"
cat "$scratch/out"
[ "$(info_json "$scratch/w.zst" | jq -r '.mode')" = wall ] || fail "the trace does not say wall mode"
info_json "$scratch/w.zst" | jq -e '.value_types | map(.type) | index("wall")' >/dev/null ||
	fail "a wall trace has no wall/nanoseconds value"
[ "$(info_json "$scratch/w.zst" | jq '.agent.sampler_cpu_ns')" -gt 0 ] || fail "the trace does not say what the sampler thread cost"
"$bin/analyze" info "$scratch/w.zst" | sed -n '/^Off CPU/p;/^Sampler/p;/^Threads/,/^Modules/p'
while read -r _ tid role wall blocked; do
	wall=${wall#wall=}
	blocked=${blocked#blocked=}
	want=$(awk -v b="$blocked" -v w="$wall" 'BEGIN { printf "%.1f", 100 * b / w }')
	got=$(info_json "$scratch/w.zst" | jq -r --argjson t "$tid" \
		'.threads[] | select(.tid == $t) | if .values.wall > 0 then 100 * .off_cpu / .values.wall else -1 end')
	[ -n "$got" ] || fail "$role thread $tid is not in the trace"
	echo "$role: off CPU ${got}% (the thread measured ${want}%)"
	within "$got" "$want" 5 || fail "$role: off CPU ${got}%, the thread measured ${want}%"
done <"$scratch/out"
[ "$(wc -l <"$scratch/out")" -eq 4 ] || fail "the workload did not report its four threads"

# Labels: a wall profile's per-thread trees total wall time, not CPU; info's
# measured-CPU line compares the on-CPU samples (running or runnable: a
# signalled thread's handler runs once it gets a CPU) as wall time, saying
# so, never as a coverage of the CPU time (which reached 243.9%).
"$bin/analyze" tree --threads "$scratch/w.zst" >"$scratch/threads.tree"
grep '^Thread ' "$scratch/threads.tree"
[ "$(grep -c '^Thread .* of wall time$' "$scratch/threads.tree")" -eq 4 ] ||
	fail "per-thread headers do not total wall time: $(grep '^Thread ' "$scratch/threads.tree")"
measured=$("$bin/analyze" info "$scratch/w.zst" | grep '^Measured CPU:') || fail "analyze info has no Measured CPU line"
echo "$measured"
echo "$measured" | grep -q 'on-CPU samples stand for .* of wall time.*runnable' ||
	fail "wall mode: the measured CPU line does not say on CPU is wall time, runnable included: $measured"
if echo "$measured" | grep -q 'cover\|unsampled'; then
	fail "wall mode: the measured CPU line calls on-CPU wall time a coverage of CPU time: $measured"
fi

# Where threads wait: each blocked stack ends in the blocking call, called from its marked line.
"$bin/analyze" tree -C --state off-cpu "$scratch/w.zst" >"$scratch/off.tree"
"$bin/analyze" flat --lines --state off-cpu "$scratch/w.zst" >"$scratch/off.flat"
for pair in nanosleep:@blocked-nanosleep pthread_cond_timedwait:@blocked-cond read:@blocked-read \
	__pthread_clockjoin_ex:@blocked-join; do
	call=${pair%%:*}
	line=$(marker_line "${pair#*:}" "$src")
	grep -q "collect_wall.c:$line; " "$scratch/off.tree" || fail "off CPU: no stack through collect_wall.c:$line"
	awk -v c="$call" '$NF == c && $3 > 0' "$scratch/off.flat" | grep -q . ||
		fail "off CPU: $call has no self samples (the stacks do not end in the call)"
	awk -v l="$line" '$5 == "collect_wall.c" && $6 == l' "$scratch/off.flat" | grep -q . ||
		fail "off CPU: flat has no row for collect_wall.c:$line under $call"
done
# ...and on CPU the burn functions, never the blocking calls.
"$bin/analyze" flat --state on-cpu "$scratch/w.zst" >"$scratch/on.flat"
for f in main_burn sleeper_burn waiter_burn reader_burn; do
	grep -q " $f\$" "$scratch/on.flat" || fail "on CPU: no $f"
done
if awk '$NF == "nanosleep" || $NF == "pthread_cond_timedwait"' "$scratch/on.flat" | grep -q .; then
	fail "on CPU: a blocking call is on CPU: $(cat "$scratch/on.flat")"
fi

# cpu mode: only the busy work: the blocking calls have (almost) nothing, the CPU time is the threads'.
"$bin/collect" -q -o "$scratch/c.zst" "$workloads/collect_wall" four 1 >"$scratch/cout" 2>"$scratch/err" ||
	fail "collect (cpu) exited $?: $(cat "$scratch/err")"
[ "$(info_json "$scratch/c.zst" | jq -r '.mode')" = cpu ] || fail "the cpu trace does not say cpu mode"
"$bin/analyze" flat "$scratch/c.zst" >"$scratch/c.flat"
blocked=$(awk '$NF == "nanosleep" || $NF == "pthread_cond_timedwait" || $NF == "__pthread_clockjoin_ex" \
	{ sub("%", "", $2); s += $2 } END { print s + 0 }' "$scratch/c.flat")
awk -v b="$blocked" 'BEGIN { exit !(b < 2) }' || fail "cpu mode: the blocking calls have ${blocked}% of the samples"
[ "$(info_json "$scratch/c.zst" | jq '[.threads[] | .off_cpu] | add')" -eq 0 ] || fail "cpu mode: samples off CPU"
for f in main_burn sleeper_burn waiter_burn reader_burn; do
	grep -q " $f\$" "$scratch/c.flat" || fail "cpu mode: no $f"
done

# io_uring's kernel worker (a read of an empty pipe, IOSQE_ASYNC) is the kernel's task, not a thread
# of the program: listed, it was an unnamed thread 100% off CPU.
set +e
"$bin/collect" -q -m wall -o "$scratch/u.zst" "$workloads/collect_io_uring" >/dev/null 2>"$scratch/err"
rc=$?
set -e
if [ $rc -eq 3 ]; then
	echo "io_uring: not available here, skipped"
else
	[ $rc -eq 0 ] || fail "io_uring: collect exited $rc: $(cat "$scratch/err")"
	[ "$(info_json "$scratch/u.zst" | jq '.threads | length')" -eq 1 ] ||
		fail "io_uring: threads listed: $(info_json "$scratch/u.zst" | jq -c '[.threads[] | .name]')"
fi
echo "wall and cpu mode: ok"
