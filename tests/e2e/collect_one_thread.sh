# A single-threaded program stays single-threaded under collect (issue 32,
# tests/e2e/workloads/collect_one_thread.c): the agent starts no thread of its
# own before the program starts one, in the process and in a fork child, in
# cpu mode, with --allocs and in wall mode. So /proc/self/task and "Threads:" count one,
# glibc's malloc keeps its single-thread paths (__libc_single_threaded), and
# unshare(CLONE_NEWUSER) answers as bare (EINVAL under a second thread).
# The profile is whole meanwhile: single_work is sampled from the first
# signal (the handler builds the frame tables its walks ask for), and the
# program's own thread (thread_work) once it starts one. In wall mode collect
# reads the single-threaded processes' time off CPU from outside
# (collect/wall_watch.c): main's 0.3 s in single_wait and the fork child's
# 0.2 s in child_wait are in the profile, each within 20%.
. "$(dirname "$0")/lib.sh"
w=$workloads/collect_one_thread
"$w" >"$scratch/bare" || fail "fails bare: $(cat "$scratch/bare")"
sed '/^--$/q' "$scratch/bare" >"$scratch/bare.before"
grep -q "^main: tasks=1 status=1 single=1 " "$scratch/bare.before" || fail "bare: $(cat "$scratch/bare.before")"
for opts in "" "--allocs" "-m wall"; do
	"$bin/collect" -q $opts -o "$scratch/t.zst" "$w" >"$scratch/out" 2>"$scratch/err" ||
		fail "collect $opts exited $?: $(cat "$scratch/err")"
	sed '/^--$/q' "$scratch/out" >"$scratch/out.before"
	cmp -s "$scratch/bare.before" "$scratch/out.before" ||
		fail "collect $opts: the program saw another process: $(diff "$scratch/bare.before" "$scratch/out.before")"
	echo "collect $opts: $(head -1 "$scratch/out.before")"
	"$bin/analyze" flat --value samples --format tsv "$scratch/t.zst" >"$scratch/flat" 2>"$scratch/err" ||
		fail "analyze flat: $(cat "$scratch/err")"
	for f in single_work thread_work; do
		count=$(awk -F'\t' -v f="$f" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "samples") c = i }
			$5 == f { print $c; exit }' "$scratch/flat")
		echo "  $f: ${count:-0} samples"
		[ "${count:-0}" -ge 100 ] || fail "collect $opts: $f has ${count:-0} samples, want about 300 (1 kHz x 0.3 s)"
	done
	if [ "$opts" = "-m wall" ]; then
		for want in "single_wait 300" "child_wait 200"; do
			f=${want% *}
			ms=$(awk -F'\t' -v f="$f" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "wall") c = i }
				$5 == f { printf "%d", $c / 1e6; exit }' "$scratch/flat")
			echo "  $f: ${ms:-0} ms off CPU (slept ${want#* } ms)"
			within "${ms:-0}" "${want#* }" "$((${want#* } / 5))" ||
				fail "collect $opts: $f has ${ms:-0} ms, want ${want#* } ms (within 20%)"
		done
	fi
	lost=$(info_lost "$scratch/t.zst")
	[ "$lost" -eq 0 ] || fail "collect $opts: $lost samples lost"
done
echo "collect_one_thread: ok"
