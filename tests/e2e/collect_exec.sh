# Programs started through a wrapper that execs them in the same process
# (env, nice, a shell's exec) are profiled: the agent follows the exec, and
# the wrapper's modules are unloaded in the trace. An unwritable output fails
# before the program runs; an existing trace file is left alone when the
# program cannot be started; a collect started with SIGCHLD ignored still
# returns the program's status; a thread that exec'd is counted once; execle passes
# its own environment.
. "$(dirname "$0")/lib.sh"
check_wrapped() {
	name=$1
	shift
	"$bin/collect" -q -o "$scratch/t.zst" "$@" "$workloads/collect_busy" 0.3 2>"$scratch/err" ||
		fail "$name: collect failed: $(cat "$scratch/err")"
	"$bin/analyze" info "$scratch/t.zst" >"$scratch/info" || fail "$name: analyze info failed"
	cpu=$(info_cpu_seconds "$scratch/t.zst")
	echo "$name: ${cpu}s profiled of 0.3 s"
	within "$cpu" 0.3 0.03 || fail "$name: profiled ${cpu}s of the exec'd program's 0.3 s"
	"$bin/analyze" flat "$scratch/t.zst" >"$scratch/flat" || fail "$name: analyze flat failed"
	grep -q 'busy_loop' "$scratch/flat" || fail "$name: samples not attributed to the exec'd program"
}
# execl's list variants: execle's environment is the one after the list's NULL.
out=$("$bin/collect" -q -o "$scratch/execle.zst" "$workloads/collect_execle" 2>"$scratch/err") ||
	fail "execle: collect failed: $(cat "$scratch/err")"
[ "$out" = "IPSCOPE_EXECLE=ok" ] || fail "execle: the exec'd program saw '$out', not its envp's IPSCOPE_EXECLE=ok"
echo "execle: the program's envp reached the exec'd shell"
check_wrapped env env FOO=1
check_wrapped nice nice -n 1
check_wrapped "shell exec" sh -c 'exec "$0" "$@"'

set +e
"$bin/collect" -o "$scratch/no-such-dir/t.zst" sh -c "touch '$scratch/ran'" 2>"$scratch/err"
rc=$?
set -e
[ $rc -eq 1 ] || fail "unwritable output: exit $rc, want 1"
[ ! -e "$scratch/ran" ] || fail "unwritable output: the program ran anyway"

printf 'precious\n' >"$scratch/old.zst"
set +e
"$bin/collect" -o "$scratch/old.zst" "$scratch/no-such-program" 2>/dev/null
set -e
[ "$(cat "$scratch/old.zst")" = precious ] || fail "exec failure clobbered an existing file"

set +e
perl -e '$SIG{CHLD} = "IGNORE"; exec @ARGV or die' -- "$bin/collect" -q -o "$scratch/t.zst" sh -c 'exit 3'
rc=$?
set -e
[ $rc -eq 3 ] || fail "with SIGCHLD ignored by collect's parent: exit $rc, want 3"

# One thread that exec'd three program images is one thread, for collect's
# summary and for analyze info alike.
"$bin/collect" -o "$scratch/chain.zst" sh -c 'exec env X=1 sh -c "exec \"\$0\" 0.2" "$0"' \
	"$workloads/collect_busy" 2>"$scratch/chain.err" || fail "exec chain: collect failed: $(cat "$scratch/chain.err")"
"$bin/analyze" info "$scratch/chain.zst" >"$scratch/chain.info" || fail "exec chain: analyze info failed"
threads=$(awk '/^Threads:/ { print $2; exit }' "$scratch/chain.info")
[ "$threads" -eq 1 ] || fail "exec chain: analyze info counts $threads threads, want 1"
grep -q 'from 1 threads' "$scratch/chain.err" || fail "exec chain: collect counts $(grep -o 'from [0-9]* threads' "$scratch/chain.err")"
