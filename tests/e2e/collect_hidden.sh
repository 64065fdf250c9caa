# Threads hard to reach (issue 9), in cpu and wall mode: a worker that blocks
# every signal is still sampled (0.3 s in masked_work), a program with its
# own SIGPROF handler and setitimer(ITIMER_PROF) keeps receiving its own
# signals and is sampled (0.2 s in main_work), threads made by clone()
# without CLONE_SETTLS, sharing main's thread-local storage (one by glibc's
# clone(), one by the raw system call), are sampled as threads of their own
# (cloned_work, raw_work), and so is a pthread another library's
# constructor started before the agent did (ctor_work). Each thread's known
# answer is what its own clocks measured (tests/e2e/workloads/collect_hidden.c):
# in cpu mode its CPU time, in wall mode its life in wall-clock time (the
# raw clone is found by the agent's scan of /proc/self/task, every 100 ms,
# so up to 0.1 s of it may go unsampled). A cloned thread's wall samples wait
# for the agent's thread to unwind them: on a loaded machine a few posts time
# out (counted lost), hence its 0.1 s below in wall mode (0.815 of 0.912 s
# was seen under a parallel ctest).
. "$(dirname "$0")/lib.sh"
# check MODE ROLE VALUE KNOWN BELOW ABOVE: the thread's sampled seconds within [KNOWN - BELOW, KNOWN + ABOVE]
# (wall mode adds 5% of KNOWN each side: on a loaded machine a runnable thread's last interval may land
# after its work, and lives stretch to seconds)
check() {
	tid=$(awk -v r="$2" '$1 == "tid" && $3 == r { print $2 }' "$scratch/out")
	got=$(info_json "$scratch/t.zst" | jq -r --argjson t "${tid:-0}" --arg v "$3" \
		'.threads[] | select(.tid == $t) | .values[$v] / 1e9')
	echo "$1: $2 (tid ${tid:-?}): ${got:-no} s of $3, it measured $4 s"
	awk -v g="${got:-0}" -v k="$4" -v lo="$5" -v hi="$6" -v r="$([ "$1" = wall ] && echo 0.05 || echo 0)" \
		'BEGIN { exit !(g >= k - lo - r * k && g <= k + hi + r * k) }' ||
		fail "$1: the $2 thread has ${got:-no} s of $3, it measured $4 s (allowed -$5/+$6)"
}
for mode in cpu wall; do
	"$bin/collect" -q -m $mode -o "$scratch/t.zst" "$workloads/collect_hidden" >"$scratch/out" 2>"$scratch/err" ||
		fail "$mode: collect exited $?: $(cat "$scratch/err") $(cat "$scratch/out")"
	own=$(sed -n 's/^own_sigprof=//p' "$scratch/out")
	[ "${own:-0}" -gt 0 ] || fail "$mode: the program's own ITIMER_PROF handler got no SIGPROF"
	# The library's constructor saw only main: the agent's thread (and so the agent) had not started.
	[ "$(sed -n 's/^ctor_threads_before=//p' "$scratch/out")" = 1 ] ||
		fail "$mode: the library's constructor did not run before the agent: $(cat "$scratch/out")"
	"$bin/analyze" flat "$scratch/t.zst" >"$scratch/flat"
	known() { awk -v k="$1" -v r="$2" '$1 == k && $2 == r { print $3 }' "$scratch/out"; }
	if [ $mode = cpu ]; then
		check cpu masked cpu 0.3 0.05 0.05
		for role in main cloned ctor; do
			check cpu $role cpu "$(known cpu $role)" 0.05 0.05
		done
		check cpu raw cpu "$(known cpu raw)" 0.15 0.05
	else
		masked=$(awk '$3 == "masked" { print $2 }' "$scratch/out")
		off=$(info_json "$scratch/t.zst" | jq -r --argjson t "$masked" '.threads[] | select(.tid == $t) | .values.wall / 1e9')
		echo "wall: the masked thread: ${off:-no}s"
		awk -v s="${off:-0}" 'BEGIN { exit !(s >= 0.28) }' || fail "wall: the masked thread has ${off:-no} s of its >= 0.3 s"
		# The measured life is its work, from inside: the thread lives a little longer.
		# main lives on after its work (joins, waits): its work is main_work's weight (1 ms intervals).
		work=$(awk '$NF == "main_work" { print $1 / 1000 }' "$scratch/flat")
		echo "wall: main_work: ${work:-no} s, main measured $(known wall main) s"
		within "${work:-0}" "$(known wall main)" "$(awk -v k="$(known wall main)" 'BEGIN { print 0.05 + 0.05 * k }')" || fail "wall: main_work has ${work:-no} s of wall, main measured $(known wall main) s"
		check wall cloned wall "$(known wall cloned)" 0.1 0.1
		check wall raw wall "$(known wall raw)" 0.15 0.1
	fi
	for f in masked_work main_work cloned_work raw_work ctor_work; do
		grep -q " $f\$" "$scratch/flat" || fail "$mode: $f is not sampled: $(cat "$scratch/flat")"
	done
done
echo "hidden threads: ok"
