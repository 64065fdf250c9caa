# collect --allocs follows the whole process tree (tests/e2e/workloads/alloc_tree.c states
# every figure): each process's allocations exact and its own (a fork child's, a posix_spawn'ed
# and a fork+exec'd program's, an exec in place, a shell pipeline), per pid with --pid, in
# analyze info's processes, and the run's totals their sums; --no-follow keeps the first only.
. "$(dirname "$0")/lib.sh"
a=$bin/analyze
t=$scratch/t.zst
w=$workloads/alloc_tree

# run ARGS...: collect them; info's JSON of the whole run in $scratch/all.json.
run() {
	"$bin/collect" -q --no-cpu --allocs -o "$t" "$@" 2>"$scratch/err" || fail "collect $*: $(cat "$scratch/err")"
	"$a" info --format json "$t" >"$scratch/all.json" 2>"$scratch/err" || fail "info: $(cat "$scratch/err")"
	rm -f "$scratch"/flat.*
}
is() { [ "$1" = "$2" ] || fail "$3: $1, expected $2"; }
# pid_of JQ-CONDITION: the pid of the one process of analyze info's JSON that matches.
pid_of() {
	jq -r "[.processes[] | select($1) | .pid] | if length == 1 then .[0] else \"none: \\(length)\" end" "$scratch/all.json"
}
# total TYPE [JSON]: the run's (or that info JSON's) total of a value type.
total() { jq -r --arg type "$1" '.value_types[] | select(.type == $type) | .total' "${2:-$scratch/all.json}"; }
# listed PID TYPE: what analyze info's processes list says of PID.
listed() { jq -r --argjson pid "$1" --arg type "$2" '.processes[] | select(.pid == $pid) | .values[$type]' "$scratch/all.json"; }
# fig PID FUNCTION TYPE: inclusive value of FUNCTION's row in flat's TSV of process PID (0 when absent;
# one flat per process of each run).
fig() {
	[ -s "$scratch/flat.$1" ] || "$a" flat --pid "$1" --format tsv "$t" >"$scratch/flat.$1" 2>/dev/null
	awk -F'\t' -v fn="$2" -v type="$3" '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$5 == fn { print $col[type]; found = 1 } END { if (!found) print 0 }' "$scratch/flat.$1"
}
# expect PID ALLOCS BYTES LEAKED_BLOCKS LEAKED_BYTES TEMPORARIES WHAT: the process's totals, by --pid
# and in info's processes list.
expect() {
	pid=$1
	shift
	"$a" info --format json --pid "$pid" "$t" >"$scratch/pid.json" 2>/dev/null || fail "$6: info --pid $pid"
	is "$(total alloc_objects "$scratch/pid.json")" "$1" "$6: allocations"
	is "$(total alloc_space "$scratch/pid.json")" "$2" "$6: bytes"
	is "$(total inuse_objects "$scratch/pid.json")" "$3" "$6: leaked blocks"
	is "$(total inuse_space "$scratch/pid.json")" "$4" "$6: leaked bytes"
	is "$(total temporary_objects "$scratch/pid.json")" "$5" "$6: temporaries"
	is "$(listed "$pid" alloc_objects)" "$1" "$6: allocations in info's processes"
	is "$(listed "$pid" inuse_space)" "$4" "$6: leaked bytes in info's processes"
}

# A parent, its fork child (freeing blocks it inherited), a posix_spawn and a fork+exec.
run "$w" tree
parent=$(pid_of '(.command | endswith(" tree")) and (.forked | not)')
child=$(pid_of '.forked')
spawned=$(pid_of '.command | endswith(" leaf 300")')
execd=$(pid_of '.command | endswith(" leaf 700")')
for p in "$parent" "$child" "$spawned" "$execd"; do
	case $p in none*) fail "tree: processes: $("$a" info "$t" 2>&1)" ;; esac
done
expect "$parent" 2030 214000 10 10000 2000 "parent"
expect "$child" 505 39000 5 15000 500 "fork child"
expect "$spawned" 307 11392 7 1792 300 "posix_spawn'ed leaf"
expect "$execd" 707 24192 7 1792 700 "fork+exec'd leaf"
# The inherited blocks the child freed are neither its frees nor the parent's.
is "$(fig "$child" child_work inuse_space)" 15000 "fork child: child_work's leaks"
is "$(fig "$child" parent_work alloc_objects)" 0 "fork child: none of parent_work's allocations"
is "$(fig "$parent" parent_work inuse_objects)" 10 "parent: parent_work's leaks (the kept blocks freed)"
is "$(fig "$spawned" leaf_work alloc_space)" 11392 "posix_spawn'ed leaf: leaf_work (symbolized in its process)"
"$a" info --format json --pid "$child" "$t" >"$scratch/pid.json" 2>/dev/null
is "$(total peak_space "$scratch/pid.json")" 15000 "fork child: its own peak"
# The run's totals add up (alloc_tree.c).
is "$(total alloc_objects)" 3549 "tree: allocations"
is "$(total alloc_space)" 288584 "tree: bytes"
is "$(total inuse_objects)" 29 "tree: leaked blocks"
is "$(total inuse_space)" 28584 "tree: leaked bytes"
is "$(total temporary_objects)" 3500 "tree: temporaries"
"$a" tree --pid "$child" --leaks "$t" 2>/dev/null | grep -q "Heap: .*leaked 14.6 KiB in 5 blocks" ||
	fail "tree --pid --leaks: $("$a" tree --pid "$child" --leaks "$t" 2>&1)"
"$a" info --processes "$t" 2>/dev/null | grep -Eq "^ +$child +$parent +[0-9]+ +[0-9.]+ KiB +505 +14.6 KiB" ||
	fail "info's processes: $("$a" info --processes "$t" 2>&1)"

# An exec in place: the pid's first image's live blocks are its leaks, the second's its own.
run "$w" exec
expect "$(pid_of 'true')" 310 16092 10 3292 300 "exec in place"

# A pipeline of two allocating programs under a shell: each exact (the shell's child may
# allocate before its exec: leaf_work's own figures are compared), and the total the sum.
run sh -c "$w leaf 300 | $w leaf 700"
first=$(pid_of '.command | endswith(" leaf 300")')
second=$(pid_of '.command | endswith(" leaf 700")')
is "$(fig "$first" leaf_work alloc_objects)" 307 "pipeline: leaf 300's allocations"
is "$(fig "$first" leaf_work inuse_space)" 1792 "pipeline: leaf 300's leaks"
is "$(fig "$second" leaf_work alloc_objects)" 707 "pipeline: leaf 700's allocations"
is "$(fig "$second" leaf_work alloc_space)" 24192 "pipeline: leaf 700's bytes"
is "$(jq '[.processes[].values.alloc_objects] | add' "$scratch/all.json")" "$(total alloc_objects)" \
	"pipeline: the processes' allocations add up to the total"
is "$(jq '[.processes[].values.inuse_space] | add' "$scratch/all.json")" "$(total inuse_space)" \
	"pipeline: the processes' leaks add up to the total"

# --no-follow: the first process only.
run --no-follow "$w" tree
is "$(total alloc_objects)" 2030 "no-follow: allocations"
is "$(total inuse_space)" 10000 "no-follow: leaked bytes"
echo "alloc_tree: ok"
