# Analysis memory follows the distinct stacks, not the number of samples
# (issue 35): the peak RSS of flat, and of the speedscope export (samples in
# time order, binned past a bound on rows), on a 10 M-sample trace stays
# within 1.5x of its peak on a 2 M-sample trace of the same stacks. Memory,
# not time: it holds on a busy machine.
. "$(dirname "$0")/lib.sh"

cp "$bin/analyze" "$scratch/elf"
for n in 2000000 10000000; do
	"$bin/bench_tracegen" "$scratch/$n.zst" "$scratch/elf" "$n" 50000 4 >/dev/null 2>&1 ||
		fail "bench_tracegen $n failed"
done
# peak SAMPLES ARGS...: analyze ARGS on that trace, its peak RSS in KiB.
peak() {
	local n=$1
	shift
	"$workloads/peak_rss" "$scratch/peak" "$bin/analyze" "$@" "$scratch/$n.zst" >/dev/null ||
		fail "analyze $* failed on $n samples"
	cat "$scratch/peak"
}
check() {
	local name=$1 small big
	shift
	small=$(peak 2000000 "$@")
	big=$(peak 10000000 "$@")
	echo "$name peak RSS: $small KiB at 2 M samples, $big KiB at 10 M"
	awk -v s="$small" -v b="$big" 'BEGIN { exit !(b < 1.5 * s) }' ||
		fail "$name's peak grew from $small KiB to $big KiB (limit 1.5x) from 2 M to 10 M samples"
}
check flat flat
check speedscope export --format speedscope -o -
