# analyze's command line: help and version exit 0, unknown commands and
# options give one line on stderr and exit 2, an unreadable or corrupt trace
# exits 1, a truncated one warns once and is still reported.
. "$(dirname "$0")/lib.sh"
a=$bin/analyze

"$a" --help >/dev/null || fail "analyze --help"
"$a" --version | grep -q "analyze" || fail "analyze --version"
for cmd in info tree flat; do
	"$a" $cmd --help | grep -q "usage: analyze $cmd" || fail "analyze $cmd --help"
	set +e
	"$a" $cmd --bogus x.zst 2>"$scratch/err"
	rc=$?
	set -e
	[ $rc -eq 2 ] || fail "analyze $cmd --bogus exited $rc, expected 2"
	[ "$(wc -l <"$scratch/err")" -eq 1 ] || fail "analyze $cmd --bogus: not one line: $(cat "$scratch/err")"
	set +e
	"$a" $cmd "$scratch/missing.zst" 2>"$scratch/err"
	rc=$?
	set -e
	[ $rc -eq 1 ] || fail "analyze $cmd on a missing file exited $rc, expected 1"
done
set +e
"$a" frobnicate x 2>/dev/null; rc=$?
"$a" tree 2>/dev/null; rc2=$?
"$a" tree --maxdepth zero x 2>/dev/null; rc3=$?
"$a" flat --sortedby size x 2>/dev/null; rc4=$?
set -e
[ $rc -eq 2 ] && [ $rc2 -eq 2 ] && [ $rc3 -eq 2 ] && [ $rc4 -eq 2 ] ||
	fail "usage errors exited $rc $rc2 $rc3 $rc4, expected 2"

# A real trace, then cut and bit-flipped. collect flushes every 100 ms, so
# the first three quarters of a 1 s run's file hold whole blocks of samples
# (half the file was not always enough: the first block also carries every
# module record and can be most of a short trace).
"$bin/collect" -q -o "$scratch/t.zst" "$workloads/report_split" 1.0 2>/dev/null ||
	fail "collect failed"
size=$(wc -c <"$scratch/t.zst")
head -c $((size * 3 / 4)) "$scratch/t.zst" >"$scratch/cut.zst"
"$a" tree "$scratch/cut.zst" >"$scratch/out" 2>"$scratch/err" || fail "tree of a cut trace failed"
[ "$(grep -c "truncated" "$scratch/err")" -eq 1 ] || fail "expected one truncation warning: $(cat "$scratch/err")"
grep -q "; main" "$scratch/out" || fail "the cut trace's tree is empty"
cp "$scratch/t.zst" "$scratch/flip.zst"
printf '\377\377\377\377' | dd of="$scratch/flip.zst" bs=1 seek=$((size / 3)) conv=notrunc 2>/dev/null
set +e
"$a" flat "$scratch/flip.zst" >/dev/null 2>"$scratch/err"
rc=$?
set -e
[ $rc -eq 1 ] || [ $rc -eq 0 ] || fail "flat of a corrupt trace exited $rc"
[ $rc -eq 0 ] || [ -s "$scratch/err" ] || fail "flat failed on a corrupt trace without a message"

# Color only when asked on a pipe, never under NO_COLOR with auto.
"$a" tree --color always "$scratch/t.zst" | grep -q "$(printf '\033')\[" || fail "--color always has no color"
"$a" tree "$scratch/t.zst" | grep -q "$(printf '\033')" && fail "color on a pipe"
NO_COLOR=1 "$a" tree --color auto "$scratch/t.zst" | grep -q "$(printf '\033')" && fail "color under NO_COLOR"
echo "cli: ok"
