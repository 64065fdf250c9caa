# report_split stripped of every symbol (objcopy --strip-all keeps .eh_frame):
# its functions are named module+0xSTART, one per function, START being the
# function's start as nm of the unstripped binary says; flat, tree and the
# folded export each show heavy, light and main once, and nothing of the
# program that is not a function's start. --no-combine still shows addresses.
. "$(dirname "$0")/lib.sh"
need nm binutils
need objcopy binutils

unstripped=$workloads/report_split
objcopy --strip-all "$unstripped" "$scratch/split" || fail "objcopy --strip-all failed"
nm "$scratch/split" 2>/dev/null | grep -q . && fail "the stripped copy still has symbols"
"$bin/collect" -q -o "$scratch/t.zst" "$scratch/split" 1 2>"$scratch/err" ||
	fail "collect exited $?: $(cat "$scratch/err")"
for report in flat tree; do
	"$bin/analyze" "$report" "$scratch/t.zst" >"$scratch/$report" 2>/dev/null || fail "analyze $report failed"
done
"$bin/analyze" export --format folded "$scratch/t.zst" >"$scratch/folded" 2>/dev/null ||
	fail "analyze export --format folded failed"
"$bin/analyze" flat --no-combine "$scratch/t.zst" >"$scratch/flat-addresses" 2>/dev/null ||
	fail "analyze flat --no-combine failed"
cat "$scratch/flat" "$scratch/tree" "$scratch/folded"

# The name each function has without symbols: split+0x<start, no leading zeros>.
name_of() {
	start=$(nm "$unstripped" | awk -v f="$1" '$3 == f && ($2 == "t" || $2 == "T") { print $1; exit }')
	[ -n "$start" ] || fail "nm finds no $1 in $unstripped"
	printf 'split+0x%x\n' "0x$start"
}
nm "$unstripped" | awk '$2 == "t" || $2 == "T" { print $1 }' | while read -r start; do
	printf 'split+0x%x\n' "0x$start"
done | sort -u >"$scratch/starts"

# Every name of the program in a report: each is a function's start.
check_names() { # FILE WHAT
	grep -o 'split+0x[0-9a-f]*' "$1" | sort -u >"$scratch/names"
	[ -s "$scratch/names" ] || fail "$2 names nothing of the program"
	odd=$(comm -23 "$scratch/names" "$scratch/starts" | tr '\n' ' ')
	[ -z "$odd" ] || fail "$2 names code of the program by addresses that start no function: $odd"
}
check_names "$scratch/flat" flat
check_names "$scratch/tree" tree
check_names "$scratch/folded" "the folded export"

heavy=$(name_of heavy)
light=$(name_of light)
main=$(name_of main)
for f in "$heavy" "$light" "$main"; do
	rows=$(awk -v f="$f" '$NF == f' "$scratch/flat" | wc -l)
	[ "$rows" -eq 1 ] || fail "flat has $rows rows for $f, want 1"
done
# heavy's and light's self time: ~70% and ~30% (all of each function's samples in one row).
self() { awk -v f="$1" '$NF == f { sub("%", "", $4); print $4; exit }' "$scratch/flat"; }
within "$(self "$heavy")" 70 10 || fail "$heavy (heavy) has $(self "$heavy")% self, expected 70 +- 10"
within "$(self "$light")" 30 10 || fail "$light (light) has $(self "$light")% self, expected 30 +- 10"

# Tree: heavy and light once each, directly under main.
for f in "$heavy" "$light"; do
	n=$(awk -v f="; $f" 'substr($0, length($0) - length(f) + 1) == f' "$scratch/tree" | wc -l)
	[ "$n" -eq 1 ] || fail "tree shows $f $n times, want once"
done
# Folded: every stack of heavy or light is main;heavy or main;light, one line each.
for f in "$heavy" "$light"; do
	n=$(awk -v s="$main;$f" '{ sub(/ [0-9]+$/, ""); $0 = ";" $0 } substr($0, length($0) - length(s)) == ";" s' \
		"$scratch/folded" | wc -l)
	[ "$n" -eq 1 ] || fail "the folded export has $n stacks ending $main;$f, want 1"
done

# --no-combine keeps one row per address: heavy's samples land at several.
rows=$(awk -v f="$heavy" '$NF == f && $(NF-1) ~ /^0x/' "$scratch/flat-addresses" | wc -l)
[ "$rows" -ge 2 ] || fail "flat --no-combine shows $rows addresses in $heavy, want several"
echo "heavy $heavy, light $light, main $main: one row each; $rows addresses of heavy with --no-combine: ok"
