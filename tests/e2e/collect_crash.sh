# Crashes (issue 9): a program that dies from SIGSEGV, SIGABRT, _exit or a
# SIGKILL of its own after 0.5 s of CPU in crash_work, as the first process
# and as a forked child: the trace is readable, covers at least 0.4 s of the
# work, and the exit status (the child's wait status, core dump bit included,
# with core dumps on) is what it is without collect.
. "$(dirname "$0")/lib.sh"
cd "$scratch"
ulimit -c unlimited 2>/dev/null || true
# An ASan-built collect would set RLIMIT_CORE to 0 for itself and so for the program.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}disable_coredump=0"
status_of() {
	set +e
	"$@" >"$scratch/out" 2>"$scratch/err"
	rc=$?
	set -e
	echo $rc
}
for how in segv abort _exit kill; do
	want=$(status_of "$workloads/collect_exit" crash "$how")
	got=$(status_of "$bin/collect" -q -o "$scratch/t.zst" "$workloads/collect_exit" crash "$how")
	[ "$got" -eq "$want" ] || fail "$how: collect exited $got, the program alone $want"
	"$bin/analyze" info "$scratch/t.zst" >/dev/null 2>&1 || fail "$how: the trace is unreadable"
	cpu=$(info_cpu_seconds "$scratch/t.zst")
	echo "$how: exit $got as alone; ${cpu}s of 0.5 s in the trace"
	awk -v c="$cpu" 'BEGIN { exit !(c >= 0.4) }' || fail "$how: only ${cpu}s of the 0.5 s before the end"
	"$bin/analyze" flat "$scratch/t.zst" | grep -q ' crash_work$' || fail "$how: crash_work is not in the trace"

	# The same death in a forked child: its wait status as without collect, in the trace too.
	status_of "$workloads/collect_exit" child "$how" >/dev/null
	want=$(sed -n 's/^child_status=//p' "$scratch/out")
	rm -f "$scratch"/core*
	[ "$(status_of "$bin/collect" -q -o "$scratch/c.zst" "$workloads/collect_exit" child "$how")" -eq 0 ] ||
		fail "child $how: collect failed: $(cat "$scratch/err")"
	got=$(sed -n 's/^child_status=//p' "$scratch/out")
	[ "$got" = "$want" ] || fail "child $how: the parent saw status $got under collect, $want alone"
	json=$(info_json "$scratch/c.zst")
	child=$(echo "$json" | jq -r '.threads[0].pid as $p | [.processes[] | select(.pid != $p)][0]')
	[ "$(echo "$child" | jq -r '.wait_status')" = "$want" ] || fail "child $how: the trace says $(echo "$child" | jq -c .)"
	cpu=$(echo "$child" | jq -r '.value / 1e9')
	echo "child $how: wait status $got as alone; ${cpu}s of 0.5 s in the trace"
	awk -v c="$cpu" 'BEGIN { exit !(c >= 0.4) }' || fail "child $how: only ${cpu}s of the 0.5 s"
done
echo "crashes: ok"
