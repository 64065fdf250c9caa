# analyze must not trust what a trace says (issue 13): traces made by
# hostile_traces name a FIFO as a module, hold terminal escapes, garbage
# loss counters, weights near 2^32 and a 100000-deep stack; an empty file is
# not a trace; a module the user may not read is "permission denied"; and
# output that cannot be written is an error, never exit 0.
. "$(dirname "$0")/lib.sh"
a=$bin/analyze
chmod 755 "$scratch"
mkfifo "$scratch/fifo"
cp "$bin/analyze" "$scratch/unreadable"
chmod 000 "$scratch/unreadable"
"$build/tests/hostile_traces" "$scratch" "$scratch/fifo" "$scratch/unreadable" || fail "hostile_traces failed"

# A FIFO module: every command returns (an open() of it would block forever).
for cmd in info tree flat "source --asm ."; do
	set +e
	timeout 20 "$a" $cmd "$scratch/fifo.zst" >"$scratch/out" 2>"$scratch/err"
	rc=$?
	set -e
	[ $rc -ne 124 ] || fail "analyze $cmd hangs on a trace naming a FIFO"
	[ $rc -eq 0 ] || fail "analyze $cmd exited $rc on a trace naming a FIFO: $(cat "$scratch/err")"
done
grep -q "not a regular file" "$scratch/err" || fail "the FIFO is not said to be no regular file: $(cat "$scratch/err")"
"$a" info "$scratch/fifo.zst" 2>/dev/null | grep -q "not a regular file" || fail "info does not say 'not a regular file'"

# Escapes: no ESC, BEL, CR or C1 CSI reaches the terminal from any text report.
esc=$(printf '\033')
bel=$(printf '\007')
cr=$(printf '\r')
csi=$(printf '\233')
for cmd in info tree flat "tree --threads" "source --asm ."; do
	"$a" $cmd "$scratch/escapes.zst" >"$scratch/out" 2>"$scratch/err" || fail "analyze $cmd failed on escapes"
	for c in "$esc" "$bel" "$cr"; do
		if grep -q "$c" "$scratch/out" "$scratch/err"; then
			fail "analyze $cmd printed a raw control character: $(od -c "$scratch/out" | head -5)"
		fi
	done
	grep -q "$csi" "$scratch/out" && fail "analyze $cmd printed a raw C1 CSI"
done
# Names holding bytes of no valid UTF-8, bidi overrides (which reorder what a
# terminal shows) or the text \x1b (issue 32): \xff, \u{202e} and \\x1b on a
# terminal; info's JSON stays JSON.
ff=$(printf '\377')
rlo=$(printf '\342\200\256')
for cmd in info tree flat "tree --threads"; do
	"$a" $cmd "$scratch/unicode.zst" >"$scratch/out" 2>"$scratch/err" || fail "analyze $cmd failed on unicode.zst"
	for c in "$ff" "$rlo"; do
		if LC_ALL=C grep -q "$c" "$scratch/out" "$scratch/err"; then
			fail "analyze $cmd printed a raw 0xff or U+202E: $(od -c "$scratch/out" | head -8)"
		fi
	done
	grep -qF 'lib\xff\u{202e}\\x1b.so' "$scratch/out" ||
		fail "analyze $cmd: the module's name is not escaped as lib\xff\u{202e}\\x1b.so: $(cat "$scratch/out")"
done
"$a" info "$scratch/unicode.zst" 2>/dev/null | grep -qF 'user\u{202e}nimda\xc3' || fail "info: the thread's name not escaped"
"$a" info --format json "$scratch/unicode.zst" 2>/dev/null | jq -e .command >/dev/null || fail "info --format json of unicode.zst is no JSON"
# archive warns about each module it cannot archive: the trace's paths, escaped.
"$a" archive -o "$scratch/escapes.tar" "$scratch/escapes.zst" >/dev/null 2>"$scratch/err"
grep -q "not archived" "$scratch/err" || fail "archive of escapes.zst warned about nothing: $(cat "$scratch/err")"
for c in "$esc" "$bel" "$cr" "$csi"; do
	grep -q "$c" "$scratch/err" && fail "analyze archive printed a raw control character: $(od -c "$scratch/err" | head -5)"
done
"$a" info "$scratch/escapes.zst" 2>/dev/null >"$scratch/out"
grep -qF './app \e]0;pwned\x07 \e[2J' "$scratch/out" || fail "command line not escaped as expected: $(grep Command "$scratch/out")"
grep -qF 'th\e[2Jread\r\x9b' "$scratch/out" || fail "thread name not escaped: $(cat "$scratch/out")"
# The machine formats escape their own way and keep the bytes.
"$a" info --format json "$scratch/escapes.zst" 2>/dev/null | jq -e '.command == "./app \u001b]0;pwned\u0007 \u001b[2J"' >/dev/null ||
	fail "info --format json lost the command's bytes"
"$a" flat --format tsv "$scratch/escapes.zst" 2>/dev/null | grep -q "$esc" && fail "flat --format tsv printed a raw ESC"

# The agent's own figures (a thread's CPU clock, the handler's cost): past
# what the run allows, dropped and said, never printed.
"$a" info "$scratch/agent.zst" >"$scratch/out" 2>"$scratch/err" || fail "info failed on agent.zst"
grep -q "1 thread's measured CPU time cannot be true" "$scratch/err" || fail "agent.zst: CPU clock not flagged: $(cat "$scratch/err")"
grep -q "the agent's cost .* cannot be true" "$scratch/err" || fail "agent.zst: agent cost not flagged: $(cat "$scratch/err")"
grep -q "18446744073\|6190182575" "$scratch/out" && fail "agent.zst: an impossible figure printed: $(cat "$scratch/out")"
"$a" info --format json "$scratch/agent.zst" 2>/dev/null | grep -q "18446744073\|9223372036854775807\|61901825750703200" &&
	fail "agent.zst: an impossible figure in the JSON"
echo "agent figures: flagged, not printed"

# Garbage loss counters: clamped, one line per bad thread, not 1000.
"$a" info "$scratch/lost.zst" >"$scratch/out" 2>"$scratch/err" || fail "info failed on lost.zst"
lost=$(info_lost "$scratch/lost.zst")
[ "$lost" -lt 1000000000 ] || fail "lost samples not clamped: $lost"
n=$(grep -c "lost samples cannot be true" "$scratch/err")
[ "$n" -eq 4 ] || fail "expected 3 thread lines and 1 END line about lost samples, got $n: $(cat "$scratch/err")"
grep -q "12534910648671186440" "$scratch/out" && fail "info shows the garbage count: $(grep Lost "$scratch/out")"

# Weights near 2^32 with nothing to bound them: the CPU total saturates and says so.
"$a" info "$scratch/weights.zst" >"$scratch/out" 2>"$scratch/err" || fail "info failed on weights.zst"
grep -q "^Samples: *3000, summed weight 12884901885000 = .*(saturated" "$scratch/out" ||
	fail "info's CPU figure wrapped or did not say it saturated: $(grep Samples "$scratch/out")"
"$a" tree "$scratch/weights.zst" 2>/dev/null | grep -q "(saturated" || fail "tree's header does not say the total saturated"

# A 100000-deep stack: the tree's output is linear in its size (bounded
# lines), not quadratic; flat and folded cope too.
timeout 60 "$a" tree "$scratch/deep.zst" 2>/dev/null | wc -c >"$scratch/size"
size=$(cat "$scratch/size")
[ "$size" -gt 1000000 ] && [ "$size" -lt 40000000 ] || fail "tree of a 100000-deep stack wrote $size bytes"
timeout 60 "$a" tree "$scratch/deep.zst" 2>/dev/null | awk 'length($0) > 600 { exit 1 }' ||
	fail "tree of a 100000-deep stack has lines over 600 bytes"
timeout 60 "$a" flat "$scratch/deep.zst" >/dev/null 2>&1 || fail "flat of a 100000-deep stack failed"

# An empty file is not a trace.
: >"$scratch/empty.zst"
for cmd in info tree flat "source --asm ."; do
	set +e
	"$a" $cmd "$scratch/empty.zst" >/dev/null 2>"$scratch/err"
	rc=$?
	set -e
	[ $rc -eq 1 ] || fail "analyze $cmd of an empty file exited $rc"
	grep -qx "analyze: $scratch/empty.zst: empty file, not an ipscope trace" "$scratch/err" ||
		fail "analyze $cmd of an empty file said: $(cat "$scratch/err")"
done

# A module the user may not read: "permission denied", not "file missing".
# (root reads anything: run as nobody when we are root.)
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	chmod 755 "$scratch" && chmod 644 "$scratch/denied.zst"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$a" info "$scratch/denied.zst" >"$scratch/out" 2>"$scratch/err" ||
		fail "info as nobody failed: $(cat "$scratch/err")"
	grep -q "permission denied" "$scratch/out" || fail "info does not say permission denied: $(cat "$scratch/out")"
	grep -q "unreadable: permission denied" "$scratch/err" || fail "no permission-denied warning: $(cat "$scratch/err")"
elif [ "$(id -u)" -ne 0 ]; then
	"$a" info "$scratch/denied.zst" 2>/dev/null | grep -q "permission denied" || fail "info does not say permission denied"
fi

# Output that cannot be written: exit 1 with one line, for every command.
"$bin/collect" -q -o "$scratch/t.zst" "$workloads/report_split" 0.2 2>/dev/null || fail "collect failed"
for cmd in info tree flat "flat --format tsv" "info --format json" "export --format folded"; do
	set +e
	"$a" $cmd "$scratch/t.zst" >/dev/full 2>"$scratch/err"
	rc=$?
	"$a" $cmd "$scratch/t.zst" >&- 2>"$scratch/err2"
	rc2=$?
	set -e
	[ $rc -eq 1 ] || fail "analyze $cmd >/dev/full exited $rc"
	[ "$(wc -l <"$scratch/err")" -eq 1 ] && grep -q "No space left on device" "$scratch/err" ||
		fail "analyze $cmd >/dev/full said: $(cat "$scratch/err")"
	[ $rc2 -eq 1 ] || fail "analyze $cmd with stdout closed exited $rc2"
done

# -o into what is not a regular file (issue 32): a device or a FIFO is
# written as a stream, a socket refused in one line, and none is ever
# replaced (as root, archive -o /dev/full once renamed a file over it).
# Nodes of our own when we may make them (mknod), else the system's.
mknod "$scratch/o-null" c 1 3 2>/dev/null || ln -s /dev/null "$scratch/o-null"
mknod "$scratch/o-full" c 1 7 2>/dev/null || ln -s /dev/full "$scratch/o-full"
mkfifo "$scratch/o-fifo"
nodes="o-null o-full o-fifo"
if command -v python3 >/dev/null; then
	python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$scratch/o-sock"
	nodes="$nodes o-sock"
fi
# plot reads what to draw from the extension: these names lead to the same nodes.
for n in $nodes; do
	ln -s "$scratch/$n" "$scratch/$n.svg"
done
ln -s "$scratch/o-fifo" "$scratch/o-fifo.txt"
nodes_intact() {
	[ -c "$scratch/o-null" ] && [ -c "$scratch/o-full" ] && [ -p "$scratch/o-fifo" ] &&
		{ [ ! -e "$scratch/o-sock" ] || [ -S "$scratch/o-sock" ]; }
}
for cmd in archive "export --format folded" "diff $scratch/t.zst" "plot timeline"; do
	ext=
	[ "$cmd" = "plot timeline" ] && ext=.svg
	# A FIFO gets what standard output gets (a picture: an SVG).
	cat "$scratch/o-fifo" >"$scratch/through" &
	timeout 60 "$a" $cmd -o "$scratch/o-fifo$ext" "$scratch/t.zst" 2>"$scratch/err" ||
		{ kill $! 2>/dev/null; fail "analyze $cmd -o FIFO: $(cat "$scratch/err")"; }
	wait
	if [ -n "$ext" ]; then
		xmllint --noout "$scratch/through" || fail "analyze $cmd -o FIFO: not an SVG"
	else
		"$a" $cmd -o - "$scratch/t.zst" 2>/dev/null >"$scratch/direct"
		# An archive's manifest carries the time it was made: its members are compared.
		if [ "$cmd" = archive ]; then
			tar tvf "$scratch/direct" | grep -v ipscope-archive.txt >"$scratch/direct.list"
			tar tvf "$scratch/through" | grep -v ipscope-archive.txt >"$scratch/through.list"
			mv "$scratch/direct.list" "$scratch/direct"
			mv "$scratch/through.list" "$scratch/through"
		fi
		cmp -s "$scratch/direct" "$scratch/through" ||
			fail "analyze $cmd -o FIFO: what went through differs from standard output"
	fi
	"$a" $cmd -o "$scratch/o-null$ext" "$scratch/t.zst" 2>"$scratch/err" ||
		fail "analyze $cmd -o a null device: $(cat "$scratch/err")"
	expect_refusal() { # NODE MESSAGE
		set +e
		"$a" $cmd -o "$scratch/$1$ext" "$scratch/t.zst" 2>"$scratch/err"
		rc=$?
		set -e
		[ $rc -eq 1 ] && [ "$(wc -l <"$scratch/err")" -eq 1 ] && grep -q "$2" "$scratch/err" ||
			fail "analyze $cmd -o $1$ext: exit $rc, said: $(cat "$scratch/err")"
	}
	expect_refusal o-full "No space left on device"
	[ ! -e "$scratch/o-sock" ] || expect_refusal o-sock "a socket, not a file"
	nodes_intact || fail "analyze $cmd -o replaced a node: $(ls -l "$scratch")"
done
# A text plot through a FIFO: the same text as on standard output.
cat "$scratch/o-fifo" >"$scratch/through" &
timeout 60 "$a" plot timeline -o "$scratch/o-fifo.txt" "$scratch/t.zst" 2>/dev/null || fail "analyze plot -o FIFO.txt failed"
wait
"$a" plot timeline "$scratch/t.zst" 2>/dev/null | cmp -s - "$scratch/through" ||
	fail "analyze plot -o FIFO.txt: what went through differs from standard output"
echo "hostile: ok"
