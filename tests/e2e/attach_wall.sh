# collect -p -m wall (issue 30): a program started without collect, with a
# busy thread and three that block in nanosleep, a condition variable and a
# pipe read (tests/e2e/workloads/collect_wall.c), is attached to for a
# window. Each thread's share off CPU must be what the thread measured of its
# own time blocked, within 5 points; blocked stacks end in the call each
# waits in, under the line that makes it. No signal reaches the program: its
# sleeps are not cut short (the sleeper's blocked share would drop) and it
# exits 0 on its own after collect detached. The window is most of the run
# (0.3 s to 3.8 s of 4 s): the threads measure their shares over the whole
# run, and on a loaded machine (CI's -j2) the reader's share drifted by 5
# points between a shorter window and the rest.
. "$(dirname "$0")/lib.sh"
need jq jq
src=$(dirname "$0")/workloads/collect_wall.c
"$workloads/collect_wall" four 4 >"$scratch/out" 2>&1 &
pid=$!
sleep 0.3
"$bin/collect" -q -p "$pid" -m wall --duration 3500ms -o "$scratch/w.zst" 2>"$scratch/err" ||
	fail "collect -p -m wall exited $?: $(cat "$scratch/err")"
wait "$pid" || fail "the attached program exited $?: $(cat "$scratch/out")"
cat "$scratch/out"
[ "$(wc -l <"$scratch/out")" -eq 4 ] || fail "the workload did not report its four threads"
info_json "$scratch/w.zst" >"$scratch/info.json"
[ "$(jq -r '.mode' "$scratch/info.json")" = wall ] || fail "the trace does not say wall mode"
"$bin/analyze" info "$scratch/w.zst" | sed -n '/^Off CPU/p;/^Threads/,/^Modules/p'
while read -r _ tid role wall blocked; do
	wall=${wall#wall=}
	blocked=${blocked#blocked=}
	want=$(awk -v b="$blocked" -v w="$wall" 'BEGIN { printf "%.1f", 100 * b / w }')
	got=$(jq -r --argjson t "$tid" \
		'.threads[] | select(.tid == $t) | if .values.wall > 0 then 100 * .off_cpu / .values.wall else -1 end' \
		"$scratch/info.json")
	[ -n "$got" ] || fail "$role thread $tid is not in the trace"
	echo "$role: off CPU ${got}% (the thread measured ${want}% over its whole run)"
	# main blocks only in its final join, after the window: 0% there.
	[ "$role" = busy ] && want=0
	# The reader is woken by main's byte and counts its wait for a CPU inside read() as blocked, where
	# collect sees a runnable thread once it has run at all: on a loaded machine (CI's -j2 beside
	# collect_procs) that put it 4.6-5.1 points under, before this change as after it.
	tolerance=5
	[ "$role" = reader ] && tolerance=8
	within "$got" "$want" "$tolerance" || fail "$role: off CPU ${got}%, the thread measured ${want}%"
	thread_wall=$(jq -r --argjson t "$tid" '.threads[] | select(.tid == $t) | .values.wall / 1e9' "$scratch/info.json")
	within "$thread_wall" 3.5 0.2 || fail "$role: ${thread_wall} s of wall time in a 3.5 s window"
done <"$scratch/out"

# Where threads wait: each blocked stack ends in the blocking call, called from its marked line.
"$bin/analyze" tree -C --state off-cpu "$scratch/w.zst" >"$scratch/off.tree"
"$bin/analyze" flat --lines --state off-cpu "$scratch/w.zst" >"$scratch/off.flat"
for pair in nanosleep:@blocked-nanosleep pthread_cond_timedwait:@blocked-cond read:@blocked-read; do
	call=${pair%%:*}
	line=$(marker_line "${pair#*:}" "$src")
	grep -q "collect_wall.c:$line; " "$scratch/off.tree" || fail "off CPU: no stack through collect_wall.c:$line"
	awk -v c="$call" '$NF == c && $3 > 0' "$scratch/off.flat" | grep -q . ||
		fail "off CPU: $call has no self samples (the stacks do not end in the call)"
done
# ...and on CPU the burn functions.
"$bin/analyze" flat --state on-cpu "$scratch/w.zst" >"$scratch/on.flat"
for f in main_burn sleeper_burn waiter_burn reader_burn; do
	awk -v f="$f" '$NF == f && $1 > 0' "$scratch/on.flat" | grep -q . || fail "on CPU: no samples in $f"
done
echo ok
