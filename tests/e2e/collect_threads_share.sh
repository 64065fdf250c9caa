# Four threads burn 0.1/0.2/0.3/0.4 s (x2) of CPU: each thread's share of the
# sampled weight must be within 5 points of its share of measured CPU time,
# with either sampling source.
. "$(dirname "$0")/lib.sh"
for source in perf timer; do
echo "== source $source"
"$bin/collect" --source $source -o "$scratch/t.zst" "$workloads/collect_threads" 2 2>"$scratch/err" ||
	fail "collect exited $?: $(cat "$scratch/err")"
"$bin/analyze" info "$scratch/t.zst" >"$scratch/info" || fail "analyze info failed"
cat "$scratch/info"
grep '^thread tid=' "$scratch/err" | sed 's/thread tid=\([0-9]*\) cpu_seconds=\([0-9.]*\)/\1 \2/' \
	>"$scratch/measured"
[ "$(wc -l <"$scratch/measured")" -eq 4 ] || fail "workload did not report 4 threads"
total_measured=$(awk '{ s += $2 } END { print s }' "$scratch/measured")
info_threads "$scratch/t.zst" >"$scratch/profiled"
total_profiled=$(awk '{ s += $2 } END { print s }' "$scratch/profiled")
while read -r tid cpu; do
	prof=$(awk -v t="$tid" '$1 == t { print $2 }' "$scratch/profiled")
	[ -n "$prof" ] || fail "thread $tid missing from analyze info"
	want=$(awk -v c="$cpu" -v t="$total_measured" 'BEGIN { print 100 * c / t }')
	got=$(awk -v c="$prof" -v t="$total_profiled" 'BEGIN { print 100 * c / t }')
	echo "thread $tid: measured share $want%, profiled share $got%"
	within "$got" "$want" 5 || fail "thread $tid share $got% is not within 5 points of $want%"
done <"$scratch/measured"
for n in 1 2 3 4; do
	grep -q "worker-$n" "$scratch/info" || fail "thread name worker-$n (set after start) missing"
done
done
