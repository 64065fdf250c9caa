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
[ "$(status_of "$bin/collect" -m wall true)" -eq 2 ] || fail "wall mode: want 2 until it exists"
grep -q 'wall' "$scratch/err" || fail "wall mode: message does not say why"
[ "$(status_of "$bin/collect")" -eq 2 ] || fail "no program: want 2"
"$bin/collect" --help | grep -q 'program-stdout' || fail "--help does not document --program-stdout"
if command -v script >/dev/null; then
	script -qec "$bin/collect true" /dev/null >"$scratch/tty" 2>&1 || true
	grep -q 'terminal' "$scratch/tty" || fail "collect wrote to a terminal without complaint"
fi
