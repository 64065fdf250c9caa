# collect --allocs on tests/e2e/workloads/alloc_sites.cpp: every figure its
# header states, exactly, at rate 1 (flat's TSV, tree's leaves, no allocator
# frame with -C, go tool pprof -sample_index=alloc_space, folded), and the
# views --leaks, --peak, --temporary: each type counts the view's blocks
# only, the header says which figure is the run's and which the view's.
. "$(dirname "$0")/lib.sh"
need go golang-go
a=$bin/analyze
t=$scratch/t.zst
"$bin/collect" -q --allocs -o "$t" "$workloads/alloc_sites" 2>"$scratch/err" || fail "collect: $(cat "$scratch/err")"

# site FUNCTION TYPE [ANALYZE OPTIONS]: the function's self value of TYPE in flat's TSV.
site() {
	fn=$1 type=$2
	shift 2
	"$a" flat --format tsv "$@" "$t" 2>/dev/null | awk -F'\t' -v fn="$fn" -v type="${type}_self" '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$5 == fn { print $col[type]; found = 1 } END { if (!found) print "none" }'
}
expect() {
	got=$(site "$@")
	want=$(eval echo "\$want")
	[ "$got" = "$want" ] || fail "$*: $got, expected $want"
}
check_site() { # FUNCTION alloc_objects alloc_space inuse_objects inuse_space peak_objects peak_space temp_objects temp_space
	fn=$1
	shift
	for type in alloc_objects alloc_space inuse_objects inuse_space peak_objects peak_space temporary_objects temporary_space; do
		want=$1
		shift
		expect "$fn" "$type"
	done
}
check_site make_nodes 500 24000 500 24000 500 24000 0 0
# small_blocks: heaptrack's one temporary, its first free (of small[0]) right after its last
# allocation, of the same size and stack.
check_site small_blocks 100000 3200000 10 320 100000 3200000 1 32
check_site big_blocks 1000 1048576000 0 0 0 0 1000 1048576000
check_site grow_chain 10 56320 0 0 0 0 10 56320

# The header: exact, and the run's peak is at least what these sites held then.
"$a" tree --nodefraction 0 "$t" >"$scratch/tree" 2>/dev/null
grep -q "recorded fraction 1 (every allocation: exact)" "$scratch/tree" || fail "header: $(head -3 "$scratch/tree")"
grep -q "shown by allocations" "$scratch/tree" || fail "no word on the CPU samples: $(head -4 "$scratch/tree")"
# Leaves say what was allocated.
for leaf in "new 48 B" "malloc 32 B" "calloc 1 MiB" "realloc 8-16 KiB" "realloc 1-2 KiB"; do
	grep -q "; $leaf\$" "$scratch/tree" || fail "no leaf '$leaf' in the tree"
done
# No allocator frame, even with -C: branches end at the program's frame, then the leaf.
"$a" tree --nodefraction 0 -C "$t" >"$scratch/treeC" 2>/dev/null
if grep -E "; (malloc|calloc|realloc|free|operator new.*|__libc_(malloc|calloc|realloc|memalign)|_int_malloc|malloc@plt|operator new@plt)( \[inlined\])?\$" "$scratch/treeC" ||
	grep -q "libipscope-agent\|alloc_hooks.c.*record_alloc" "$scratch/treeC"; then
	fail "an allocator frame is left: $(grep -E '; (malloc|operator new|__libc_malloc)$' "$scratch/treeC" | head -3)"
fi
grep -B1 "; new 48 B\$" "$scratch/treeC" | grep -q "make_nodes" || fail "new 48 B is not below make_nodes"
# --no-alloc-leaves: the cost is the allocating frame's own.
"$a" tree --no-alloc-leaves "$t" 2>/dev/null | grep -q "malloc 32 B" && fail "--no-alloc-leaves still shows leaves"
# CPU samples stay reachable, and time in the hooks is the profiler's frame.
"$a" flat --value samples --format tsv "$t" >"$scratch/cpu" 2>/dev/null || fail "--value samples"
# info's share of the hooks is the weight of that frame in flat, and it is a
# root of its own (one frame: nothing of the program's is charged for it).
marker=$(awk -F'\t' '$5 == "[ipscope: recording allocations]" { print $1 }' "$scratch/cpu")
info=$("$a" info --format json "$t" 2>/dev/null | jq -r .recording_allocations_weight)
[ "${marker:-0}" = "$info" ] || fail "info says $info samples recording allocations, flat ${marker:-0}"
"$a" info "$t" 2>/dev/null | grep -q "^Recording: .*recording allocations" || fail "no Recording line in info"
# In folded the marker is a whole stack: no frame of the program above it.
"$a" export --format folded --value samples -o "$scratch/cpu.folded" "$t" 2>/dev/null || fail "export folded"
grep -F "recording allocations]" "$scratch/cpu.folded" | grep -vq "^\[ipscope: recording allocations\] [0-9]*\$" &&
	fail "the hooks' time is charged below a program frame: $(grep -F 'recording allocations]' "$scratch/cpu.folded" | head -2)"

# Views.
# The sites' 24320 leaked bytes, and libstdc++'s exception pool (Debian 12's GCC 12: 72704 bytes,
# allocated by its constructor before main, never freed).
want=$((24320 + 72704))
[ "$("$a" flat --leaks --format tsv "$t" 2>/dev/null | awk -F'\t' 'NR > 1 { s += $2 } END { print s }')" = $want ] ||
	fail "--leaks does not add up to $want bytes"
want=10; expect small_blocks inuse_objects --leaks
want=none; expect big_blocks alloc_objects --leaks
[ "$(site big_blocks temporary_space --temporary)" = 1048576000 ] || fail "--temporary big_blocks"
[ "$(site small_blocks peak_space --peak)" = 3200000 ] || fail "--peak small_blocks"
[ "$(site grow_chain alloc_objects --peak)" = none ] || fail "--peak shows grow_chain"
# A view counts its blocks only, in every type: small_blocks' 10 leaked
# blocks of its 100000 are 320 bytes allocated, in flat, folded and pprof.
want=10; expect small_blocks alloc_objects --leaks
want=320; expect small_blocks alloc_space --leaks
want=0; expect small_blocks temporary_objects --leaks
want=1000; expect big_blocks alloc_objects --temporary
want=0; expect big_blocks inuse_space --temporary
want=100000; expect small_blocks alloc_objects --peak
"$a" export --format folded --leaks --value alloc_space "$t" 2>/dev/null | grep -q ";small_blocks;malloc 32 B 320\$" ||
	fail "folded --leaks --value alloc_space: small_blocks is not 320 bytes"
"$a" export --format pprof --leaks -o "$scratch/leaks.pb.gz" "$t" 2>/dev/null || fail "export pprof --leaks"
go tool pprof -sample_index=alloc_space -unit=B -nodefraction=0 -top "$scratch/leaks.pb.gz" 2>/dev/null |
	grep -Eq "^ *320B .* small_blocks\$" || fail "pprof --leaks alloc_space of small_blocks is not 320B"
# What the trace cannot say of a view's blocks is refused, not shown for every block.
for bad in "--leaks peak_space" "--temporary peak_objects" "--peak inuse_space" "--peak temporary_space"; do
	set +e
	"$a" flat ${bad% *} --value ${bad#* } "$t" >/dev/null 2>"$scratch/err"
	rc=$?
	set -e
	[ $rc -eq 2 ] && grep -q "is not recorded" "$scratch/err" && [ "$(wc -l <"$scratch/err" )" -le 2 ] ||
		fail "$bad: exit $rc: $(cat "$scratch/err")"
done
# The header of a view: the run's allocations, and how many of them are shown.
run=$(sed -n 's/^Allocations: \([0-9]*\) (.*/\1/p' "$scratch/tree")
[ -n "$run" ] || fail "no Allocations line: $(head -3 "$scratch/tree")"
"$a" tree --temporary "$t" 2>/dev/null | grep -q "^Allocations: $run in the run (.*), 1011 of them temporary (1000.1 MiB), shown; " ||
	fail "--temporary header: $("$a" tree --temporary "$t" 2>/dev/null | sed -n 2p)"
"$a" tree --leaks "$t" 2>/dev/null | grep -q "^Allocations: $run in the run (.*), 511 of them leaked (94.8 KiB), shown; " ||
	fail "--leaks header: $("$a" tree --leaks "$t" 2>/dev/null | sed -n 2p)"

# pprof, as go tool pprof reads it: flat bytes per function as analyze flat's.
"$a" export --format pprof -o "$scratch/heap.pb.gz" "$t" 2>/dev/null || fail "export pprof"
go tool pprof -sample_index=alloc_space -unit=B -nodefraction=0 -top "$scratch/heap.pb.gz" >"$scratch/top" 2>&1 || fail "pprof: $(cat "$scratch/top")"
for pair in big_blocks:1048576000 small_blocks:3200000 grow_chain:56320 make_nodes:24000; do
	fn=${pair%%:*} bytes=${pair#*:}
	grep -Eq "^ *${bytes}B .* ${fn}\$" "$scratch/top" || fail "pprof -top: $fn not ${bytes}B: $(cat "$scratch/top")"
done
go tool pprof -sample_index=inuse_space -unit=B -nodefraction=0 -top "$scratch/heap.pb.gz" 2>/dev/null | grep -Eq "^ *24000B .* make_nodes\$" ||
	fail "pprof inuse_space of make_nodes"
# A heap profile's period type (as Go's: space/bytes, every byte at rate 1), not the CPU samples'.
go tool pprof -raw "$scratch/heap.pb.gz" 2>/dev/null >"$scratch/raw" || fail "pprof -raw"
grep -qx "PeriodType: space bytes" "$scratch/raw" && grep -qx "Period: 1" "$scratch/raw" ||
	fail "pprof of allocations: $(grep '^Period' "$scratch/raw" | tr '\n' ' ')"
# Its CPU samples exported keep the CPU period.
"$a" export --format pprof --value samples -o "$scratch/cpu.pb.gz" "$t" 2>/dev/null || fail "export pprof --value samples"
go tool pprof -raw "$scratch/cpu.pb.gz" 2>/dev/null | grep -qx "PeriodType: cpu nanoseconds" || fail "pprof of CPU samples: no cpu period"
# folded: the chosen value, leaves included.
"$a" export --format folded "$t" 2>/dev/null | grep -q ";small_blocks;malloc 32 B 3200000\$" || fail "folded alloc_space"
"$a" export --format folded --value alloc_objects "$t" 2>/dev/null | grep -q ";big_blocks;calloc 1 MiB 1000\$" ||
	fail "folded alloc_objects"
"$a" export --format speedscope -o "$scratch/s.json" "$t" 2>/dev/null || fail "speedscope"
jq -e '.profiles[0].unit == "bytes"' "$scratch/s.json" >/dev/null || fail "speedscope is not bytes-weighted"
# A CPU-only view of a CPU trace refuses the views.
set +e
"$bin/collect" -q -o "$scratch/cpu.zst" "$workloads/alloc_sites" 20 2>/dev/null
"$a" tree --leaks "$scratch/cpu.zst" >/dev/null 2>"$scratch/err"
rc=$?
set -e
[ $rc -eq 2 ] && grep -q "has no allocations" "$scratch/err" || fail "--leaks on a CPU trace: $rc $(cat "$scratch/err")"
echo "alloc_sites: ok"
