# collect -p (issue 30): what cannot be attached to gets one clear line and
# a non-zero exit, never a hang, never a harmed process; what can (a static
# binary, a process that ends within the window, SIGINT to end the profile)
# ends with exit 0 and a complete trace.
. "$(dirname "$0")/lib.sh"
need jq jq

# expect_refusal STATUS PATTERN ARGS...: collect ARGS exits STATUS with one line matching PATTERN.
expect_refusal() {
	want=$1 pattern=$2
	shift 2
	set +e
	timeout 20 "$bin/collect" "$@" -o "$scratch/refused.zst" >/dev/null 2>"$scratch/err"
	got=$?
	set -e
	echo "collect $*: exit $got: $(cat "$scratch/err")"
	[ "$got" -eq "$want" ] || fail "collect $* exited $got, not $want: $(cat "$scratch/err")"
	grep -q "$pattern" "$scratch/err" || fail "collect $*: the message does not say '$pattern': $(cat "$scratch/err")"
	[ "$(grep -c . "$scratch/err")" -le 2 ] || fail "collect $*: more than a line: $(cat "$scratch/err")"
}

# A process that does not exist (one that ended and was reaped).
sh -c 'exit 0' &
gone=$!
wait "$gone"
expect_refusal 1 "no such process" -p "$gone"
# A zombie: the child of a shell that exec'd into a program that never waits.
sh -c 'sleep 0 & exec sleep 5' &
parent=$!
zombie=
for _ in $(seq 50); do
	zombie=$(awk -v p="$parent" '$4 == p && $3 == "Z" { print $1 }' /proc/[0-9]*/stat 2>/dev/null | head -n 1)
	[ -n "$zombie" ] && break
	sleep 0.1
done
[ -n "$zombie" ] || fail "could not make a zombie"
expect_refusal 1 "has ended" -p "$zombie"
kill "$parent"
# A kernel thread (kthreadd).
if [ "$(cat /proc/2/comm 2>/dev/null)" = kthreadd ]; then
	expect_refusal 1 "kernel thread" -p 2
fi
# Options that need a launched program, or a program with -p.
expect_refusal 2 "launch\|run the program under collect --allocs" -p 1 --allocs
expect_refusal 2 "no PROGRAM" -p 1 /bin/true
expect_refusal 2 "not with -p" -p 1 --paused
expect_refusal 2 "bad -p" -p abc

# Another user's process, as an unprivileged user: refused by the kernel, said so; in wall mode, for the stacks.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	sleep 30 &
	victim=$!
	# (a command, not a function: a function run with & is a subshell of root's, whose pid $! would be)
	nobody="setpriv --reuid=65534 --regid=65534 --clear-groups"
	set +e
	$nobody "$bin/collect" -p "$victim" --duration 1s -o /dev/null 2>"$scratch/err"
	got=$?
	$nobody "$bin/collect" -p "$victim" -m wall --duration 1s -o /dev/null 2>"$scratch/err.wall"
	got_wall=$?
	set -e
	echo "as nobody: exit $got: $(cat "$scratch/err")"
	echo "as nobody, -m wall: exit $got_wall: $(cat "$scratch/err.wall")"
	[ "$got" -eq 1 ] && grep -q "not permitted.*root/CAP_PERFMON" "$scratch/err" ||
		fail "another user's process: exit $got: $(cat "$scratch/err")"
	[ "$got_wall" -eq 1 ] && grep -q "blocked threads' stacks.*-m cpu" "$scratch/err.wall" ||
		fail "another user's process, -m wall: exit $got_wall: $(cat "$scratch/err.wall")"
	kill -0 "$victim" || fail "the refused attach harmed the process"
	kill "$victim"

	# An unprivileged user's own process: profiled, user mode alone at perf_event_paranoid 2 (and a
	# perf buffer within that user's locked-memory allowance).
	# The program from a directory that user can read (a build tree under /root is not): collect reads
	# the program's file as that user.
	shared=$(mktemp -d /tmp/ipscope-attach.XXXXXX)
	trap 'rm -rf "$scratch" "$shared"' EXIT
	chmod 755 "$shared"
	cp "$workloads/attach_target" "$shared/"
	$nobody "$shared/attach_target" 3 >"$scratch/nobody.out" 2>&1 &
	own=$!
	for _ in $(seq 100); do grep -q ready "$scratch/nobody.out" 2>/dev/null && break; sleep 0.05; done
	$nobody "$bin/collect" -q -p "$own" --duration 1s >"$scratch/nobody.zst" 2>"$scratch/err" ||
		fail "collect -p as the process's own unprivileged user exited $?: $(cat "$scratch/err")"
	wait "$own" || fail "the program profiled by its own user exited $?"
	source=$(info_json "$scratch/nobody.zst" | jq -r '.source')
	samples=$(info_samples "$scratch/nobody.zst")
	echo "as nobody, its own process: source $source, $samples samples"
	# (as many as the program's CPU time while watched, whatever else the machine runs)
	cover=$(info_json "$scratch/nobody.zst" | jq -r '.measured_cpu | if .measured_ns > 0 then 100 * .sampled_ns / .measured_ns else 0 end')
	echo "as nobody: the samples cover ${cover}% of the CPU time it used while watched"
	[ "$samples" -gt 100 ] && awk -v c="$cover" 'BEGIN { exit !(c >= 85 && c <= 105) }' ||
		fail "as nobody: $samples samples, ${cover}% of the program's CPU time"
	if [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -ge 2 ]; then
		[ "$source" = perf-task-clock-attached-user ] || fail "as nobody at paranoid >= 2 the source is $source"
	fi
	"$bin/analyze" flat "$scratch/nobody.zst" >"$scratch/nobody.flat" 2>&1
	grep -q 'three_quarters' "$scratch/nobody.flat" ||
		fail "as nobody: no three_quarters in the profile: $(head -n 12 "$scratch/nobody.flat")"
fi

# A statically linked program: nothing of collect's needs to enter it.
"$workloads/collect_busy_static" 3 2>/dev/null &
static=$!
sleep 0.2
"$bin/collect" -q -p "$static" --duration 1s -o "$scratch/s.zst" || fail "collect -p of a static program exited $?"
wait "$static" || fail "the static program exited $?"
"$bin/analyze" flat "$scratch/s.zst" >"$scratch/s.flat"
awk '$NF == "busy_loop" && $2 + 0 > 90' "$scratch/s.flat" | grep -q . ||
	fail "static program: busy_loop is not ~100% of the profile: $(cat "$scratch/s.flat")"

# A process that ends within the window: collect follows it to its end, exit 0, the trace complete.
"$workloads/collect_busy" 0.5 2>/dev/null &
short=$!
sleep 0.1
start=$(date +%s)
"$bin/collect" -q -p "$short" --duration 20s -o "$scratch/e.zst" || fail "collect -p of a process that ended exited $?"
[ $(($(date +%s) - start)) -le 5 ] || fail "collect waited $(($(date +%s) - start)) s after the process ended"
wait "$short" || true
"$bin/analyze" info "$scratch/e.zst" >"$scratch/e.info" 2>&1
grep '^Exit' "$scratch/e.info"
# Its status is read from /proc while it is a zombie; once its parent reaped it, it is unknown.
grep -Eq '^Exit: *(exited with status 0|ended)' "$scratch/e.info" || fail "info does not say the process ended: $(grep ^Exit "$scratch/e.info")"
[ "$(info_json "$scratch/e.zst" | jq -r '.end.present')" = true ] || fail "the trace of an ended process has no end"

# SIGINT to collect (no --duration) ends the profile: exit 0, a complete trace, the program runs on.
"$workloads/collect_busy" 4 2>/dev/null &
busy=$!
sleep 0.1
"$bin/collect" -q -p "$busy" -o "$scratch/i.zst" &
collector=$!
sleep 1
kill -INT "$collector"
wait "$collector" || fail "collect -p exited $? at SIGINT"
kill -0 "$busy" || fail "the program did not outlive collect's SIGINT"
kill "$busy"
[ "$(info_json "$scratch/i.zst" | jq -r '.end.present')" = true ] || fail "SIGINT: the trace has no end"
cover=$(info_json "$scratch/i.zst" | jq -r '.measured_cpu | if .measured_ns > 0 then 100 * .sampled_ns / .measured_ns else 0 end')
[ "$(info_samples "$scratch/i.zst")" -gt 100 ] && awk -v c="$cover" 'BEGIN { exit !(c >= 85 && c <= 105) }' ||
	fail "SIGINT: $(info_samples "$scratch/i.zst") samples, ${cover}% of the program's CPU time while watched"
echo ok
