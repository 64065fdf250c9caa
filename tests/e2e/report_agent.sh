# The agent's own frames never show: with -C (system frames shown) a
# threaded program's stacks must look as they would without the profiler,
# no thread_trampoline under every thread, in tree, flat and the exports.
. "$(dirname "$0")/lib.sh"
profile_workload collect_threads 3 0.3
for report in tree flat; do
	"$bin/analyze" $report -C "$scratch/t.zst" >"$scratch/$report" 2>"$scratch/err" ||
		fail "analyze $report -C failed: $(cat "$scratch/err")"
done
"$bin/analyze" export -C --format folded -o "$scratch/folded" "$scratch/t.zst" ||
	fail "analyze export -C failed"
cat "$scratch/tree"
grep -q "start_thread\|clone3\|clone" "$scratch/tree" ||
	fail "-C shows no libc thread start: the test cannot tell"
grep -q "thread_trampoline\|libipscope-agent" "$scratch/tree" "$scratch/flat" "$scratch/folded" &&
	fail "an agent frame shows with -C"
echo "agent frames hidden: ok"
