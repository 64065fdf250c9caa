# Threads hard to reach (issue 9), in cpu and wall mode: a worker that blocks
# every signal is still sampled (0.3 s in masked_work), a program with its
# own SIGPROF handler and setitimer(ITIMER_PROF) keeps receiving its own
# signals and is sampled (0.2 s in main_work), and a thread made by a raw
# clone() (sharing main's thread-local storage) neither breaks the program
# nor has its work put under main. (tests/e2e/workloads/collect_hidden.c)
. "$(dirname "$0")/lib.sh"
for mode in cpu wall; do
	"$bin/collect" -q -m $mode -o "$scratch/t.zst" "$workloads/collect_hidden" >"$scratch/out" 2>"$scratch/err" ||
		fail "$mode: collect exited $?: $(cat "$scratch/err") $(cat "$scratch/out")"
	own=$(sed -n 's/^own_sigprof=//p' "$scratch/out")
	[ "${own:-0}" -gt 0 ] || fail "$mode: the program's own ITIMER_PROF handler got no SIGPROF"
	"$bin/analyze" flat "$scratch/t.zst" >"$scratch/flat"
	masked=$(awk '$3 == "masked" { print $2 }' "$scratch/out")
	main=$(awk '$3 == "main" { print $2 }' "$scratch/out")
	if [ $mode = cpu ]; then
		for pair in "$masked:0.3" "$main:0.2"; do
			cpu=$(info_json "$scratch/t.zst" | jq -r --argjson t "${pair%:*}" '.threads[] | select(.tid == $t) | .values.cpu / 1e9')
			echo "cpu: thread ${pair%:*}: ${cpu:-no}s of ${pair#*:} s"
			within "${cpu:-0}" "${pair#*:}" 0.05 || fail "cpu: thread ${pair%:*} has ${cpu:-no} s, it burned ${pair#*:} s"
		done
	else
		off=$(info_json "$scratch/t.zst" | jq -r --argjson t "$masked" '.threads[] | select(.tid == $t) | .values.wall / 1e9')
		echo "wall: the masked thread: ${off:-no}s"
		awk -v s="${off:-0}" 'BEGIN { exit !(s >= 0.28) }' || fail "wall: the masked thread has ${off:-no} s of its >= 0.3 s"
	fi
	grep -q ' masked_work$' "$scratch/flat" || fail "$mode: masked_work is not sampled"
	grep -q ' main_work$' "$scratch/flat" || fail "$mode: main_work is not sampled"
	# (main's 0.2 s in cpu mode says the cloned thread's 0.3 s did not go to main, whose TLS it shares)
	! grep -q ' cloned_work$' "$scratch/flat" || echo "$mode: the cloned thread was sampled"
done
echo "hidden threads: ok"
