# Debug info fetched by build-id from a real debuginfod server (Debian's
# package) that this test starts on a free port, serving a directory that
# holds the only copy of a test binary's debug file, and stops; then the
# servers that go wrong: down, silent (accepts and never answers), and one
# answering garbage. Each costs at most the timeout, never a wrong name.
. "$(dirname "$0")/lib.sh"
src=$(dirname "$0")/workloads/report_cpp.cpp
name='geometry::Accumulator<double>::add_many'
line=$(marker_line "@add-many-line" "$src")
need debuginfod debuginfod
need node nodejs
server_pid=""
stop_server() {
	if [ -n "$server_pid" ]; then
		kill "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	server_pid=""
}
trap 'stop_server; rm -rf "$scratch"' EXIT

# The app, its DWARF moved out (no debuglink: only debuginfod can find it).
mkdir -p "$scratch/served"
c++ -O2 -g -DVARIANT=0 -o "$scratch/app" "$src" || fail "cannot compile $src"
objcopy --only-keep-debug "$scratch/app" "$scratch/served/app.debug"
strip --strip-debug "$scratch/app"
id=$(readelf -n "$scratch/app" | awk '/Build ID/ { print $3 }')
"$bin/collect" -q -o "$scratch/t.zst" "$scratch/app" 0.5 2>"$scratch/err" ||
	fail "collect exited $?: $(cat "$scratch/err")"

free_port() {
	node -e 'const s = require("net").createServer(); s.listen(0, "127.0.0.1", () => {
		console.log(s.address().port); s.close(); })'
}

# analyze_with URL ARGS...: analyze tree with DEBUGINFOD_URLS=URL, a fresh
# cache, its time in $scratch/seconds.
analyze_with() {
	url=$1
	shift
	rm -rf "$scratch/cache"
	start=$(date +%s.%N)
	DEBUGINFOD_URLS=$url DEBUGINFOD_CACHE_PATH=$scratch/cache \
		"$bin/analyze" tree "$@" "$scratch/t.zst" >"$scratch/tree" 2>"$scratch/err" ||
		fail "analyze tree exited $?: $(cat "$scratch/err")"
	awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f\n", e - s }' >"$scratch/seconds"
}
# The fallback every bad server must leave: symbol-table names, no lines.
expect_symtab_names() {
	grep -qF "$name" "$scratch/tree" || fail "$1: no name from the symbol table: $(cat "$scratch/tree")"
	grep -qF "report_cpp.cpp:$line" "$scratch/tree" && fail "$1: a line appeared from nowhere"
	return 0
}

# 1. A real server: names with file:line, the file in the cache.
port=$(free_port)
debuginfod -F -p "$port" -d "$scratch/db.sqlite" -t 0 -g 0 "$scratch/served" \
	>"$scratch/server.log" 2>&1 &
server_pid=$!
ready=0
for _ in $(seq 60); do # until it has scanned the file (a fresh cache each try: misses are cached)
	rm -rf "$scratch/probe"
	if DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$scratch/probe \
		debuginfod-find debuginfo "$id" >/dev/null 2>&1; then
		ready=1
		break
	fi
	kill -0 "$server_pid" 2>/dev/null || fail "debuginfod died: $(cat "$scratch/server.log")"
	sleep 0.5
done
[ "$ready" = 1 ] || fail "debuginfod never served $id: $(cat "$scratch/server.log")"
analyze_with "http://127.0.0.1:$port"
grep -qF "report_cpp.cpp:$line; $name" "$scratch/tree" ||
	fail "debuginfod: tree lacks 'report_cpp.cpp:$line; $name': $(cat "$scratch/tree" "$scratch/err")"
[ -s "$scratch/cache/$id/debuginfo" ] || fail "nothing cached in DEBUGINFOD_CACHE_PATH/$id"
echo "real server: ok ($(cat "$scratch/seconds") s)"

# 2. --offline asks nobody.
analyze_with "http://127.0.0.1:$port" --offline
expect_symtab_names offline
[ -e "$scratch/cache/$id" ] && fail "--offline still asked the server"
stop_server

# 3. The server is down: quick, and said.
analyze_with "http://127.0.0.1:$port" --debuginfod-timeout 5
expect_symtab_names down
within "$(cat "$scratch/seconds")" 0 4 || fail "down server took $(cat "$scratch/seconds") s"
grep -q "debuginfod" "$scratch/err" || fail "down server: no warning: $(cat "$scratch/err")"

# 4. A silent server (accepts, never answers): the timeout, once.
cat >"$scratch/servers.js" <<'EOF'
// silent: accept and never answer; garbage: 200 with bytes that are no ELF;
// trickle: garbage too, 1 MiB sent over about 2 s (a download worth a progress line).
const http = require("http");
const fs = require("fs");
const [kind, port, ready] = process.argv.slice(2);
const server = http.createServer((req, res) => {
	if (kind === "garbage") {
		res.writeHead(200, { "Content-Type": "application/octet-stream" });
		res.end(Buffer.alloc(4096, 0x5a));
	} else if (kind === "trickle") {
		res.writeHead(200, { "Content-Type": "application/octet-stream", "Content-Length": 1 << 20 });
		let sent = 0;
		const timer = setInterval(() => {
			res.write(Buffer.alloc(1 << 15, 0x5a));
			if ((sent += 1 << 15) >= 1 << 20) {
				clearInterval(timer);
				res.end();
			}
		}, 70);
	}
});
server.listen(Number(port), "127.0.0.1", () => fs.writeFileSync(ready, "")); // listening now
setTimeout(() => process.exit(0), 120000); // never outlives a broken test
EOF
# start_fake KIND: one of servers.js's servers on a free port, once it listens.
start_fake() {
	port=$(free_port)
	rm -f "$scratch/ready"
	node "$scratch/servers.js" "$1" "$port" "$scratch/ready" &
	server_pid=$!
	for _ in $(seq 100); do
		[ -e "$scratch/ready" ] && return 0
		kill -0 "$server_pid" 2>/dev/null || fail "the $1 server died"
		sleep 0.1
	done
	fail "the $1 server never listened"
}
for kind in silent garbage; do
	start_fake "$kind"
	analyze_with "http://127.0.0.1:$port" --debuginfod-timeout 2
	expect_symtab_names "$kind"
	case $kind in
	silent)
		within "$(cat "$scratch/seconds")" 2 3 ||
			fail "silent server: $(cat "$scratch/seconds") s, want about the 2 s timeout once"
		grep -q "no answer within 2 s" "$scratch/err" || fail "silent: $(cat "$scratch/err")" ;;
	garbage)
		grep -q "not its debug info" "$scratch/err" || fail "garbage: $(cat "$scratch/err")" ;;
	esac
	echo "$kind server: ok ($(cat "$scratch/seconds") s): $(cat "$scratch/err")"
	stop_server
done
# 5. A download of more than a second draws a progress line on a terminal
# (script gives analyze one), and none when stderr is not a terminal.
start_fake trickle
rm -rf "$scratch/cache"
DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$scratch/cache \
	script -qec "'$bin/analyze' tree --debuginfod-timeout 20 '$scratch/t.zst' >'$scratch/tree'" \
	"$scratch/typescript" >/dev/null 2>&1 || fail "analyze under script failed: $(cat "$scratch/typescript")"
grep -q "analyze: debuginfod: debug info of app: [0-9.]* of 1.0 MiB" "$scratch/typescript" ||
	fail "no progress line on the terminal: $(cat -v "$scratch/typescript")"
grep -q "not its debug info" "$scratch/typescript" || fail "trickle: the garbage was not refused"
expect_symtab_names trickle
analyze_with "http://127.0.0.1:$port" --debuginfod-timeout 20
grep -q "MiB" "$scratch/err" && fail "a progress line without a terminal: $(cat "$scratch/err")"
stop_server
echo "debuginfod: ok"
