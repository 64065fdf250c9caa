# analyze source and analyze view on a real allocation trace: collect
# --allocs on tests/e2e/workloads/alloc_sites.cpp, whose header states every
# site's figures (SMALL = 100000):
#   make_nodes    500 new Node, 24000 B, all leaked
#   small_blocks  100000 x malloc(32), 3200000 B, 10 leaked, all live at the peak
#   big_blocks    1000 x calloc(1, 1 MiB), each freed at once (temporary)
#   grow_chain    10 reallocs, 56320 B, all temporary
# analyze source charges exactly those to the allocating lines (bytes and
# counts; main's calling lines stay clean). The viewer, in tmux: the rows
# and percentages at the start (bytes), after u (counts), after expanding
# to the leaf "malloc 32 B", in the source panel opened on the leaf, after
# s (flat: the leaf charged to small_blocks' line), and in the L views
# (leaks, peak, temporary); --leaks starts in leaks; --value samples shows
# the trace's CPU samples (u: cpu); --leaks on a CPU trace is refused
# before the screen. Percentages are worked out here from the
# sites' known figures and the trace's totals (flat's TSV).
. "$(dirname "$0")/lib.sh"
src=$(dirname "$0")/workloads/alloc_sites.cpp
. "$(dirname "$0")/view_lib.sh"
t=$scratch/t.zst
"$bin/collect" -q --allocs -o "$t" "$workloads/alloc_sites" 2>"$scratch/err" || fail "collect: $(cat "$scratch/err")"

l_node=$(marker_line "@new-node" "$src")
l_small=$(marker_line "@malloc-32" "$src")
l_big=$(grep -n "calloc(1, 1 << 20)" "$src" | cut -d: -f1)
l_grow=$(grep -n "p = realloc(p" "$src" | cut -d: -f1)
call() { grep -n "^	$1(" "$src" | cut -d: -f1; } # main's line calling $1
c_node=$(call make_nodes) c_small=$(call small_blocks) c_big=$(call big_blocks) c_grow=$(call grow_chain)

# --- analyze source: every allocating line exactly, main's calls clean ---
"$a" source --format tsv "$t" alloc_sites.cpp >"$scratch/src.tsv" 2>"$scratch/err" || fail "source: $(cat "$scratch/err")"
# field LINE TYPE: the value of TYPE at LINE of alloc_sites.cpp ("none": no row).
field() {
	awk -F'\t' -v line="$1" -v type="$2" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$1 ~ /alloc_sites\.cpp$/ && $2 == line { print $col[type]; found = 1 } END { if (!found) print "none" }' "$scratch/src.tsv"
}
expect_line() { # LINE TYPE=VALUE...
	line=$1
	shift
	for pair in "$@"; do
		got=$(field "$line" "${pair%%=*}")
		[ "$got" = "${pair#*=}" ] || fail "analyze source line $line ${pair%%=*}: $got, expected ${pair#*=}"
	done
}
expect_line "$l_node" alloc_space=24000 alloc_objects=500 inuse_space=24000 inuse_objects=500
expect_line "$l_small" alloc_space=3200000 alloc_objects=100000 inuse_space=320 inuse_objects=10 \
	peak_space=3200000 peak_objects=100000
expect_line "$l_big" alloc_space=1048576000 alloc_objects=1000 inuse_objects=0 temporary_objects=1000 \
	temporary_space=1048576000
expect_line "$l_grow" alloc_space=56320 alloc_objects=10 temporary_objects=10 temporary_space=56320
for line in "$c_node" "$c_small" "$c_big" "$c_grow"; do
	got=$(field "$line" alloc_space)
	[ "$got" = none ] || [ "$got" = 0 ] || fail "main's line $line is charged $got bytes"
done
# Text, without FILE: by counts the malloc line comes first, then calloc's, then new's.
"$a" source --value alloc_objects --color never "$t" >"$scratch/src.txt" 2>/dev/null
order=$(grep -E '^ *[0-9]+ +[0-9]+ +[0-9.]+% ' "$scratch/src.txt" | awk '{ printf "%s ", $1 }')
[ "$order" = "$l_small $l_big $l_node $l_grow " ] ||
	fail "by counts the lines come as $order, not $l_small $l_big $l_node $l_grow: $(cat "$scratch/src.txt")"

# --- the trace's totals, for the percentages the viewer must show ---
"$a" flat --format tsv "$t" >"$scratch/flat" 2>/dev/null
total() { awk -F'\t' -v type="${1}_self" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next } { s += $col[type] } END { print s }' "$scratch/flat"; }
pct() { awk -v part="$1" -v whole="$2" 'BEGIN { printf "%.1f%%", 100 * part / whole }'; }
bytes=$(total alloc_space) objects=$(total alloc_objects)
leaked=$(total inuse_objects) peak=$(total peak_objects) temp=$(total temporary_objects)
[ "$objects" -ge 101510 ] || fail "the trace has $objects allocations, fewer than the sites' 101510"

# --- the viewer ---
run "'$a' view t.zst"
wait_for "alloc_sites.cpp:$c_big"
expect_row "$(row "allocated: alloc_objects $objects, alloc_space" "by alloc_space")"
expect_row "$(row "1000.0 MiB" "$(pct 1048576000 "$bytes")" "main  alloc_sites.cpp:$c_big")"
expect_row "$(row "3.1 MiB" "$(pct 3200000 "$bytes")" "main  alloc_sites.cpp:$c_small")"
keys u
wait_for "by alloc_objects"
expect_row "$(row "100000" "$(pct 100000 "$objects")" "main  alloc_sites.cpp:$c_small")"
expect_row "$(row "500" "$(pct 500 "$objects")" "main  alloc_sites.cpp:$c_node")"
# Down to what was allocated: search small_blocks, expand it, its leaf.
keys /
T send-keys -t v -l small_blocks
keys Enter
wait_for "/small_blocks: small_blocks"
keys Right
wait_for "malloc 32 B"
expect_row "$(row "100000" "$(pct 100000 "$objects")" "small_blocks  alloc_sites.cpp:$l_small")"
expect_row "$(row "100000" "$(pct 100000 "$objects")" "malloc 32 B")"
# Enter on the leaf: the source panel at the allocating line.
keys Down Enter
wait_for "| source"
wait_for "small[i] = malloc(32);"
expect_row "$(row " $l_small " "100000" "$(pct 100000 "$objects")" "small[i] = malloc(32);")"
expect_row "$(row " $l_node " "500" "nodes[i] = new Node;")"
keys q
# s: flat self cost, the leaves charged to the allocating lines.
keys s
wait_for "| flat"
expect_row "$(row "100000" "$(pct 100000 "$objects")" "small_blocks  alloc_sites.cpp:$l_small")"
expect_row "$(row "1000" "$(pct 1000 "$objects")" "big_blocks  alloc_sites.cpp:$l_big")"
sed '/flame graph/,$d' "$scratch/screen" | grep -q "malloc 32 B" && fail "a leaf is a row of the flat view"
keys s
wait_for "| tree"
# L: leaks (make_nodes' 500 and small_blocks' 10), by counts and by bytes.
keys L
wait_for "never freed: inuse_objects $leaked"
expect_row "$(row "500" "$(pct 500 "$leaked")" "main  alloc_sites.cpp:$c_node")"
expect_row "$(row "10" "$(pct 10 "$leaked")" "main  alloc_sites.cpp:$c_small")"
sed '/flame graph/,$d' "$scratch/screen" | grep -q "alloc_sites.cpp:$c_big" && fail "big_blocks leaks nothing, yet has a row"
keys u
wait_for "by inuse_space"
expect_row "$(row "23.4 KiB" "main  alloc_sites.cpp:$c_node")"
expect_row "$(row "320 B" "main  alloc_sites.cpp:$c_small")"
keys u
# peak: small_blocks' 100000 and make_nodes' 500 live together.
keys L
wait_for "live at the peak of the heap: peak_objects $peak"
expect_row "$(row "100000" "$(pct 100000 "$peak")" "main  alloc_sites.cpp:$c_small")"
expect_row "$(row "500" "$(pct 500 "$peak")" "main  alloc_sites.cpp:$c_node")"
# temporary: big_blocks' 1000 and grow_chain's 10.
keys L
wait_for "freed at once: temporary_objects $temp"
expect_row "$(row "1000" "$(pct 1000 "$temp")" "main  alloc_sites.cpp:$c_big")"
expect_row "$(row "10" "$(pct 10 "$temp")" "main  alloc_sites.cpp:$c_grow")"
keys L
wait_for "view: all"
keys q
restored 0

# --leaks: the viewer starts in the leaks view.
run "'$a' view --leaks t.zst"
wait_for "never freed: inuse_objects $leaked"
expect_row "$(row "23.4 KiB" "main  alloc_sites.cpp:$c_node")"
keys q
restored 0
# --value samples: the trace's CPU samples, u between samples and cpu, no views of them.
run "'$a' view --value samples t.zst"
wait_for "by samples"
expect_row "$(row "samples" "cpu" "by samples")"
keys u
wait_for "by cpu"
keys L
wait_for "leaks and peak are views of allocations, not of CPU samples"
keys q
restored 0
# --leaks on a CPU trace: refused before the screen is taken.
"$bin/collect" -q -o "$scratch/cpu.zst" "$workloads/alloc_sites" 20 2>/dev/null || fail "collect (CPU)"
run "'$a' view --leaks cpu.zst"
restored 2
expect_row "--leaks: cpu.zst has no allocations"
echo "ok"
