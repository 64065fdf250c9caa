# The profiled program owns every file descriptor: collect and its agent hold
# none it could see (closed 0, 1 and 2 stay closed), never close one of its,
# and keep sampling when it closes or dup2s over every number.
. "$(dirname "$0")/lib.sh"

# A shell that reuses a low number, then forks a subshell and a program that
# write to it: all three lines arrive (the agent used to close it in children).
"$bin/collect" -q -o "$scratch/t.zst" bash -c \
	"exec 4>'$scratch/out.log'; echo hi >&4; (echo sub >&4); /bin/echo ext >&4" 2>"$scratch/err" ||
	fail "collect bash failed: $(cat "$scratch/err")"
[ "$(cat "$scratch/out.log")" = "hi
sub
ext" ] || fail "bash's fd 4 lost lines under collect: $(cat "$scratch/out.log")"

# The program sees the descriptors it was started with, closed ones included,
# at start, after threads came and went, and in a forked child.
list() { # NAME REDIRECTIONS: the workload's view, bare and under collect
	name=$1
	shift
	sh -c "exec \"\$0\" list '$scratch/$name.bare' $*" "$workloads/collect_fds" ||
		fail "$name: the bare run failed"
	sh -c "exec \"\$0\" -q -o '$scratch/$name.zst' \"\$1\" list '$scratch/$name.profiled' $*" \
		"$bin/collect" "$workloads/collect_fds" || fail "$name: collect failed"
	diff "$scratch/$name.bare" "$scratch/$name.profiled" >"$scratch/$name.diff" ||
		fail "$name: the program's descriptors differ under collect:
$(cat "$scratch/$name.diff")"
	"$bin/analyze" info "$scratch/$name.zst" >"$scratch/$name.info" || fail "$name: trace unreadable"
	samples=$(info_samples "$scratch/$name.info")
	[ "${samples:-0}" -ge 150 ] || fail "$name: only ${samples:-0} samples of 0.2 s"
	echo "$name: same descriptors with and without collect, $samples samples"
}
list plain ""
list stdin-stderr-closed "<&- 2>&-"
list stdout-closed ">&-"
list all-closed "<&- >&- 2>&-"
grep -q 'fd 0 closed, fd 1 open, fd 2 closed' "$scratch/stdin-stderr-closed.profiled" ||
	fail "closed stdin and stderr were not closed in the program: $(head -1 "$scratch/stdin-stderr-closed.profiled")"

# Closing every number, close_range, closefrom and dup2 over every number:
# the program's files keep working, and each phase gets its share of samples.
"$bin/collect" -q -o "$scratch/h.zst" "$workloads/collect_fds" hostile "$scratch/h.out" 2>"$scratch/h.err" ||
	fail "hostile: collect failed: $(cat "$scratch/h.err")"
grep -qx ok "$scratch/h.err" || fail "hostile: the program's own files broke: $(cat "$scratch/h.err")"
"$bin/analyze" flat "$scratch/h.zst" >"$scratch/h.flat" || fail "hostile: analyze flat failed"
cat "$scratch/h.flat"
for phase in a b c d; do
	share=$(awk -v f="phase_$phase" '$NF == f { sub("%", "", $2); print $2; exit }' "$scratch/h.flat")
	[ -n "$share" ] || fail "hostile: phase_$phase has no samples (sampling stopped?)"
	within "$share" 25 6 || fail "hostile: phase_$phase has $share% of the samples, want 25 +- 6"
done
echo "hostile: every phase sampled"
