# analyze plot on real traces: export_threads (three named threads) drawn as
# timeline and top, two report_split runs (70/30 and 30/70) as diff. Each
# kind gives a PNG of 1280x720 with more than two colours and not blank
# (png_info), an SVG that is well-formed XML holding the title (xmllint) and
# a PDF; the data files hold flat's and diff's numbers: timeline's column of
# each thread adds up to flat --tid's total, top's rows are flat's, diff's
# bars are diff --format tsv's; a wall trace's timeline holds no more than
# its threads in any bin. The text terminal, a kept script rerun by
# hand, and the errors: heap of a CPU trace, an unknown output type, a
# missing run of a diff named as analyze diff names it, gnuplot missing.
. "$(dirname "$0")/lib.sh"
need gnuplot gnuplot-nox
need xmllint libxml2-utils
png_info=$build/tests/png_info

"$bin/collect" -q -o "$scratch/t.zst" "$workloads/export_threads" 0.6 >/dev/null 2>"$scratch/err" ||
	fail "collect export_threads: $(cat "$scratch/err")"
for share in 0.7 0.3; do
	"$bin/collect" -q -o "$scratch/s$share.zst" "$workloads/report_split" 0.5 "$share" 2>"$scratch/err" ||
		fail "collect report_split: $(cat "$scratch/err")"
done

plot() { # plot KIND OUT TRACES...: analyze plot, failing with its stderr
	kind=$1 out=$2
	shift 2
	"$bin/analyze" plot "$kind" -o "$out" "$@" 2>"$scratch/err" || fail "plot $kind -o $out failed: $(cat "$scratch/err")"
	[ ! -s "$scratch/err" ] || fail "plot $kind -o $out said: $(cat "$scratch/err")"
}

check_outputs() { # check_outputs KIND TITLE TRACES...
	kind=$1 title=$2
	shift 2
	plot "$kind" "$scratch/$kind.png" "$@"
	info=$("$png_info" "$scratch/$kind.png") || fail "$kind.png is not a readable PNG"
	set -- $info
	[ "$1" = 1280 ] && [ "$2" = 720 ] || fail "$kind.png is $1x$2, expected 1280x720"
	[ "$3" -gt 2 ] || fail "$kind.png has $3 colours"
	awk -v f="$4" 'BEGIN { exit !(f > 1) }' || fail "$kind.png is blank ($4% not background)"
	echo "$kind.png: $info"
}

check_svg() { # check_svg KIND TITLE TRACES...
	kind=$1 title=$2
	shift 2
	plot "$kind" "$scratch/$kind.svg" "$@"
	xmllint --noout "$scratch/$kind.svg" || fail "$kind.svg is not well-formed XML"
	grep -q "$title" "$scratch/$kind.svg" || fail "$kind.svg does not hold the title '$title'"
	plot "$kind" "$scratch/$kind.pdf" "$@"
	[ "$(head -c 5 "$scratch/$kind.pdf")" = "%PDF-" ] || fail "$kind.pdf is not a PDF"
}

for kind in timeline top; do
	check_outputs "$kind" x "$scratch/t.zst"
done
check_svg timeline "timeline of export_threads 0.6" "$scratch/t.zst"
check_svg top "top functions of export_threads 0.6" "$scratch/t.zst"
check_outputs diff x "$scratch/s0.7.zst" "$scratch/s0.3.zst"
check_svg diff "changes of report_split 0.5 0.3" "$scratch/s0.7.zst" "$scratch/s0.3.zst"

# timeline's data: each thread's column adds up to its flat --tid total (ns).
plot timeline "$scratch/t.png" --keep-data "$scratch/tl" "$scratch/t.zst"
names=$(sed -n "s/^thread_names\[\([0-9]*\)\] = '\([0-9]*\) .*/\1 \2/p" "$scratch/tl/timeline.gp")
[ "$(echo "$names" | wc -l)" -eq 3 ] || fail "timeline names $(echo "$names" | wc -l) threads, expected 3"
echo "$names" | while read -r k tid; do
	got=$(awk -v c=$((k + 1)) '!/^#/ { s += $c } END { printf "%.0f", s }' "$scratch/tl/timeline-threads.dat")
	want=$("$bin/analyze" flat --format tsv --value cpu --tid "$tid" "$scratch/t.zst" |
		awk -F'\t' 'NR > 1 { s += $2 } END { printf "%.0f", s }')
	[ "$got" = "$want" ] || fail "timeline: thread $tid's column adds up to $got ns, flat --tid says $want"
	echo "timeline: thread $tid $got ns, as flat --tid"
done
# A wall trace's timeline never draws more than the threads there are: threads
# blocked for long are sampled every 8 ticks, each sample weighing 8, which
# binned at its time put 8 ms into a 2 ms bin (4 threads' worth from one).
# Each sample is laid over the time it stands for: per bin, each thread's
# column is at most the bin's width (1 ns of rounding), all of them at most
# the threads times it, and each column still adds up to the thread's total.
"$bin/collect" -q -m wall -o "$scratch/idle.zst" "$workloads/collect_wall" idle 2 1 2>"$scratch/err" ||
	fail "collect -m wall collect_wall idle: $(cat "$scratch/err")"
plot timeline "$scratch/idle.png" --bins 500 --keep-data "$scratch/il" "$scratch/idle.zst"
width=$(sed -n 's/^binwidth = //p' "$scratch/il/timeline.gp")
threads=$(info_json "$scratch/idle.zst" | jq '.threads | length')
awk -v w="$width" -v n="$threads" '!/^#/ {
	s = 0
	for (i = 2; i <= NF; i++) {
		s += $i
		if ($i > w * 1e9 + 1) { printf "bin at %ss: thread column %d holds %d ns, the bin is %.0f ns\n", $1, i - 1, $i, w * 1e9; bad = 1 }
	}
	if (s > n * (w * 1e9 + 1)) { printf "bin at %ss: %d ns, %d threads of %.0f ns\n", $1, s, n, w * 1e9; bad = 1 }
	if (s > peak) peak = s
} END { printf "wall timeline: peak %.2f threads of %d\n", peak / (w * 1e9), n; exit bad }' "$scratch/il/timeline-threads.dat" >"$scratch/bins" ||
	fail "wall timeline: bins hold more than the threads: $(head -n 5 "$scratch/bins")"
cat "$scratch/bins"
got=$(awk '!/^#/ { for (i = 2; i <= NF; i++) s += $i } END { printf "%.0f", s }' "$scratch/il/timeline-threads.dat")
want=$(info_json "$scratch/idle.zst" | jq '[.value_types[] | select(.type == "wall") | .total] | add')
[ "$got" = "$want" ] || fail "wall timeline: the bins add up to $got ns, the trace to $want ns"

# Rerun by hand: the kept script draws the same file again.
rm "$scratch/t.png"
(cd "$scratch/tl" && gnuplot timeline.gp) || fail "the kept timeline.gp does not rerun"
"$png_info" "$scratch/t.png" >/dev/null || fail "the kept script's rerun made no PNG"

# top's data: flat's self and inclusive CPU (TSV columns cpu_self, cpu) of
# the rows with self time (fewer than top's 20 here); names cut to fit a
# legend are matched by their start.
plot top "$scratch/top.png" --keep-data "$scratch/tp" "$scratch/t.zst"
"$bin/analyze" flat --format tsv "$scratch/t.zst" | awk -F'\t' 'NR > 1 && $11 > 0 { print $11, $10 }' |
	LC_ALL=C sort >"$scratch/flat.rows"
[ "$(wc -l <"$scratch/flat.rows")" -lt 20 ] || fail "the test expects fewer than 20 functions with self time"
awk '!/^#/ { print $2, $3 }' "$scratch/tp/top.dat" | LC_ALL=C sort >"$scratch/top.rows"
cmp -s "$scratch/flat.rows" "$scratch/top.rows" || fail "top.dat's self and inclusive differ from flat's: $(diff "$scratch/flat.rows" "$scratch/top.rows")"
name1=$(sed -n "s/^names\[1\] = '\(.*\)'$/\1/p" "$scratch/tp/top.gp")
first=$("$bin/analyze" flat --format tsv "$scratch/t.zst" | awk -F'\t' 'NR > 1 { print $11 "\t" $5 }' | sort -t "$(printf '\t')" -k1,1nr | head -n 1 | cut -f2)
[ "$name1" = "$first" ] || fail "top's first bar is '$name1', flat's heaviest self is '$first'"
echo "top: $(wc -l <"$scratch/top.rows") rows, self and inclusive as flat's, '$first' first"

# diff's data: each bar's change is diff --format tsv's delta_percent.
plot diff "$scratch/d.png" --keep-data "$scratch/df" "$scratch/s0.7.zst" "$scratch/s0.3.zst"
"$bin/analyze" diff --format tsv "$scratch/s0.7.zst" "$scratch/s0.3.zst" >"$scratch/diff.tsv"
sed -n "s/^names\[\([0-9]*\)\] = '\(.*\)'$/\1 \2/p" "$scratch/df/diff.gp" | while read -r k name; do
	got=$(awk -v k="$k" '!/^#/ && $1 == k { print $2 }' "$scratch/df/diff.dat")
	want=$(awk -F'\t' -v f="$name" '$12 == f { print $4 }' "$scratch/diff.tsv")
	within "$got" "$want" 0.001 || fail "diff plot: $name changes $got, diff says $want"
done
grep -q "^names\[1\] = 'light'" "$scratch/df/diff.gp" || fail "diff plot: the top bar is not light's increase"
echo "diff: bars as diff --format tsv"

# Text: the terminal's size on a terminal; here (a pipe) 100 columns.
"$bin/analyze" plot top "$scratch/t.zst" >"$scratch/top.txt" 2>"$scratch/err" || fail "text plot: $(cat "$scratch/err")"
grep -q "top functions of export_threads" "$scratch/top.txt" || fail "text plot has no title"
[ "$(awk '{ if (length($0) > m) m = length($0) } END { print m }' "$scratch/top.txt")" -le 100 ] ||
	fail "text plot wider than 100 columns"
plot timeline "$scratch/tl.txt" --width 80 "$scratch/t.zst"
grep -q "by thread" "$scratch/tl.txt" || fail "timeline .txt has no panel title"

# Errors.
"$bin/analyze" plot heap -o "$scratch/h.png" "$scratch/t.zst" 2>"$scratch/err" && fail "heap of a CPU trace drawn"
grep -q "plot heap needs an allocation trace" "$scratch/err" || fail "heap of a CPU trace: $(cat "$scratch/err")"
[ ! -e "$scratch/h.png" ] || fail "a failed plot left its output"
"$bin/analyze" plot top -o "$scratch/x.gif" "$scratch/t.zst" 2>"$scratch/err" && fail ".gif accepted"
[ $? -eq 2 ] || fail ".gif: exit status not 2"
"$bin/analyze" plot nosuch "$scratch/t.zst" 2>/dev/null && fail "unknown kind accepted"
"$bin/analyze" plot diff "$scratch/t.zst" 2>"$scratch/err" && fail "diff with one trace accepted"
grep -q "BASE NEW" "$scratch/err" || fail "diff with one trace: $(cat "$scratch/err")"
# The runs' messages say which run, as analyze diff's (diff_load).
"$bin/analyze" plot diff "$scratch/t.zst" "$scratch/missing.zst" 2>"$scratch/err" && fail "diff of a missing NEW drawn"
grep -q "new trace $scratch/missing.zst" "$scratch/err" || fail "missing NEW: message does not name it: $(cat "$scratch/err")"
PATH=/nonexistent "$bin/analyze" plot top -o "$scratch/n.png" "$scratch/t.zst" 2>"$scratch/err" &&
	fail "plotted without gnuplot"
grep -q "cannot run gnuplot: No such file or directory" "$scratch/err" || fail "no gnuplot: $(cat "$scratch/err")"
[ "$(wc -l <"$scratch/err")" -eq 1 ] || fail "no gnuplot: more than one line: $(cat "$scratch/err")"
# A gnuplot that ends with status 0 and writes nothing: an error, no file.
mkdir -p "$scratch/fakebin"
printf '#!/bin/sh\ncat >/dev/null\nexit 0\n' >"$scratch/fakebin/gnuplot"
chmod +x "$scratch/fakebin/gnuplot"
PATH="$scratch/fakebin:$PATH" "$bin/analyze" plot top -o "$scratch/silent.png" "$scratch/t.zst" 2>"$scratch/err" &&
	fail "a gnuplot that wrote nothing made a plot"
grep -q "gnuplot wrote nothing" "$scratch/err" || fail "silent gnuplot: $(cat "$scratch/err")"
[ ! -e "$scratch/silent.png" ] || fail "a silent gnuplot left an empty $scratch/silent.png"
echo "errors: heap of a CPU trace, unknown type and kind, gnuplot missing, gnuplot writing nothing: said"

# The program's command line reaches the scripts as strings: quotes,
# backslashes and backquotes in it are text (no gnuplot syntax error, no
# command run), and the title shows them as collect quoted them.
"$bin/collect" -q -o "$scratch/q.zst" "$workloads/report_split" 0.1 0.7 "it's" 'a\b' "\\'\\''" '`touch '"$scratch"'/ran`' \
	2>"$scratch/err" || fail "collect report_split with quotes: $(cat "$scratch/err")"
for kind in top timeline; do
	plot "$kind" "$scratch/q-$kind.svg" "$scratch/q.zst"
	grep -qF "0.7 'it'\\''s' 'a\\b'" "$scratch/q-$kind.svg" || fail "$kind: the quoted arguments are not in the title as collect quoted them"
done
[ ! -e "$scratch/ran" ] || fail "a backquoted argument ran as a command"
echo "quotes, backslashes and backquotes in the command line: plotted as text"
