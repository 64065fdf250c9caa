# Programs that cannot be run get the shell's statuses and leave no trace
# file; bad options are usage errors (2); binary never goes to a terminal.
. "$(dirname "$0")/lib.sh"
status_of() {
	set +e
	"$@" >/dev/null 2>"$scratch/err"
	rc=$?
	set -e
	echo $rc
}
[ "$(status_of "$bin/collect" -o "$scratch/a.zst" "$scratch/no-such-program")" -eq 127 ] ||
	fail "missing program: want 127"
grep -q 'no-such-program' "$scratch/err" || fail "missing program: message does not name it"
[ ! -e "$scratch/a.zst" ] || fail "missing program: a trace file was left behind"
printf 'data\n' >"$scratch/not-exec"
chmod 644 "$scratch/not-exec"
[ "$(status_of "$bin/collect" -o "$scratch/a.zst" "$scratch/not-exec")" -eq 126 ] ||
	fail "non-executable program: want 126"
[ ! -e "$scratch/a.zst" ] || fail "non-executable: a trace file was left behind"
[ "$(status_of "$bin/collect" --no-such-option true)" -eq 2 ] || fail "unknown option: want 2"
[ "$(wc -l <"$scratch/err")" -le 2 ] || fail "unknown option: message too long"
[ "$(status_of "$bin/collect" -i 7parsecs true)" -eq 2 ] || fail "bad interval: want 2"
[ "$(status_of "$bin/collect" -m idle true)" -eq 2 ] || fail "unknown mode: want 2"
grep -q 'cpu' "$scratch/err" && grep -q 'wall' "$scratch/err" || fail "unknown mode: message does not list the modes"
[ "$(status_of "$bin/collect" --delay 2parsecs true)" -eq 2 ] || fail "bad --delay: want 2"
grep -q -- '--delay' "$scratch/err" || fail "bad --delay: message does not name the option"
[ "$(status_of "$bin/collect" --duration 0 true)" -eq 2 ] || fail "--duration 0: want 2"
[ "$(status_of "$bin/collect")" -eq 2 ] || fail "no program: want 2"
"$bin/collect" --help | grep -q 'program-stdout' || fail "--help does not document --program-stdout"
if command -v script >/dev/null; then
	script -qec "$bin/collect true" /dev/null >"$scratch/tty" 2>&1 || true
	grep -q 'terminal' "$scratch/tty" || fail "collect wrote to a terminal without complaint"
fi

# Devices and pipes are written as streams: -o /dev/null and -o /dev/stdout
# profile the program (no truncate, no chmod of the device), and the
# program's output does not go into a trace on stdout.
mode=$(stat -c %a /dev/null)
"$bin/collect" -o /dev/null "$workloads/collect_busy" 0.1 2>"$scratch/err" || fail "-o /dev/null: exit $?: $(cat "$scratch/err")"
! grep -q 'unprofiled\|cannot' "$scratch/err" || fail "-o /dev/null: $(cat "$scratch/err")"
[ "$(stat -c %a /dev/null)" = "$mode" ] || fail "-o /dev/null changed the mode of /dev/null"
"$bin/collect" -o /dev/stdout sh -c "echo program output; exec '$workloads/collect_busy' 0.2" 2>"$scratch/err" |
	cat >"$scratch/piped.zst" || fail "-o /dev/stdout | cat: exit $?"
grep -q 'program output' "$scratch/err" || fail "-o /dev/stdout: the program's stdout did not go to stderr"
"$bin/analyze" info "$scratch/piped.zst" >"$scratch/info" 2>&1 || fail "-o /dev/stdout | cat: trace unreadable: $(cat "$scratch/info")"
cpu=$(info_cpu_seconds "$scratch/info")
within "$cpu" 0.2 0.03 || fail "-o /dev/stdout | cat: profiled ${cpu}s of 0.2 s"

# A destination that takes no trace is refused before the program starts
# (issue 32: -o /dev/full ran the program unprofiled, exit 0): exit 1, one
# line, the program never run, the device still a device.
mknod "$scratch/full" c 1 7 2>/dev/null || ln -s /dev/full "$scratch/full"
[ "$(status_of "$bin/collect" -o "$scratch/full" sh -c "touch '$scratch/ran'")" -eq 1 ] ||
	fail "-o a full device: want exit 1"
[ ! -e "$scratch/ran" ] || fail "-o a full device: the program ran"
[ "$(wc -l <"$scratch/err")" -eq 1 ] && grep -q 'No space left on device' "$scratch/err" ||
	fail "-o a full device said: $(cat "$scratch/err")"
[ -c "$scratch/full" ] || fail "-o a full device replaced it"
if command -v python3 >/dev/null; then
	python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$scratch/sock"
	[ "$(status_of "$bin/collect" -o "$scratch/sock" sh -c "touch '$scratch/ran'")" -eq 1 ] ||
		fail "-o a socket: want exit 1"
	[ ! -e "$scratch/ran" ] && [ -S "$scratch/sock" ] || fail "-o a socket: the program ran, or the socket is gone"
	grep -q 'a socket, not a file' "$scratch/err" || fail "-o a socket said: $(cat "$scratch/err")"
fi
# A trace that stops being written mid-run (its reader gone; a full disk
# alike) is said to be incomplete, with no garbage line after it (an
# uninitialised JIT-map message printed as "collect: warning: ...").
"$bin/collect" -o /dev/stdout "$workloads/collect_busy" 1 2>"$scratch/err" | head -c 3000 >/dev/null
grep -q 'writing the trace failed' "$scratch/err" && grep -q 'the trace is incomplete' "$scratch/err" ||
	fail "a cut trace is not said to be incomplete: $(cat "$scratch/err")"
! grep -q 'collect: warning' "$scratch/err" || fail "a cut trace: a stray warning: $(cat -v "$scratch/err")"

# Option errors name the option as it was typed.
expect_usage() { # MESSAGE ARGS...
	want=$1
	shift
	[ "$(status_of "$bin/collect" "$@")" -eq 2 ] || fail "collect $*: want exit 2"
	grep -qF "$want" "$scratch/err" || fail "collect $*: said '$(head -1 "$scratch/err")', want '$want'"
}
expect_usage "option '-o' needs an argument" -o
expect_usage "option '--output' needs an argument" --output
expect_usage "option '--max-frames' needs an argument" --max-frames
expect_usage "unknown option '-x'" -x true
expect_usage "unknown option '--bogus'" --bogus=1 true
expect_usage "bad --signal" --signal 9 true
"$bin/collect" --help | grep -q -- '--signal N' || fail "--help does not document --signal"
