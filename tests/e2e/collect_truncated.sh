# collect itself is SIGKILLed mid-run: the trace, flushed every 100 ms, is
# read up to its last complete record with a warning. A corrupt trace gets a
# one-line error naming the file, exit status 1, never a crash; damage in
# the middle that the reader finds where it is (not the content checksum)
# keeps the records before it, with a warning, as a cut does.
. "$(dirname "$0")/lib.sh"
need pgrep procps
"$bin/collect" -q -o "$scratch/t.zst" "$workloads/collect_busy" 3 2>/dev/null &
pid=$!
sleep 1.5
child=$(pgrep -P $pid || true)
kill -KILL $pid
wait $pid 2>/dev/null || true
[ -z "$child" ] || kill -KILL $child 2>/dev/null || true
"$bin/analyze" info "$scratch/t.zst" >"$scratch/info" 2>"$scratch/warn" ||
	fail "analyze info failed on a cut-off trace: $(cat "$scratch/warn")"
cat "$scratch/info" "$scratch/warn"
grep -qi 'truncated' "$scratch/warn" || fail "no truncation warning"
samples=$(info_samples "$scratch/t.zst")
[ "${samples:-0}" -gt 100 ] || fail "only ${samples:-0} samples survived the cut"

# Bit flips and cuts inside the compressed stream.
size=$(stat -c %s "$scratch/t.zst")
for offset in 0 5 40 $((size / 3)) $((size / 2)) $((size - 20)); do
	cp "$scratch/t.zst" "$scratch/bad.zst"
	printf '\377' | dd of="$scratch/bad.zst" bs=1 seek="$offset" conv=notrunc 2>/dev/null
	set +e
	"$bin/analyze" info "$scratch/bad.zst" >/dev/null 2>"$scratch/err"
	rc=$?
	set -e
	[ $rc -eq 0 ] || [ $rc -eq 1 ] || fail "flip at $offset: exit $rc: $(cat "$scratch/err")"
	if [ $rc -eq 1 ]; then
		[ "$(wc -l <"$scratch/err")" -eq 1 ] || fail "flip at $offset: error is not one line"
		grep -q "bad.zst" "$scratch/err" || fail "flip at $offset: error does not name the file"
	elif grep -q "bad.zst: offset [0-9]*: .*: read up to the last complete record before it" "$scratch/err"; then
		kept=$(info_samples "$scratch/bad.zst" 2>/dev/null)
		[ "${kept:-0}" -le "$samples" ] || fail "flip at $offset: $kept samples, more than the $samples whole"
		echo "flip at $offset: read up to the damage, $kept of $samples samples"
	fi
done
# Damage in the middle of a long trace (bench_tracegen's: 300,000 samples
# over many zstd blocks; the cut-off one above is a single block): garbage
# over 256 compressed bytes is found where it is (a block that does not
# decode, or a record that cannot be), never silently: the records before it
# are kept with a warning naming the offset, and the header says the trace
# was cut; or, when the damage decodes and only the content checksum sees
# it, the trace is refused.
cp "$bin/analyze" "$scratch/elf"
"$bin/bench_tracegen" "$scratch/long.zst" "$scratch/elf" 300000 1000 4 >/dev/null 2>&1 || fail "bench_tracegen failed"
long=$(stat -c %s "$scratch/long.zst")
cp "$scratch/long.zst" "$scratch/mid.zst"
head -c 256 /dev/zero | tr '\0' '\377' | dd of="$scratch/mid.zst" bs=1 seek=$((long * 3 / 4)) conv=notrunc 2>/dev/null
set +e
"$bin/analyze" flat "$scratch/mid.zst" >"$scratch/out" 2>"$scratch/err"
rc=$?
set -e
if [ $rc -eq 0 ]; then
	grep -q "mid.zst: offset [0-9]*: .*read up to the last complete record before it" "$scratch/err" ||
		fail "damage mid-stream read without a warning: $(cat "$scratch/err")"
	grep -q "(trace truncated)" "$scratch/out" || fail "damage mid-stream: the header does not say the trace was cut"
	kept=$(info_samples "$scratch/mid.zst" 2>/dev/null)
	[ "${kept:-0}" -gt 0 ] && [ "$kept" -lt 300000 ] || fail "damage mid-stream: ${kept:-0} of 300000 samples kept"
	echo "damage at 3/4 of a long trace: $kept of 300000 samples kept, with a warning"
else
	[ $rc -eq 1 ] && grep -q "mid.zst.*checksum" "$scratch/err" ||
		fail "damage mid-stream: exit $rc: $(cat "$scratch/err")"
fi
head -c 7 "$scratch/t.zst" >"$scratch/short.zst"
set +e
"$bin/analyze" info "$scratch/short.zst" >/dev/null 2>"$scratch/err"
rc=$?
set -e
[ $rc -le 1 ] || fail "7-byte trace: exit $rc"
printf 'not a trace at all\n' >"$scratch/text.zst"
set +e
"$bin/analyze" info "$scratch/text.zst" >/dev/null 2>"$scratch/err"
rc=$?
set -e
[ $rc -eq 1 ] || fail "text file: exit $rc, want 1"
grep -q 'text.zst' "$scratch/err" || fail "text file: error does not name the file"
