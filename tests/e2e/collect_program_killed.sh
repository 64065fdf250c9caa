# A program that SIGKILLs itself after 0.5 s of CPU: collect reports 137, the
# trace holds the samples up to the kill, and analyze info says how it ended.
. "$(dirname "$0")/lib.sh"
set +e
"$bin/collect" -o "$scratch/t.zst" "$workloads/collect_exit" selfkill 2>"$scratch/err"
got=$?
set -e
[ "$got" -eq 137 ] || fail "exit status $got, want 137"
"$bin/analyze" info "$scratch/t.zst" >"$scratch/info" 2>&1 || fail "analyze info failed"
cat "$scratch/info"
profiled=$(info_cpu_seconds "$scratch/t.zst")
within "$profiled" 0.5 0.05 || fail "profiled CPU ${profiled}s, want 0.5 s within 10%"
grep -qi 'signal 9' "$scratch/info" || fail "analyze info does not say the program died from signal 9"
