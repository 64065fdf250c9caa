# Signals are the program's: a signal sent to the process group reaches it
# once (not once more through collect), one sent to collect alone is passed
# on once, its own SIGPROF handler and ITIMER_PROF see no signal of the
# profiler's, and a program that takes the profiler's signal is told about;
# mask changes of other libraries' fork handlers survive the agent's own
# block of its signal across a fork.
. "$(dirname "$0")/lib.sh"

# deliver HOW SIG: start the counting workload under collect as the leader of
# a new process group (setsid does not fork here, so $! is collect; perl
# restores the SIGINT a shell without job control leaves ignored), send SIG
# to the group (HOW=group) or to collect alone (HOW=collect), and print what
# the program counted.
deliver() {
	rm -f "$scratch/ready"
	perl -e '$SIG{INT} = $SIG{QUIT} = "DEFAULT"; exec @ARGV or die' -- setsid "$bin/collect" -q \
		-o "$scratch/t.zst" "$workloads/collect_signals" count "$scratch/ready" 2>"$scratch/err" &
	pid=$!
	i=0
	while [ ! -e "$scratch/ready" ] && [ $i -lt 400 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	[ -e "$scratch/ready" ] || fail "$1 $2: the workload never got ready"
	if [ "$1" = group ]; then
		kill -s "$2" -- "-$pid"
	else
		kill -s "$2" "$pid"
	fi
	set +e
	wait $pid
	rc=$?
	set -e
	[ $rc -eq 0 ] || fail "$1 $2: collect exited $rc: $(cat "$scratch/err")"
	grep '^SIG' "$scratch/err"
}
for sig in INT TERM; do
	for how in group collect; do
		got=$(deliver $how $sig)
		want="SIGINT=$([ $sig = INT ] && echo 1 || echo 0) SIGTERM=$([ $sig = TERM ] && echo 1 || echo 0)"
		echo "SIG$sig to the $how: the program counted $got"
		[ "$got" = "$want" ] || fail "SIG$sig sent to the $how: the program counted '$got', want '$want'"
	done
done

# Its own SIGPROF handler and ITIMER_PROF: only its timer's signals, and it
# is still sampled (on another signal).
"$bin/collect" -o "$scratch/p.zst" "$workloads/collect_signals" prof 1 2>"$scratch/p.err" ||
	fail "prof: collect failed: $(cat "$scratch/p.err")"
cat "$scratch/p.err"
set -- $(sed -n 's/^sigprof own=\([0-9]*\) stray=\([0-9]*\) periods=\([0-9]*\)$/\1 \2 \3/p' "$scratch/p.err")
[ $# -eq 3 ] || fail "prof: the workload did not report"
[ "$2" -eq 0 ] || fail "prof: the program's SIGPROF handler got $2 signals that were not its timer's"
# Its timer still works; ITIMER_PROF fires on the tick and folds signals when
# the machine is loaded (42 for 100 periods seen under the ASan run), so the
# lower bound is loose. The known answer is stray=0.
[ "$1" -ge $(($3 / 5)) ] && [ "$1" -le $(($3 * 11 / 10 + 5)) ] ||
	fail "prof: its ITIMER_PROF delivered $1 SIGPROFs for $3 periods"
"$bin/analyze" info "$scratch/p.zst" >"$scratch/p.info" || fail "prof: analyze info failed"
cpu=$(info_cpu_seconds "$scratch/p.info")
within "$cpu" 1 0.1 || fail "prof: profiled ${cpu}s of the program's 1 s"
signal=$(awk '$1 == "signal" { print $2 }' "$scratch/p.info")
[ "${signal:-0}" -ge 34 ] || fail "prof: sampled with signal '${signal}', not a real-time one"

# A program that installs a handler for the profiler's own signal gets none of
# its samples; collect says so, and the trace too.
"$bin/collect" --signal 50 -o "$scratch/s.zst" "$workloads/collect_signals" takeover 50 2>"$scratch/s.err" ||
	fail "takeover: collect failed: $(cat "$scratch/s.err")"
cat "$scratch/s.err"
grep -qx 'got=0' "$scratch/s.err" || fail "takeover: the program's handler received the profiler's signals"
grep -q 'installed its own handler for signal 50' "$scratch/s.err" || fail "takeover: collect did not say"
"$bin/analyze" info "$scratch/s.zst" >"$scratch/s.info" || fail "takeover: analyze info failed"
grep -q 'signal_taken *50' "$scratch/s.info" || fail "takeover: the trace does not say"
cpu=$(info_cpu_seconds "$scratch/s.info")
within "$cpu" 0.2 0.05 || fail "takeover: profiled ${cpu}s, want the 0.2 s before the takeover"

# Fork handlers registered before the agent's (a linked library's constructor) change the mask in
# the parent and the child: the agent's fork window undid them (SETMASK to the mask before it).
# CPU and wall modes; recording allocations, the window blocks every signal and still restores the
# whole mask (not fixed yet).
"$workloads/collect_forkmask" >"$scratch/forkmask.bare" || fail "collect_forkmask fails without collect"
for mode in "" "-m wall"; do
	"$bin/collect" -q $mode -o "$scratch/fm.zst" "$workloads/collect_forkmask" >"$scratch/forkmask.out" 2>"$scratch/err" ||
		fail "forkmask $mode: collect exited $?: $(cat "$scratch/err")"
	sort "$scratch/forkmask.out" | cmp -s - "$(sort "$scratch/forkmask.bare" >"$scratch/fm.sorted"; echo "$scratch/fm.sorted")" ||
		fail "forkmask $mode: '$(cat "$scratch/forkmask.out")', without collect '$(cat "$scratch/forkmask.bare")'"
done
echo "fork handlers' masks: as without collect"

# Signals the program sends (a pre-fork master to its group, a daemon to its parent): collect is in
# the group and is the parent, and must neither die (the trace cut, the program orphaned) nor act on
# them (SIGUSR2 toggled sampling off); the program gets each of its group's once, as bare. setsid:
# the group is the program's own bare, collect's under collect.
setsid "$workloads/collect_signals" notify 0 2>"$scratch/n.bare" || fail "notify: bare run failed: $(cat "$scratch/n.bare")"
grep -qx 'notified=4' "$scratch/n.bare" || fail "notify: bare: $(cat "$scratch/n.bare")"
setsid "$bin/collect" -o "$scratch/n.zst" "$workloads/collect_signals" notify 1 2>"$scratch/n.err" ||
	fail "notify: collect exited $?: $(cat "$scratch/n.err")"
grep -qx 'notified=4' "$scratch/n.err" || fail "notify: under collect: $(cat "$scratch/n.err")"
[ "$(info_json "$scratch/n.zst" | jq -c '[.end.present, .exit.wait_status]')" = "[true,0]" ] ||
	fail "notify: the trace does not end with the program's exit 0: $(info_json "$scratch/n.zst" | jq -c '[.end, .exit]')"
cpu=$(info_cpu_seconds "$scratch/n.zst")
within "$cpu" 0.35 0.1 || fail "notify: profiled ${cpu}s of the program's 0.35 s (sampling toggled off?)"
