# analyze view on a real terminal: tmux (a private server) runs it in a
# pane; keys go in with send-keys, the screen comes back with capture-pane,
# polled until the expected text shows (never fixed sleeps: the machine is
# loaded). Known answers:
#  - tests/golden/threads.trace.zst (exact): rows and percentages at the
#    start (the hottest path open), after c, after u, after s, search, the thread picker;
#  - report_split (~70% heavy, ~30% light): the rows within 5 points, the
#    source panel's hot line with exactly analyze source's percentage;
#  - resizing to 80x24 and 200x60 (the status line last, the flame strip in
#    its rows); colours off with NO_COLOR; quitting with q, SIGINT, SIGTERM
#    and SIGSEGV leaves the terminal as it was (stty -a, alternate screen);
#  - an unreadable trace: the one-line error before the screen is taken;
#    not a terminal: a clear error.
. "$(dirname "$0")/lib.sh"
golden=$(cd "$(dirname "$0")/../golden" && pwd)/threads.trace.zst
. "$(dirname "$0")/view_lib.sh"

# --- the golden trace: exact figures (tree: 3651 of 3711; flat self 703 of 3711) ---
run "'$a' view '$golden'"
wait_for "golden+0x10ff"
expect_row "$(row "weight 3711 = 3.711 s of CPU" "by cpu")"
expect_row "$(row "3.651 s  98.4%" "golden+0x10ff")"
# The hottest path is open from the start: golden+0x10ff's hottest callee shows; c closes all.
expect_row "$(row "919.0 ms  24.8%" "golden+0x12ff")"
keys c
wait_for "[truncated]"
# 38 samples of the stacks cut at max frames sit under their [truncated] root.
expect_row "$(row "38.0 ms   1.0%" "[truncated]")"
expect_row "$(row "22.0 ms   0.6%" "[unknown]")"
keys u
wait_for "by samples"
expect_row "$(row "3651  98.4%" "golden+0x10ff")"
expect_row "weight 3711 = 3.711 s of CPU"
keys Right
wait_for "919  24.8%"
expect_row "$(row "919  24.8%" "golden+0x12ff")"
keys s
wait_for "| flat"
expect_row "$(row "703  18.9%" "golden+0x1803")"
expect_row "$(row "310   8.4%" "golden+0x1807")"
keys s
wait_for "| tree"
keys /
T send-keys -t v -l 0x1d04 # -l: tmux would read 0x1d04 as the key U+1D04
keys Enter
wait_for "/0x1d04: golden+0x1d04"
expect_row "$(row "182   4.9%" "golden+0x1d04")"
keys t
wait_for "threads (Enter picks"
expect_row "$(row "1291  34.8%" "thread 42 (golden)")"
keys Down Enter
wait_for "42 (golden) | tree"
expect_row "weight 1291 = 1.291 s of CPU"
keys '?'
wait_for "keys (any key closes)"
keys x
keys q
restored 0

# --- several traces summed (the golden trace twice): every figure doubles, the shares stay ---
run "'$a' view '$golden' '$golden'"
wait_for "golden+0x10ff"
expect_row "$(row "weight 7422 = 7.422 s of CPU" "by cpu")"
expect_row "$(row "7.302 s  98.4%" "golden+0x10ff")"
keys q
restored 0

# --- report_split: the shares, the source panel; resizing; quitting ---
profile_workload report_split 1.0
total=$(info_samples "$scratch/t.zst")
"$a" source --value samples --format tsv "$scratch/t.zst" report_split.c >"$scratch/tsv"
"$a" flat --format tsv "$scratch/t.zst" >"$scratch/flat"
weight=$(awk -F'\t' 'NR > 1 { s += $9 } END { print s }' "$scratch/flat")
read -r hot hot_pct <<EOF
$(awk -F'\t' -v w="$weight" 'NR > 1 && $3 > max { max = $3; line = $2 } END { printf "%d %.1f%%\n", line, 100 * max / w }' "$scratch/tsv")
EOF
run "'$a' view t.zst"
wait_for "report_split.c:35"
share=$(sed -n 's/.* \([0-9.]*\)% .*main  report_split\.c:35.*/\1/p' "$scratch/screen" | head -1)
within "$share" 70 5 || fail "main at heavy's call has $share%, expected 70 +- 5"
# The hottest path is open from the start, down to heavy's hottest line; a search goes there.
wait_for "heavy  report_split.c:$hot"
expect_row "$(row "$hot_pct" "heavy  report_split.c:$hot")"
keys /
T send-keys -t v -l heavy
keys Enter
wait_for "/heavy: heavy"
keys o
wait_for "| source"
wait_for "split_sink += i ^ (i >> 3);"
expect_row "$(row " $hot " "$hot_pct" "split_sink += i ^ (i >> 3);")"
T resize-window -t v -x 80 -y 24
wait_line 24 "q back" # the status line, last
[ "$(screen | wc -l)" -eq 24 ] || fail "not 24 lines after resizing"
expect_row "$(row " $hot " "$hot_pct" "split_sink += i ^ (i >> 3);")"
keys q
# 80x24: 4 flame rows above the status line, their heading above them.
wait_line 19 "flame graph"
wait_line 24 "q quit"
T resize-window -t v -x 200 -y 60
wait_line 47 "flame graph" # 12 flame rows at 60 lines
wait_line 60 "q quit"
[ "$(screen | wc -l)" -eq 60 ] || fail "not 60 lines after resizing"
expect_row "$(row "$hot_pct" "heavy  report_split.c:$hot")"
T resize-window -t v -x 100 -y 30
wait_line 23 "flame graph" # 6 flame rows at 30 lines
# Colours on a colour terminal, none with NO_COLOR.
T capture-pane -p -e -t v | grep -q "$(printf '\033')\[[0-9;]*\(3[0-7]\|4[0-7]\|[34]8;5;[0-9]*\)m" ||
	fail "no colours on a colour terminal"
keys q
restored 0
run "NO_COLOR=1 '$a' view t.zst"
wait_for "report_split.c:35"
T capture-pane -p -e -t v | grep -q "$(printf '\033')\[[0-9;]*\(3[0-7]\|4[0-7]\|[34]8;5;[0-9]*\)m" &&
	fail "colours despite NO_COLOR"
keys q
restored 0
# A terminal without colours (and without an alternate screen).
run "TERM=vt100 '$a' view t.zst"
wait_for "report_split.c:35"
keys s
wait_for "| flat"
keys q
restored 0

# --- SIGINT (^C), SIGTERM and a crash: the terminal back, death by the signal ---
run "'$a' view t.zst"
wait_for "report_split.c:35"
keys C-c
restored 130
run "echo \\\$\\\$ >pid; exec '$a' view t.zst" # sh -c's pid, then the viewer's
wait_for "report_split.c:35"
kill -TERM "$(cat "$scratch/pid")"
restored 143
run "echo \\\$\\\$ >pid; exec '$a' view t.zst" # sh -c's pid, then the viewer's
wait_for "report_split.c:35"
kill -SEGV "$(cat "$scratch/pid")"
restored 139

# --- before the screen: an unreadable trace, not a terminal ---
run "'$a' view nonexistent.zst"
restored 1
expect_row "analyze: nonexistent.zst: No such file or directory"
set +e
"$a" view "$scratch/t.zst" </dev/null >"$scratch/out" 2>"$scratch/err"
rc=$?
set -e
[ "$rc" -eq 1 ] && grep -q "analyze view: standard input is not a terminal" "$scratch/err" ||
	fail "not a terminal: rc $rc, $(cat "$scratch/err")"
echo "ok"
