# Ctrl-C reaches the program as it would without collect (the terminal sends
# SIGINT to the whole foreground process group); collect still finishes the
# trace and exits 130 like the program.
. "$(dirname "$0")/lib.sh"
# A shell without job control starts background jobs with SIGINT ignored:
# perl restores the default first. setsid does not fork here, so $! is
# collect, leader of a new process group, as a shell's foreground job is.
perl -e '$SIG{INT} = $SIG{QUIT} = "DEFAULT"; exec @ARGV or die' -- setsid "$bin/collect" -q -o "$scratch/t.zst" "$workloads/collect_busy" 5 2>/dev/null &
pid=$!
sleep 1
/bin/kill -s INT -- "-$pid"
set +e
wait $pid
rc=$?
set -e
[ $rc -eq 130 ] || fail "collect exited $rc, want 130"
"$bin/analyze" info "$scratch/t.zst" >"$scratch/info" 2>"$scratch/warn" || fail "analyze info failed"
cat "$scratch/info"
if grep -qi truncated "$scratch/warn"; then fail "trace was not finished after Ctrl-C"; fi
samples=$(info_samples "$scratch/t.zst")
[ "${samples:-0}" -gt 100 ] || fail "only ${samples:-0} samples"
