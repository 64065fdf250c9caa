# Programs that install a seccomp filter at the top of main
# (tests/e2e/workloads/collect_seccomp.c) and then start threads (the filter
# forbids perf_event_open and timer_create) or fork (it forbids openat), with
# SECCOMP_RET_KILL_PROCESS: under collect, in cpu and wall mode, they must
# run as bare (they were killed by SIGSYS: the agent set up a timer for each
# new thread, and a fork child opened collect's shared memory), and collect
# says where the filter went on. The same with SECCOMP_RET_ERRNO ("errno").
# A fork child the agent does not follow is in the trace with its parent and
# the reason (it was a process of parent 0 and command "?").
. "$(dirname "$0")/lib.sh"
w=$workloads/collect_seccomp
for what in "threads prctl" "threads seccomp" "threads tsync" "threads errno" "fork prctl" "fork tsync" "fork errno"; do
	set +e
	"$w" $what >/dev/null 2>&1
	bare=$?
	set -e
	[ $bare -eq 3 ] && { echo "$what: seccomp filters not available here, skipped"; continue; }
	for mode in cpu wall; do
		set +e
		"$bin/collect" -q -m $mode -o "$scratch/t.zst" "$w" $what >"$scratch/out" 2>"$scratch/err"
		rc=$?
		set -e
		echo "$what, $mode: exit $rc (bare $bare)"
		[ $rc -eq $bare ] || fail "$what, $mode: exit $rc, bare $bare: $(cat "$scratch/err")"
		grep -q "installed a seccomp filter (" "$scratch/err" || fail "$what, $mode: collect does not say: $(cat "$scratch/err")"
		[ "$(info_json "$scratch/t.zst" | jq -r '.metadata.seccomp')" != null ] ||
			fail "$what, $mode: the trace does not say"
		case $what in fork*)
			first=$(info_json "$scratch/t.zst" | jq -r '.metadata.pid')
			child=$(info_json "$scratch/t.zst" | jq -r --arg p "$first" \
				'[.processes[] | select(.parent == ($p | tonumber) and .profiled == false and
					(.not_profiled_reason | test("seccomp")))] | length')
			[ "$child" -eq 1 ] || fail "$what, $mode: the unfollowed child is not listed with its parent and reason: $(info_json "$scratch/t.zst" | jq -c .processes)"
		esac
	done
done
echo "collect_seccomp: ok"
