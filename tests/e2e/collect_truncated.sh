# collect itself is SIGKILLed mid-run: the trace, flushed every 100 ms, is
# read up to its last complete record with a warning. A corrupt trace gets a
# one-line error naming the file, exit status 1, never a crash.
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
	fi
done
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
