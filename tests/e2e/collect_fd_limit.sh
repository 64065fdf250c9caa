# A program one descriptor short of RLIMIT_NOFILE starts 300 short threads
# while another of its threads opens and closes a file in a loop
# (tests/e2e/workloads/collect_fd_limit.c). Bare, its open() never fails;
# under collect, in cpu and wall mode, it must not fail either: the agent
# opened each new thread's perf event (and, at a thread's end, /proc files)
# in the program's descriptor table, taking the free number for a moment,
# and the program's open() failed with EMFILE up to hundreds of times a run.
. "$(dirname "$0")/lib.sh"
w=$workloads/collect_fd_limit
"$w" 300 >"$scratch/bare" || fail "fails bare: $(cat "$scratch/bare")"
echo "bare: $(cat "$scratch/bare")"
for mode in cpu wall; do
	"$bin/collect" -q -m $mode -o "$scratch/t.zst" "$w" 300 >"$scratch/out" 2>"$scratch/err" ||
		fail "$mode: exit $?: $(cat "$scratch/out") $(cat "$scratch/err")"
	echo "$mode: $(cat "$scratch/out")"
	[ "$(info_thread_count "$scratch/t.zst")" -ge 300 ] || fail "$mode: $(info_thread_count "$scratch/t.zst") threads in the trace"
done
echo "collect_fd_limit: ok"
