# view_lib.sh - driving analyze view in tmux, for the e2e_view_* tests
# (sourced after lib.sh): a private tmux server with one pane running a
# plain sh; keys go in with send-keys, the screen comes back with
# capture-pane, polled until the expected text shows (never fixed sleeps:
# the machine is loaded). Sets a (the analyze binary); kills the server
# and removes the scratch directory on exit.
need tmux tmux
a=$(cd "$bin" && pwd)/analyze
sock=ipscope-view-test-$$
T() { tmux -L "$sock" -f /dev/null "$@"; }
trap 'T kill-server 2>/dev/null; rm -rf "$scratch"' EXIT

# The pane: a plain sh in a UTF-8 locale, no core files, the size given.
T new-session -d -s v -x 100 -y 30 "env -u NO_COLOR LANG=C.UTF-8 PS1='$ ' sh"
T set-option -t v status off >/dev/null
T send-keys -t v "ulimit -c 0; cd '$scratch'" Enter

screen() { T capture-pane -p -t v; }
# wait_for TEXT [SECONDS]: until the pane shows TEXT (fixed string).
wait_for() {
	i=0
	limit=$((${2:-30} * 10))
	while [ "$i" -lt "$limit" ]; do
		screen >"$scratch/screen"
		grep -qF -- "$1" "$scratch/screen" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	cat "$scratch/screen" >&2
	fail "the screen never showed '$1'"
}
# wait_line N TEXT: until line N of the pane holds TEXT (after a resize, the old lines linger).
wait_line() {
	i=0
	while [ "$i" -lt 300 ]; do
		screen >"$scratch/screen"
		sed -n "$1p" "$scratch/screen" | grep -qF -- "$2" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	cat "$scratch/screen" >&2
	fail "line $1 never showed '$2'"
}
# expect_row TEXT... : some row of the screen holds every TEXT (tab-separated),
# polled like wait_for: a wait may have seen the header of a screen whose
# rows the terminal is still painting, or a flame box before the row.
expect_row() {
	i=0
	while ! awk -v want="$*" 'BEGIN { n = split(want, w, "\t") } { ok = 1; for (i = 1; i <= n; i++) if (!index($0, w[i])) ok = 0; if (ok) found = 1 } END { exit !found }' "$scratch/screen"; do
		[ "$i" -lt 100 ] || { cat "$scratch/screen" >&2; fail "no row with: $*"; }
		sleep 0.1
		screen >"$scratch/screen"
		i=$((i + 1))
	done
}
row() { printf '%s\t' "$@" | sed 's/\t$//'; }
keys() { T send-keys -t v "$@"; }
# run CMD: CMD in the pane through run.sh, which records the terminal before
# and after it and its exit status; it traps SIGINT, so a ^C ends CMD (the
# foreground process group gets it) but not the recording. The pane is
# reset first (tmux does it at once, where the shell's "clear" comes when
# the shell gets to it), so no wait sees the last run's screen; runs are
# numbered, so restored waits for this run's end.
cat >"$scratch/run.sh" <<'END'
trap : INT
stty -a >"before.$2"
sh -c "$1"
echo "rc=$?"
stty -a >"after.$2"
printf 'alt=%s %s\n' done "$2"
END
runs=0
run() {
	runs=$((runs + 1))
	T send-keys -t v -R
	T clear-history -t v
	keys "clear; sh run.sh \"$*\" $runs" Enter
}
# restored RC: the command ended with RC, the terminal as before it, the main screen back.
restored() {
	wait_for "alt=done $runs"
	expect_row "rc=$1"
	cmp -s "$scratch/before.$runs" "$scratch/after.$runs" ||
		fail "stty -a changed: $(diff "$scratch/before.$runs" "$scratch/after.$runs")"
	[ "$(T display -p -t v '#{alternate_on}')" = 0 ] || fail "still on the alternate screen"
}

