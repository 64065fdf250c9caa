# lib.sh - what the benchmark scripts share (sourced: . "$root/bench/lib.sh").

# median: the median of the numbers on stdin, one per line (the upper of the two middle ones when even).
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# ratio_median A B COLUMN [WIDTH]: the median over rounds (lines) of A's COLUMN / B's COLUMN in the
# same round; WIDTH is the number of columns of A's lines (2 by default).
# Rounds where B measured 0 (below the timer's resolution) are left out.
ratio_median() {
	paste -d' ' "$1" "$2" | awk -v c="$3" -v w="${4:-2}" '$(c + w) != 0 { print $c / $(c + w) }' | median
}

# now_ns: CLOCK_REALTIME in nanoseconds.
now_ns() { date +%s%N; }
