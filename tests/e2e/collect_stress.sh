# The agent under stress: dlopen/dlclose in a loop while sampling, and a
# thread sampled inside dl_iterate_phdr while another misses libunwind's caches
# (must not deadlock: bounded by timeout), forked and system()ed children (must not
# corrupt the trace or change results), and more live threads than the first
# chunk of rings (the shared memory grows: see collect_threads_many.sh).
. "$(dirname "$0")/lib.sh"
run() {
	name=$1
	shift
	timeout 60 "$bin/collect" -q -i 250us -o "$scratch/$name.zst" "$workloads/collect_stress" "$@" \
		2>"$scratch/$name.err" || fail "$name: collect exited $?: $(tail -3 "$scratch/$name.err")"
	grep -q '^ok$' "$scratch/$name.err" || fail "$name: workload did not finish: $(cat "$scratch/$name.err")"
	"$bin/analyze" info "$scratch/$name.zst" >"$scratch/$name.info" 2>&1 || fail "$name: trace unreadable"
	if grep -qi truncated "$scratch/$name.info"; then fail "$name: trace truncated"; fi
}
run dlopen dlopen "$workloads/libcollect_plugin.so"
cpu=$(info_cpu_seconds "$scratch/dlopen.zst")
# Known: 20 x 0.05 s of the plugin's work (its own CPU clock), plus the
# loader thread's loop: at least 0.9 s profiled, and no more than the two
# busy threads could use in the run's duration (10% slack).
two_threads_max() {
	info_json "$1" | jq -r '.duration_ns * 2.2 / 1e9'
}
max=$(two_threads_max "$scratch/dlopen.zst")
awk -v c="$cpu" -v m="$max" 'BEGIN { exit !(c >= 0.9 && c <= m) }' ||
	fail "dlopen: profiled ${cpu}s of CPU, want 1 s of plugin work (0.9 s at least) and the loader's loop (at most $max s)"

run phdr phdr
cpu=$(info_cpu_seconds "$scratch/phdr.info")
# Known: 0.5 s of the straight-line thread's CPU clock, plus the
# dl_iterate_phdr loop while it runs.
max=$(two_threads_max "$scratch/phdr.info")
awk -v c="$cpu" -v m="$max" 'BEGIN { exit !(c >= 0.45 && c <= m) }' ||
	fail "phdr: profiled ${cpu}s of CPU, want 0.5 s or more (at most $max s)"

run fork fork
threads=$(info_thread_count "$scratch/fork.zst")
[ "$threads" -eq 2 ] || fail "fork: children's threads leaked into the trace ($threads threads)"
# The main thread burns 20 ms + 5 x 50 ms between forks: its sampling must survive them.
main_cpu=$(info_threads "$scratch/fork.zst" | head -n 1 | cut -d' ' -f2)
within "$main_cpu" 0.27 0.04 || fail "fork: profiled ${main_cpu}s of the main thread's 0.27 s"

run threads threads
threads=$(info_thread_count "$scratch/threads.zst")
lost=$(info_lost "$scratch/threads.zst")
echo "threads: $threads threads in the trace, $lost samples lost"
[ "$threads" -ge 1000 ] || fail "threads: only $threads of 1201 threads recorded"
