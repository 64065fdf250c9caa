# Analysis memory follows the distinct stacks, not the number of samples
# (issue 35): flat's peak RSS on a 10 M-sample trace stays within 1.5x of
# its peak on a 2 M-sample trace of the same stacks. Memory, not time: it
# holds on a busy machine.
. "$(dirname "$0")/lib.sh"

cp "$bin/analyze" "$scratch/elf"
peak() {
	"$bin/bench_tracegen" "$scratch/t.zst" "$scratch/elf" "$1" 50000 4 >/dev/null 2>&1 ||
		fail "bench_tracegen $1 failed"
	"$workloads/peak_rss" "$scratch/peak" "$bin/analyze" flat "$scratch/t.zst" >/dev/null ||
		fail "analyze flat failed on $1 samples"
	cat "$scratch/peak"
}
small=$(peak 2000000)
big=$(peak 10000000)
echo "flat peak RSS: $small KiB at 2 M samples, $big KiB at 10 M"
awk -v s="$small" -v b="$big" 'BEGIN { exit !(b < 1.5 * s) }' ||
	fail "flat's peak grew from $small KiB to $big KiB (limit 1.5x) from 2 M to 10 M samples"
