# Long reports through a pager on a terminal, as git and perf do (analyze/pager.c): script(1)
# gives analyze a terminal; the pager is a command that saves what it reads. On a terminal tree,
# flat, info, source and diff are paged through IPSCOPE_PAGER, else PAGER; --no-pager, a pipe, an
# empty PAGER or cat mean none; a pager that cannot run leaves the report on the terminal; less
# gets LESS=FRX when LESS is unset.
. "$(dirname "$0")/lib.sh"
need script bsdutils
trace=$(cd "$(dirname "$0")/../golden" && pwd)/threads.trace.zst
a=$bin/analyze
paged=$scratch/paged
# on_terminal COMMAND: run the shell COMMAND on a pseudo-terminal, its screen in $scratch/screen.
on_terminal() {
	rm -f "$paged"
	script -qec "$1" /dev/null >"$scratch/screen" 2>&1 </dev/null || fail "on a terminal, '$1' failed: $(cat "$scratch/screen")"
}
saver="cat >'$paged'"

for cmd in "tree" "flat" "info" "diff '$trace'"; do
	on_terminal "PAGER=\"$saver\" '$a' $cmd '$trace'"
	[ -s "$paged" ] || fail "$cmd on a terminal: not paged: $(head -5 "$scratch/screen")"
	grep -q "golden" "$paged" || fail "$cmd: the pager did not get the report: $(head -5 "$paged")"
	! grep -q "golden+0x10ff\|Command:" "$scratch/screen" || fail "$cmd: the report also went to the terminal"
done
on_terminal "IPSCOPE_PAGER=\"$saver\" PAGER=false '$a' tree '$trace'"
grep -q "Total samples" "$paged" || fail "IPSCOPE_PAGER is not used before PAGER"
on_terminal "PAGER=\"$saver\" '$a' tree --no-pager '$trace'"
[ ! -e "$paged" ] || fail "--no-pager: paged"
grep -q "Total samples" "$scratch/screen" || fail "--no-pager: the report is not on the terminal"
on_terminal "PAGER=\"$saver\" '$a' tree '$trace' | cat"
[ ! -e "$paged" ] || fail "piped: paged"
for none in cat ""; do
	on_terminal "PAGER='$none' '$a' tree '$trace'"
	grep -q "Total samples" "$scratch/screen" || fail "PAGER='$none': the report is not on the terminal"
done
on_terminal "PAGER=no-such-pager-ipscope '$a' tree '$trace'"
grep -q "Total samples" "$scratch/screen" || fail "a pager that cannot run: the report is lost: $(cat "$scratch/screen")"
on_terminal "unset LESS; PAGER=\"echo \\\$LESS >'$paged'; cat >/dev/null\" '$a' tree '$trace'"
[ "$(cat "$paged")" = FRX ] || fail "the pager's LESS is '$(cat "$paged")', want FRX"
# Not a terminal: never a pager, whatever PAGER says.
rm -f "$paged"
PAGER="$saver" "$a" tree "$trace" >"$scratch/out" 2>/dev/null
[ ! -e "$paged" ] && grep -q "Total samples" "$scratch/out" || fail "not a terminal: paged"
echo "pager: ok"
