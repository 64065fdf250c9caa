# The shared memory starts small (one chunk of rings) and grows with the
# threads: under `ulimit -v 200000` collect still runs the program profiled;
# where it cannot even start, it says so, does not run the program and leaves
# no file behind. (Not under ASan: its shadow memory needs more than these.)
. "$(dirname "$0")/lib.sh"
# 200 MB of address space: the program runs, profiled.
(ulimit -v 200000 && "$bin/collect" -o "$scratch/v.zst" "$workloads/collect_busy" 0.3) 2>"$scratch/v.err" ||
	fail "ulimit -v 200000: collect exited $?: $(cat "$scratch/v.err")"
"$bin/analyze" info "$scratch/v.zst" >"$scratch/v.info" || fail "ulimit -v 200000: trace unreadable"
cpu=$(info_cpu_seconds "$scratch/v.info")
within "$cpu" 0.3 0.03 || fail "ulimit -v 200000: profiled ${cpu}s of 0.3 s"
echo "ulimit -v 200000: ${cpu}s profiled"

# 400 MB: as many threads of 8 MiB stacks, nearly, as bare. Each thread's first allocation call
# (the agent's, freeing its start's description; pthread_getattr_np's) gave it a malloc arena of
# 64 MiB of address space: 12 threads against 48 bare.
bare=$( (ulimit -v 400000 && "$workloads/collect_thread_limit") | sed -n 's/^threads=//p')
for mode in cpu wall; do
	got=$( (ulimit -v 400000 && "$bin/collect" -q -m $mode -o "$scratch/t.zst" "$workloads/collect_thread_limit") 2>/dev/null |
		sed -n 's/^threads=//p')
	echo "ulimit -v 400000, $mode: $got threads, $bare bare"
	[ "${got:-0}" -ge $((bare - 8)) ] || fail "ulimit -v 400000, $mode: $got threads, $bare bare"
done

# Too little to map even the first chunk: a clear error, the program not run, no file.
set +e
(ulimit -v 12000 && exec "$bin/collect" -o "$scratch/small.zst" sh -c "touch '$scratch/ran'") 2>"$scratch/s.err"
rc=$?
set -e
cat "$scratch/s.err"
[ $rc -eq 1 ] || fail "ulimit -v 12000: exit $rc, want 1"
[ ! -e "$scratch/small.zst" ] || fail "ulimit -v 12000: an empty trace file was left behind"
[ ! -e "$scratch/ran" ] || fail "ulimit -v 12000: the program ran unprofiled"
