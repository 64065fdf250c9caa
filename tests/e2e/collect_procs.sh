# The whole process tree (issue 9): a fork without exec doing known work, a
# fork+exec, a posix_spawn and a vfork+exec of a second workload
# (tests/e2e/workloads/collect_procs.c), and a shell pipeline of two
# workloads followed by a static program: each process's samples are
# present, right (its own CPU time) and attributed (its own functions, from
# its own module map, under its own pid in every report); the static one is
# listed as not profiled, and so is a setuid one; `make -j2` running two
# workloads at once profiles both; a child that outlives its parent loses
# nothing; a process that forks all the time loses no samples in its forks;
# 300 processes started at once are all profiled; --no-follow profiles the
# first process only.
# A process's CPU check is a ratio of what its threads measured with their own
# clocks (at least 70%, at most 105% + 10 ms), never a few ms of a fixed budget:
# on a busy 2-core machine the share that samples cover moves (kernel work
# outside system calls is not sampled), and the test is labelled "timing".
. "$(dirname "$0")/lib.sh"
need make make
busy=$workloads/collect_busy
"$bin/collect" -q -o "$scratch/t.zst" "$workloads/collect_procs" tree "$busy" >"$scratch/out" 2>"$scratch/err" ||
	fail "collect exited $?: $(cat "$scratch/err")"
cat "$scratch/out"
"$bin/analyze" info "$scratch/t.zst" | sed -n '/^Processes/,/^Modules/p'
# covered WHAT TRACE PID SECONDS: process PID of TRACE burns SECONDS, and its samples stand for
# most of the CPU time its threads measured with their own clocks at their end (a process that
# ends in _exit has no such measure: then of SECONDS).
covered() {
	[ -n "$3" ] || fail "$1: no such process in $2"
	set -- "$@" $(info_json "$2" | jq -r --argjson p "$3" '[([.processes[] | select(.pid == $p) | .value] | add),
		([.threads[] | select(.pid == $p) | .measured_cpu_ns] | add)] | map((. // 0) / 1e9) | "\(.[0]) \(.[1])"')
	if awk -v m="$6" 'BEGIN { exit !(m > 0) }'; then
		echo "$1 (pid $3): ${5}s profiled of the ${6}s its threads measured; it burns $4 s"
		awk -v m="$6" -v s="$4" 'BEGIN { exit !(m >= 0.99 * s) }' || fail "$1: its threads measured ${6}s, it burns $4 s"
		set -- "$1" "$2" "$3" "$4" "$5" "$6" "the ${6}s its threads measured"
	else
		echo "$1 (pid $3): ${5}s profiled; it burns $4 s (its threads' measure is unknown)"
		set -- "$1" "$2" "$3" "$4" "$5" "$4" "the $4 s it burns"
	fi
	awk -v p="$5" -v m="$6" 'BEGIN { exit !(p >= 0.7 * m && p <= 1.05 * m + 0.01) }' ||
		fail "$1: ${5}s profiled of $7"
}
# pid_of TRACE_JSON COMMAND_END: the pid of the process whose command ends with COMMAND_END.
pid_of() {
	jq -r --arg c "$2" '.processes[] | select(.command | endswith($c)) | .pid' "$1" | head -n 1
}
# check_process ROLE SECONDS FUNCTION: process ROLE has SECONDS of CPU, in FUNCTION, with its exit status.
check_process() {
	pid=$(awk -v r="$1" '$1 == "pid" && $3 == r { print $2 }' "$scratch/out")
	[ -n "$pid" ] || fail "$1: the workload did not say its pid"
	covered "$1" "$scratch/t.zst" "$pid" "$2"
	"$bin/analyze" flat --pid "$pid" "$scratch/t.zst" >"$scratch/flat.$1" || fail "$1: analyze flat --pid failed"
	share=$(awk -v f="$3" '$NF == f { sub("%", "", $2); print $2; exit }' "$scratch/flat.$1")
	[ -n "$share" ] && awk -v s="$share" 'BEGIN { exit !(s > 90) }' ||
		fail "$1: $3 has ${share:-no}% of its samples: $(cat "$scratch/flat.$1")"
	status=$(info_json "$scratch/t.zst" | jq -r --argjson p "$pid" '.processes[] | select(.pid == $p) | .wait_status')
	[ "$status" -eq "$4" ] || fail "$1: wait status $status, want $4"
}
check_process parent 0.2 parent_work 0
check_process fork 0.3 child_work 768
check_process exec 0.25 busy_loop 0
check_process spawn 0.15 busy_loop 0
check_process vfork 0.1 busy_loop 0
parent=$(awk '$3 == "parent" { print $2 }' "$scratch/out")
children=$(info_json "$scratch/t.zst" | jq --argjson p "$parent" '[.processes[] | select(.parent == $p)] | length')
[ "$children" -eq 4 ] || fail "$children processes have the parent $parent, want 4"
# Every report takes --pid: the fork's tree has child_work, none of busy_loop.
"$bin/analyze" tree --pid "$(awk '$3 == "fork" { print $2 }' "$scratch/out")" "$scratch/t.zst" >"$scratch/tree"
grep -q child_work "$scratch/tree" && ! grep -q busy_loop "$scratch/tree" || fail "tree --pid: $(cat "$scratch/tree")"
"$bin/analyze" export --format folded --pid "$parent" -o "$scratch/folded" "$scratch/t.zst"
grep -q parent_work "$scratch/folded" && ! grep -q 'child_work\|busy_loop' "$scratch/folded" ||
	fail "export --pid: $(cat "$scratch/folded")"

# A shell pipeline, then a static program: two profiled workloads, one reported as not profiled.
"$bin/collect" -q -o "$scratch/p.zst" sh -c \
	"'$busy' 0.3 | '$workloads/collect_procs' sink 0.2; '$workloads/collect_busy_static' 0.1" 2>"$scratch/err" ||
	fail "pipeline: collect exited $?: $(cat "$scratch/err")"
grep -q "collect_busy_static, which is not profiled: statically linked" "$scratch/err" ||
	fail "pipeline: collect did not say the static program is not profiled: $(cat "$scratch/err")"
info_json "$scratch/p.zst" >"$scratch/p.json"
for pair in "collect_busy 0.3:0.3" "collect_procs sink 0.2:0.2"; do
	covered "pipeline: ${pair%:*}" "$scratch/p.zst" "$(pid_of "$scratch/p.json" "${pair%:*}")" "${pair##*:}"
done
jq -e '.processes[] | select(.command | endswith("collect_busy_static")) | select(.profiled | not)' \
	"$scratch/p.json" >/dev/null || fail "pipeline: the static program is not listed as not profiled"
"$bin/analyze" info "$scratch/p.zst" | grep -q "not profiled: statically linked" ||
	fail "pipeline: analyze info does not say the static program was not profiled"

# A setuid program (here setuid to nobody, run by root: the loader's secure mode ignores
# LD_PRELOAD): still run, with its status, and reported as not profiled, with the reason.
if [ "$(id -u)" -eq 0 ]; then
	cp "$busy" "$scratch/suid_busy" && chown nobody "$scratch/suid_busy" && chmod 4755 "$scratch/suid_busy"
	"$bin/collect" -q -o "$scratch/u.zst" sh -c "'$busy' 0.2; '$scratch/suid_busy' 0.1" 2>"$scratch/err" ||
		fail "setuid: collect exited $?: $(cat "$scratch/err")"
	grep -q "suid_busy, which is not profiled: setuid or setgid" "$scratch/err" ||
		fail "setuid: collect did not say the setuid program is not profiled: $(cat "$scratch/err")"
	"$bin/analyze" info "$scratch/u.zst" | grep -q "not profiled: setuid or setgid" ||
		fail "setuid: analyze info does not say the setuid program was not profiled"
	info_json "$scratch/u.zst" >"$scratch/u.json"
	covered "setuid: the other program" "$scratch/u.zst" "$(pid_of "$scratch/u.json" "collect_busy 0.2")" 0.2
	echo "setuid: not profiled, said"
else
	echo "setuid case skipped: not root"
fi

# make -j2: the two recipes' workloads run at once under make's children (sh -c per recipe);
# each is profiled under its own pid with its own CPU time.
printf 'all: a b\na:\n\t%s 0.3\nb:\n\t%s 0.2\n.PHONY: all a b\n' "$busy" "$busy" >"$scratch/Makefile"
"$bin/collect" -q -o "$scratch/m.zst" make -s -j2 -C "$scratch" >/dev/null 2>"$scratch/err" ||
	fail "make -j2: collect exited $?: $(cat "$scratch/err")"
info_json "$scratch/m.zst" >"$scratch/m.json"
for want in 0.3 0.2; do
	covered "make -j2: collect_busy $want" "$scratch/m.zst" "$(pid_of "$scratch/m.json" "collect_busy $want")" "$want"
done

# The first process exits first (status 3) while its child still works: collect waits for the
# child (it is the tree's subreaper), the child's 0.4 s is all there, and collect exits with 3.
set +e
"$bin/collect" -q -o "$scratch/b.zst" sh -c "'$busy' 0.4 2>/dev/null & exit 3" 2>"$scratch/err"
rc=$?
set -e
[ $rc -eq 3 ] || fail "parent first: collect exited $rc, the program 3: $(cat "$scratch/err")"
info_json "$scratch/b.zst" >"$scratch/b.json"
covered "parent first: the child" "$scratch/b.zst" "$(pid_of "$scratch/b.json" "collect_busy 0.4")" 0.4

# A child of the raw fork system call (no fork handler runs in it): it allocates, loads a library,
# starts a thread and forks, as without collect, in every mode (it died of SIGSEGV).
raw=$workloads/proc_raw_fork
plugin=$workloads/libcollect_plugin.so
set +e
"$raw" "$plugin" >"$scratch/raw.alone"
rc_alone=$?
set -e
[ $rc_alone -eq 3 ] || fail "raw fork: the workload exits $rc_alone without collect: $(cat "$scratch/raw.alone")"
for mode in "" --allocs "-m wall"; do
	set +e
	"$bin/collect" -q $mode -o "$scratch/r.zst" "$raw" "$plugin" >"$scratch/raw.out" 2>"$scratch/err"
	rc=$?
	set -e
	[ $rc -eq 3 ] && cmp -s "$scratch/raw.alone" "$scratch/raw.out" ||
		fail "raw fork, collect $mode: exit $rc, '$(cat "$scratch/raw.out")' (alone: 3, 'child status=3') $(cat "$scratch/err")"
done
echo "raw fork: ok"

# A process that forks all the time: the samples of its forks (its kernel time, delivered before
# fork's parent handlers run) are kept, not refused for the fork gate of other threads' unwinds.
"$bin/collect" -q -o "$scratch/forks.zst" "$workloads/collect_procs" forks 0.4 >"$scratch/forks.out" 2>"$scratch/err" ||
	fail "forker: collect exited $?: $(cat "$scratch/err")"
lost=$(info_lost "$scratch/forks.zst")
echo "forker: $(grep -o 'forks [0-9]*' "$scratch/forks.out"), $lost samples lost"
[ "$lost" -eq 0 ] || fail "forker: $lost samples lost in its forks"
covered forker "$scratch/forks.zst" "$(info_json "$scratch/forks.zst" | jq -r '.processes[0].pid')" 0.4

# 300 processes started at once take rings faster than collect frees those of the ended: each
# waits for one, so none is listed as not profiled for a lost record that it started.
"$bin/collect" -o "$scratch/burst.zst" sh -c 'for i in $(seq 300); do "$0" 0 2>/dev/null & done; wait' "$busy" \
	2>"$scratch/burst.err" || fail "burst: collect exited $?: $(cat "$scratch/burst.err")"
! grep -E "not profiled|records .* were lost" "$scratch/burst.err" || fail "burst: records of processes were lost"
profiled=$(info_json "$scratch/burst.zst" | jq '[.processes[] | select(.profiled)] | length')
[ "$profiled" -eq 302 ] || fail "burst: $profiled processes profiled, want 302 (sh, seq and 300)"
echo "burst: $profiled processes profiled"

# --no-follow: the first process only.
"$bin/collect" -q --no-follow -o "$scratch/n.zst" "$workloads/collect_procs" tree "$busy" >/dev/null 2>&1 ||
	fail "--no-follow: collect exited $?"
pids=$(info_json "$scratch/n.zst" | jq '[.threads[] | .pid] | unique | length')
[ "$pids" -eq 1 ] || fail "--no-follow: $pids processes have samples"
[ "$(info_json "$scratch/n.zst" | jq -r '.metadata.follow')" = 0 ] || fail "--no-follow: the trace does not say so"
echo "process tree: ok"
