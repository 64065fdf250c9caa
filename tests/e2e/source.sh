# analyze source on report_split (~70% of the CPU in heavy(), ~30% in
# light()): the hot line is inside heavy's body and comes first; main's call
# lines stay clean (their callees are in the same file); the file's lines
# add up to its samples; heavy's body has its share. Then a copy of the
# workload built from a source that moves (--search-dir finds it), changes
# (newer than the binary) and shrinks (fewer lines than the costs): a note
# each time, the costs still by line number. Bad FILE and trace: clear errors.
. "$(dirname "$0")/lib.sh"
src=$(dirname "$0")/workloads/report_split.c
src_dir=$(cd "$(dirname "$src")" && pwd)

profile_workload report_split 1.0
a=$bin/analyze
"$a" source --value samples --format tsv "$scratch/t.zst" >"$scratch/tsv" || fail "analyze source --format tsv failed"
head -1 "$scratch/tsv" | grep -q "^file	line	samples	cpu$" || fail "TSV header: $(head -1 "$scratch/tsv")"
begin=$(marker_line "@heavy-begin" "$src")
end=$(marker_line "@heavy-end" "$src")
total=$(info_samples "$scratch/t.zst")
weight=$("$a" flat --format tsv "$scratch/t.zst" | awk -F'\t' 'NR > 1 { s += $9 } END { print s }')
awk -F'\t' -v b="$begin" -v e="$end" '$1 ~ /report_split\.c$/ {
	sum += $3; if ($3 > max) { max = $3; hot = $2 } if ($2 > b && $2 < e) heavy += $3 }
	END { print hot, sum, heavy }' "$scratch/tsv" >"$scratch/hot"
read -r hot sum heavy <"$scratch/hot"
echo "hot line $hot, file total $sum of weight $weight ($total samples), heavy's body $heavy"
[ "$hot" -gt "$begin" ] && [ "$hot" -lt "$end" ] || fail "the hottest line $hot is not in heavy ($begin..$end)"
within "$(awk -v s="$sum" -v w="$weight" 'BEGIN { print s / w }')" 1 0.05 ||
	fail "report_split.c's lines add up to $sum, the trace weighs $weight"
within "$(awk -v h="$heavy" -v s="$sum" 'BEGIN { print 100 * h / s }')" 70 5 || fail "heavy's body has $heavy of $sum"

# Without FILE: report_split.c first, its first hunk holds the hot line.
"$a" source "$scratch/t.zst" >"$scratch/top" || fail "analyze source failed"
cat "$scratch/top"
first=$(sed -n 's/^ *\([0-9.]* [mun]*s\) *[0-9.]*%  \(.*\)$/\2/p' "$scratch/top" | head -1)
case $first in */report_split.c) ;; *) fail "the costliest file is '$first', not report_split.c" ;; esac
awk -v hot="$hot" '/^Line / { n++; if (n == 1) on = 1; next } on && /^ *\.\.\.$/ { exit } on && /^$/ { exit }
	on && $1 == hot { found = 1 } END { exit !found }' "$scratch/top" || fail "the first hunk does not hold line $hot"

# The whole file: main's calls of heavy and light are clean, every line is there.
"$a" source "$scratch/t.zst" report_split.c >"$scratch/file" || fail "analyze source FILE failed"
for m in @call-heavy @call-light; do
	l=$(marker_line "$m" "$src")
	grep -Eq "^ *$l +│ " "$scratch/file" || fail "main's line $l ($m) has a cost: $(grep -E "^ *$l " "$scratch/file")"
done
lines=$(wc -l <"$src")
grep -Eq "^ *$lines +.*│ " "$scratch/file" || fail "the last line ($lines) is not shown"
grep -q "Note:" "$scratch/file" && fail "a note for the source as built: $(grep Note: "$scratch/file")"
"$a" source --color always "$scratch/t.zst" report_split.c | grep -Eq "^.*$hot.*$(printf '\033')\[1;37;41m" ||
	fail "--color always: the hot line is not heat-coloured"
NO_COLOR=1 "$a" source "$scratch/t.zst" report_split.c | grep -q "$(printf '\033')" && fail "escapes with NO_COLOR"

# A copy built from a source that then moves.
mkdir -p "$scratch/tree/src"
cp "$src" "$scratch/tree/src/split.c"
cc -O2 -g -I"$src_dir" -o "$scratch/split" "$scratch/tree/src/split.c" || fail "cc failed"
"$bin/collect" -q -o "$scratch/c.zst" "$scratch/split" 0.3 2>"$scratch/err" || fail "collect: $(cat "$scratch/err")"
mv "$scratch/tree" "$scratch/moved"
"$a" source "$scratch/c.zst" split.c >"$scratch/missing" || fail "analyze source (missing) failed"
grep -q "Note: source file not found: $scratch/tree/src/split.c" "$scratch/missing" ||
	fail "no note for the missing source: $(head -8 "$scratch/missing")"
grep -Eq "^ *$hot +[0-9.]+ [mun]?s .*│ *$" "$scratch/missing" || fail "line $hot's cost not listed without the code"
"$a" source --search-dir "$scratch/moved" "$scratch/c.zst" split.c >"$scratch/found" || fail "--search-dir failed"
grep -q "Read from $scratch/moved/src/split.c" "$scratch/found" || fail "not read from the search dir: $(head -8 "$scratch/found")"
grep -q "split_sink += i ^ (i >> 3);" "$scratch/found" || fail "no code with --search-dir"
grep -q "Note:" "$scratch/found" && fail "a note with --search-dir: $(grep Note: "$scratch/found")"
mv "$scratch/moved" "$scratch/tree"
touch -d '+1 minute' "$scratch/tree/src/split.c"
"$a" source "$scratch/c.zst" split.c | grep -q "was modified after $scratch/split was built" ||
	fail "no note for a source newer than the binary"
head -n 10 "$src" >"$scratch/tree/src/split.c"
"$a" source "$scratch/c.zst" split.c >"$scratch/short"
grep -q "has 10 lines but the costs name line" "$scratch/short" || fail "no note for a shorter source"
grep -Eq "^ *$hot +[0-9.]+ [mun]?s .*│ \(past the end of the file\)" "$scratch/short" ||
	fail "line $hot not listed past the end"

# Errors: FILE naming nothing or two files (usage, 2); an unreadable trace (1).
set +e
"$a" source "$scratch/t.zst" nope.c 2>"$scratch/err"
rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q "no source file of .* ends with 'nope.c'" "$scratch/err" || fail "bad FILE: rc $rc, $(cat "$scratch/err")"
set +e
"$a" source "$scratch/nonexistent.zst" 2>"$scratch/err"
rc=$?
set -e
[ "$rc" -eq 1 ] && [ "$(wc -l <"$scratch/err")" -eq 1 ] || fail "bad trace: rc $rc, $(cat "$scratch/err")"
echo "ok"
