# collect exits with the program's status (128+N for signal N) and, with -o,
# leaves the program's stdout byte for byte; with the trace on stdout, the
# program's stdout goes to collect's stderr and the trace stays valid.
. "$(dirname "$0")/lib.sh"
for want in 0 3; do
	"$workloads/collect_exit" status $want >"$scratch/bare.out" || true
	set +e
	"$bin/collect" -q -o "$scratch/t.zst" "$workloads/collect_exit" status $want >"$scratch/out"
	got=$?
	set -e
	[ "$got" -eq "$want" ] || fail "exit status $got, want $want"
	cmp "$scratch/bare.out" "$scratch/out" || fail "program stdout changed under collect -o"
	[ "$(stat -c %a "$scratch/t.zst")" = 600 ] || fail "trace mode is not 0600"
done
set +e
"$bin/collect" -o "$scratch/t.zst" "$workloads/collect_exit" segv 2>"$scratch/err"
got=$?
set -e
[ "$got" -eq 139 ] || fail "segv: exit status $got, want 139"
grep -q 'signal 11' "$scratch/err" || fail "collect did not say the program died from signal 11"
"$bin/analyze" info "$scratch/t.zst" >/dev/null || fail "trace of a crashed program unreadable"

# Trace on stdout: program output must come out on stderr, not in the trace.
"$bin/collect" -q "$workloads/collect_exit" status 0 >"$scratch/stdout.zst" 2>"$scratch/err" || true
grep -q 'end of output' "$scratch/err" || fail "program stdout did not reach collect's stderr"
"$bin/analyze" info "$scratch/stdout.zst" >/dev/null || fail "trace written to stdout is unreadable"
"$bin/collect" -q --program-stdout "$scratch/prog.out" "$workloads/collect_exit" status 0 \
	>"$scratch/stdout.zst" 2>/dev/null || true
cmp "$scratch/bare.out" "$scratch/prog.out" || fail "--program-stdout did not receive the program's stdout"
