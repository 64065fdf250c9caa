# SIGTRAP stays the program's: collect's perf events sample by SIGTRAP while
# the program never names it (collect/agent/trap.c), and every use the
# program makes of it (its default action, a handler, SA_RESETHAND, ignoring,
# blocking, sigwait, sigset, a worker's kill, a fork child's, the mask in a
# handler) gives the same output and exit status as without collect, with no
# SIGTRAP of the profiler's reaching the program; sampling goes on. On a
# kernel the agent does not trust with SIGTRAP (before 6.12) the events use
# the real-time signal and only the transparency is checked.
. "$(dirname "$0")/lib.sh"

# run MODE: the workload's output and exit status bare ($scratch/bare) and
# under collect ($scratch/coll, trace $scratch/t.zst); they must be equal.
run() {
	set +e
	(cd "$scratch" && ulimit -c 0 && exec "$workloads/collect_trap" "$1") >"$scratch/bare" 2>/dev/null
	bare=$?
	(cd "$scratch" && ulimit -c 0 && exec "$bin/collect" -q -o "$scratch/t.zst" "$workloads/collect_trap" "$1") \
		>"$scratch/coll" 2>"$scratch/err"
	coll=$?
	set -e
	echo "$1: exit $bare bare, $coll under collect; output: $(tr '\n' '|' <"$scratch/coll")"
	[ "$bare" = "$coll" ] || fail "$1: exit status $coll under collect, $bare without ($(cat "$scratch/err"))"
	cmp -s "$scratch/bare" "$scratch/coll" ||
		fail "$1: output differs: bare '$(tr '\n' '|' <"$scratch/bare")', collect '$(tr '\n' '|' <"$scratch/coll")'"
	"$bin/analyze" info "$scratch/t.zst" >"$scratch/info" 2>&1 || fail "$1: analyze info failed"
}
# perf_signal: what the trace says the perf events sent; on a kernel the
# agent does not trust with SIGTRAP, "5" stands for what they really sent
trusted=$(uname -r | awk -F. '{ print ($1 * 100 + $2 >= 612) }')
perf_signal() {
	got=$(sed -n 's/^  perf_signal *//p' "$scratch/info")
	if [ "$trusted" = 1 ]; then echo "$got"; else echo "5 $got"; fi
}
# sampled MIN: the trace holds at least MIN seconds of CPU
sampled() {
	cpu=$(info_cpu_seconds "$scratch/t.zst")
	awk -v c="$cpu" -v m="$1" 'BEGIN { exit !(c >= m) }' || fail "$mode: profiled ${cpu}s of CPU, want >= $1"
}

mode=default
run default
[ "$bare" -eq $((128 + 5)) ] || fail "default: the workload exited $bare, not killed by SIGTRAP"
set -- $(perf_signal)
[ "$1" = 5 ] && { [ $# -eq 1 ] || [ "$trusted" = 0 ]; } || fail "default: perf events sent '$*', want 5 (SIGTRAP)"
sampled 0.25

mode=handler
run handler
grep -qx 'got=6 perf=0 int3=1' "$scratch/coll" || fail "handler: $(cat "$scratch/coll")"
set -- $(perf_signal)
[ $# -eq 2 ] && [ "$1" = 5 ] && [ "$2" -ge 34 ] || fail "handler: perf events sent '$*', want 5 then a real-time signal"
# 0.9 s of CPU in all, 0.6 s of it after the program took SIGTRAP.
sampled 0.8

mode=resethand
run resethand
grep -qx 'after one: default' "$scratch/coll" || fail "resethand: $(cat "$scratch/coll")"

mode=ignore
run ignore
grep -qx survived "$scratch/coll" || fail "ignore: $(cat "$scratch/coll")"
sampled 0.25

mode=blocked
run blocked
[ "$(grep -c '^pending=1 blocked=1$' "$scratch/coll")" -eq 2 ] || fail "blocked: $(cat "$scratch/coll")"
[ "$bare" -eq $((128 + 5)) ] || fail "blocked: the workload exited $bare, not killed by SIGTRAP once unblocked"
set -- $(perf_signal)
[ $# -eq 2 ] && [ "$1" = 5 ] || fail "blocked: perf events sent '$*', want 5 then the real-time signal (a block gives it back)"

# The cases an independent review found (each compared with the bare run).
mode=worker
run worker
[ "$bare" -eq $((128 + 5)) ] || fail "worker: the workload exited $bare, not killed by SIGTRAP"
mode=sigwait
run sigwait
grep -qx 'sigwait: 5 pending=0' "$scratch/coll" || fail "sigwait: $(cat "$scratch/coll")"
mode=sigset
run sigset
grep -qx 'was hold: 1 blocked=0' "$scratch/coll" && grep -qx 'got=1 was ours: 1 blocked=1' "$scratch/coll" ||
	fail "sigset: $(cat "$scratch/coll")"
mode=inhandler
run inhandler
grep -qx 'SIGTRAP blocked in the handler: 1, after: 0' "$scratch/coll" || fail "inhandler: $(cat "$scratch/coll")"
mode=fork
run fork
grep -qx 'child: exited=1 status=0; parent: default' "$scratch/coll" || fail "fork: $(cat "$scratch/coll")"
[ "$bare" -eq $((128 + 5)) ] || fail "fork: the parent exited $bare, not killed by SIGTRAP"
sampled 0.35
echo "ok"
