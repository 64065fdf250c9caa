# Time a thread spends in system calls is charged to the user stack that made
# them: three threads (reads of /dev/zero, futex wakes, user-mode work only)
# each measure their CPU time and the time inside each marked call with their
# own clock; each thread's share and each call site's share of the profile
# must be within 9 points of those. Run as root and, when possible, as nobody
# (perf_event_paranoid 2 then refuses kernel-mode perf samples: the agent
# never asks for them, so both must look the same).
#
# Why 7: kernel time is sampled on the scheduler tick (250/s), whose samples
# of a thread's time in read() came out up to 15% low on this 2-core VM when
# three threads shared two cores (the kernel's own tick-based accounting,
# getrusage's ru_stime, was as far off). Charging kernel time to the next
# user-mode sample, as before, put the read() and futex call sites at 0%.
# Why 9, not 7 (December 2026): the ASan build beside another test (ctest -j2)
# put the read() site 4.5 to 7.5 points under its share of about 19% (35%
# low), failing 1 in 5 runs; the build before that month's changes the same.
. "$(dirname "$0")/lib.sh"
src=$(dirname "$0")/workloads/collect_kernel.c

check() { # NAME, then the command prefix that runs collect
	name=$1
	shift
	"$@" "$bin/collect" -o "$scratch/$name.zst" "$workloads/collect_kernel" 0.8 2>"$scratch/err" ||
		fail "$name: collect exited $?: $(cat "$scratch/err")"
	grep '^thread ' "$scratch/err" >"$scratch/measured"
	[ "$(wc -l <"$scratch/measured")" -eq 3 ] || fail "$name: the workload did not report 3 threads"
	"$bin/analyze" info "$scratch/$name.zst" >"$scratch/info" || fail "$name: analyze info failed"
	grep -q '^Source: *perf-task-clock+cpu-timer' "$scratch/info" || fail "$name: $(grep '^Source' "$scratch/info")"
	"$bin/analyze" flat --lines "$scratch/$name.zst" >"$scratch/flat" || fail "$name: analyze flat failed"
	total=$(awk '{ for (i = 2; i <= NF; i++) if ($i ~ /^cpu=/) { sub("cpu=", "", $i); s += $i } } END { print s }' "$scratch/measured")
	info_threads "$scratch/info" >"$scratch/profiled"
	profiled_total=$(awk '{ s += $2 } END { print s }' "$scratch/profiled")
	while read -r _ role tid cpu rest; do
		tid=${tid#tid=}
		cpu=${cpu#cpu=}
		prof=$(awk -v t="$tid" '$1 == t { print $2 }' "$scratch/profiled")
		want=$(awk -v c="$cpu" -v t="$total" 'BEGIN { printf "%.1f", 100 * c / t }')
		got=$(awk -v c="${prof:-0}" -v t="$profiled_total" 'BEGIN { printf "%.1f", 100 * c / t }')
		echo "$name: thread $role: $want% of the CPU time, $got% of the profile"
		within "$got" "$want" 9 || fail "$name: thread $role has $got% of the profile, $want% of the CPU time"
	done <"$scratch/measured"
	# Call sites: the share of the profile at each marked line (inclusive) against the time measured around it.
	site() { # MARKER MEASURED_SECONDS
		line=$(marker_line "$1" "$src")
		got=$(awk -v l="$line" '$5 == "collect_kernel.c" && $6 == l { sub("%", "", $2); print $2; exit }' "$scratch/flat")
		want=$(awk -v c="$2" -v t="$total" 'BEGIN { printf "%.1f", 100 * c / t }')
		echo "$name: $1 (line $line): $want% of the CPU time, ${got:-0}% of the profile"
		within "${got:-0}" "$want" 9 || fail "$name: $1 has ${got:-0}% of the profile, $want% of the CPU time"
	}
	value() { sed -n "s/^thread $1 .* $2=\\([0-9.]*\\).*/\\1/p" "$scratch/measured"; }
	site @read-call "$(value reader read)"
	site @reader-compute "$(value reader compute)"
	site @futex-call "$(value waker futex)"
	site @waker-compute "$(value waker compute)"
	site @busy-loop "$(value busy cpu)"
}
check root

# Unprivileged: as nobody, writing where nobody may.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null &&
	setpriv --reuid=nobody --regid=nogroup --clear-groups test -x "$bin/collect" 2>/dev/null; then
	chmod 777 "$scratch"
	check nobody setpriv --reuid=nobody --regid=nogroup --clear-groups
else
	echo "unprivileged run skipped: not root, no setpriv, or the build is not readable by nobody"
fi
