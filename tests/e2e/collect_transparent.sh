# Wall mode does not change what the program observes (issue 9): a program
# timing its own 100 ms nanosleep, clock_nanosleep, usleep (and a sleep(1)), poll, ppoll,
# select, pselect, epoll_wait, epoll_pwait, sigtimedwait, sigwaitinfo, pause
# and SO_RCVTIMEO/SO_SNDTIMEO socket timeouts fails if any returns early or
# with EINTR (tests/e2e/workloads/collect_sleeps.c). Under collect -m wall
# -i 100us it must pass, and its calls be no later than without collect by
# more than 2 ms (the median over the calls of each call's median lateness).
. "$(dirname "$0")/lib.sh"
"$workloads/collect_sleeps" >"$scratch/alone" || fail "the workload fails without collect: $(cat "$scratch/alone")"
"$bin/collect" -q -m wall -i 100us -o "$scratch/t.zst" "$workloads/collect_sleeps" >"$scratch/wall" 2>"$scratch/err" ||
	fail "under collect -m wall -i 100us: $(grep -v late_ms "$scratch/wall") $(cat "$scratch/err")"
median_late() {
	sed -n 's/.* late_ms=\([0-9.]*\) .*/\1/p' "$1" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
alone=$(median_late "$scratch/alone")
wall=$(median_late "$scratch/wall")
paste "$scratch/alone" "$scratch/wall" | awk '{ printf "%-20s %-18s under collect: %s\n", $1, $2, $5 }'
echo "median lateness: ${alone} ms alone, ${wall} ms under collect -m wall -i 100us"
[ "$(grep -c late_ms "$scratch/wall")" -eq 16 ] || fail "the workload did not time its 16 calls"
awk -v a="$alone" -v w="$wall" 'BEGIN { exit !(w <= a + 2) }' || fail "calls are ${wall} ms late under collect, ${alone} ms alone"
# The program was profiled: its thread is in the trace, blocked nearly all the time.
off=$(info_json "$scratch/t.zst" | jq '[.threads[] | .off_cpu] | add')
[ "$off" -gt 1000000000 ] || fail "only ${off} ns off CPU sampled of the ~5.5 s the program waits"
echo "transparent: ok"
