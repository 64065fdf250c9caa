# Sampled allocations on tests/e2e/workloads/alloc_sites.cpp: --allocs=0.1
# and --alloc-bytes, their recorded counts and --scale'd estimates within 5
# standard deviations of what the source states (the sd computed here from
# the known counts), leaks and peak consistent; the headers say how; diff of
# two sizes equals the known byte difference exactly; pprof's period says
# how they were sampled; plot heap's highest
# point is the reported peak; and the options' usage errors.
. "$(dirname "$0")/lib.sh"
need go golang-go
a=$bin/analyze
t=$scratch/t.zst
w=$workloads/alloc_sites
fig() { # FUNCTION TYPE [OPTIONS]: self value of TYPE in flat's TSV (0 when absent)
	fn=$1 type=$2
	shift 2
	"$a" flat --format tsv "$@" "$t" 2>/dev/null | awk -F'\t' -v fn="$fn" -v type="${type}_self" '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$5 == fn { print $col[type]; found = 1 } END { if (!found) print 0 }'
}
# pprof_period: pprof's period type and period of $t's export, "TYPE UNIT PERIOD".
pprof_period() {
	"$a" export --format pprof -o "$scratch/p.pb.gz" "$t" 2>/dev/null || fail "export pprof"
	go tool pprof -raw "$scratch/p.pb.gz" 2>/dev/null | awk '/^PeriodType:/ { t = $2 " " $3 } /^Period:/ { print t, $2 }'
}
# within5 GOT MEAN SD WHAT
within5() {
	awk -v g="$1" -v m="$2" -v s="$3" 'BEGIN { d = g - m; if (d < 0) d = -d; exit !(d <= 5 * s) }' ||
		fail "$4: $1, expected $2 +- 5 x $3"
}

# RATE 0.1: each of the 100000 small blocks recorded with probability 0.1.
"$bin/collect" -q --allocs=0.1 --no-cpu -o "$t" "$w" 2>"$scratch/err" || fail "collect: $(cat "$scratch/err")"
n=$(fig small_blocks alloc_objects)
within5 "$n" 10000 "$(awk 'BEGIN { print sqrt(100000 * 0.1 * 0.9) }')" "rate 0.1: recorded small blocks"
[ "$(fig small_blocks alloc_space)" = $((n * 32)) ] || fail "rate 0.1: bytes are not 32 per recorded block"
within5 "$(fig small_blocks alloc_space --scale)" 3200000 "$(awk 'BEGIN { print 320 * sqrt(100000 * 0.1 * 0.9) }')" \
	"rate 0.1: scaled bytes"
within5 "$(fig big_blocks alloc_objects)" 100 "$(awk 'BEGIN { print sqrt(1000 * 0.1 * 0.9) }')" "rate 0.1: big blocks"
leaked=$(fig small_blocks inuse_objects)
[ "$leaked" -le 10 ] && [ "$leaked" -le "$n" ] || fail "rate 0.1: $leaked of 10 leaked blocks"
[ "$(fig big_blocks inuse_objects)" = 0 ] && [ "$(fig grow_chain inuse_objects)" = 0 ] || fail "rate 0.1: freed blocks leak"
[ "$(fig make_nodes inuse_objects)" = "$(fig make_nodes alloc_objects)" ] || fail "rate 0.1: nodes not all leaked"
peak=$("$a" flat --peak --format tsv "$t" 2>/dev/null | awk -F'\t' 'NR > 1 { s += $2 } END { print s + 0 }')
[ "$peak" -ge "$(fig main inuse_space)" ] || fail "rate 0.1: peak $peak below the leaks"
"$a" tree "$t" 2>/dev/null | grep -q "recorded fraction 0.1, as recorded (--scale estimates totals)" ||
	fail "rate 0.1: header: $("$a" tree "$t" 2>/dev/null | head -3)"
"$a" tree --scale "$t" 2>/dev/null | grep -q "recorded fraction 0.1, scaled" || fail "rate 0.1: --scale header"
[ "$(pprof_period)" = "objects count 10" ] || fail "rate 0.1: pprof period $(pprof_period), expected objects count 10"

# Bytes: each byte with probability 1/65536; a 32-byte block with p = 1 - exp(-32/65536).
"$bin/collect" -q --alloc-bytes=64KiB --no-cpu -o "$t" "$w" 2>"$scratch/err" || fail "collect: $(cat "$scratch/err")"
p=$(awk 'BEGIN { print 1 - exp(-32 / 65536) }')
within5 "$(fig small_blocks alloc_objects)" "$(awk -v p="$p" 'BEGIN { print 100000 * p }')" \
	"$(awk -v p="$p" 'BEGIN { print sqrt(100000 * p * (1 - p)) }')" "bytes: recorded small blocks"
within5 "$(fig small_blocks alloc_space --scale)" 3200000 \
	"$(awk -v p="$p" 'BEGIN { print 32 / p * sqrt(100000 * p * (1 - p)) }')" "bytes: scaled small bytes"
within5 "$(fig big_blocks alloc_space --scale)" 1048576000 1048576 "bytes: scaled big bytes (p = 1 - e^-16)"
"$a" tree "$t" 2>/dev/null | grep -q "byte-sampled, mean 64.0 KiB" || fail "bytes: header: $("$a" tree "$t" 2>/dev/null | head -3)"
[ "$(pprof_period)" = "space bytes 65536" ] || fail "bytes: pprof period $(pprof_period), expected space bytes 65536"

# diff of two sizes: exact, the known difference, every change significant.
"$bin/collect" -q --allocs --no-cpu -o "$scratch/base.zst" "$w" 100000 2>/dev/null || fail "collect base"
"$bin/collect" -q --allocs --no-cpu -o "$scratch/new.zst" "$w" 150000 2>/dev/null || fail "collect new"
"$a" diff --flat --no-normalize --format tsv "$scratch/base.zst" "$scratch/new.zst" >"$scratch/diff" 2>"$scratch/err" ||
	fail "diff: $(cat "$scratch/err")"
awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next } $col["function"] == "small_blocks" { print }' "$scratch/diff" >"$scratch/row"
[ -s "$scratch/row" ] || fail "diff: no small_blocks row: $(cat "$scratch/diff")"
head -n 1 "$scratch/diff" | tr '\t' '\n' >"$scratch/cols"
delta=$(awk -F'\t' -v c="$(grep -nx 'delta' "$scratch/cols" | cut -d: -f1)" '{ print $c }' "$scratch/row")
[ "$delta" = 1600000 ] || fail "diff: small_blocks changed by $delta, expected 50000 x 32 = 1600000 ($(cat "$scratch/row"))"
"$a" diff "$scratch/base.zst" "$scratch/new.zst" 2>/dev/null | grep -qi "exact" || fail "diff does not say the runs are exact"

# plot heap: its highest point is the peak the header reports (the run's: libstdc++'s exception
# pool is live then too), of which main's sites hold 3224000 bytes.
"$a" plot heap --keep-data "$scratch/plot" "$scratch/base.zst" >/dev/null 2>"$scratch/err" || fail "plot heap: $(cat "$scratch/err")"
high=$(awk '!/^#/ { if ($4 > m) m = $4 } END { print m }' "$scratch/plot/heap.dat")
"$a" flat --peak --format tsv "$scratch/base.zst" >"$scratch/peak" 2>/dev/null
peak=$(awk -F'\t' 'NR > 1 { s += $2 } END { print s + 0 }' "$scratch/peak")
main=$(awk -F'\t' 'NR > 1 && $5 == "main" { print $1 }' "$scratch/peak")
[ "$high" = "$peak" ] && [ "$main" = 3224000 ] || fail "plot heap: highest $high, peak $peak, main's $main, expected 3224000"
"$a" plot rate --keep-data "$scratch/plot" "$scratch/base.zst" >/dev/null 2>&1 || fail "plot rate"

# Usage errors: one line, exit 2.
for bad in --allocs=0 --allocs=2 --allocs=abc --alloc-bytes=0 --alloc-bytes=1x --no-cpu; do
	set +e
	"$bin/collect" $bad -o "$scratch/x.zst" "$w" >/dev/null 2>"$scratch/err"
	rc=$?
	set -e
	[ $rc -eq 2 ] && [ "$(wc -l <"$scratch/err")" -eq 2 ] && grep -q "^collect: .*${bad%%=*}\|^collect: --no-cpu" "$scratch/err" ||
		fail "collect $bad: exit $rc, said: $(cat "$scratch/err")"
done
echo "alloc_sampled: ok"
