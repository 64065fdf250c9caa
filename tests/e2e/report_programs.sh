# Many programs in one trace (a build: cc1, as, ld, sh...), on a shell
# pipeline of two workloads, collect_busy (busy_loop) and collect_procs
# (sink_work), each with its main and burn_cpu: every report selects by
# program (--comm), module (--module) and function (--focus, --ignore REGEX);
# flat names the module of each function, the exports keep programs apart,
# analyze info is one line per command and per module, and warnings are said
# once (-q: none). Every check runs and each failure is said, then the
# script fails.
. "$(dirname "$0")/lib.sh"
a=$bin/analyze
t=$scratch/t.zst
"$bin/collect" -q -o "$t" sh -c "'$workloads/collect_busy' 0.2 | '$workloads/collect_procs' sink 0.15" \
	>/dev/null 2>"$scratch/err" || fail "collect exited $?: $(cat "$scratch/err")"
failed=0
check() { # check WHAT COMMAND...: COMMAND must succeed
	what=$1
	shift
	"$@" || { echo "FAIL: $what" >&2; failed=$((failed + 1)); }
}
has() { grep -q -- "$1" "$2"; }
hasnt() { ! grep -q -- "$1" "$2"; }

# 1. --comm, --module, --focus, --ignore in every report; a bad regex is a usage error.
"$a" flat --comm collect_busy "$t" >"$scratch/comm" 2>&1 || true
check "flat --comm collect_busy keeps busy_loop, drops sink_work: $(cat "$scratch/comm")" \
	eval 'has busy_loop "$scratch/comm" && hasnt sink_work "$scratch/comm"'
"$a" flat --comm collect_procs --comm /no/such/program "$t" >"$scratch/comm2" 2>&1 || true
check "flat --comm collect_procs keeps sink_work only: $(cat "$scratch/comm2")" \
	eval 'has sink_work "$scratch/comm2" && hasnt busy_loop "$scratch/comm2"'
"$a" flat --module collect_busy "$t" >"$scratch/module" 2>&1 || true
check "flat --module collect_busy: $(cat "$scratch/module")" \
	eval 'has busy_loop "$scratch/module" && hasnt sink_work "$scratch/module"'
"$a" export --format folded --focus '^sink_w' -o "$scratch/focus" "$t" >/dev/null 2>&1 || true
check "export --focus ^sink_w keeps sink_work's stacks only: $(cat "$scratch/focus" 2>&1)" \
	eval 'has sink_work "$scratch/focus" && hasnt busy_loop "$scratch/focus"'
"$a" tree --ignore 'busy_lo+p' "$t" >"$scratch/ignore" 2>&1 || true
check "tree --ignore busy_lo+p drops busy_loop's stacks: $(cat "$scratch/ignore")" \
	eval 'has sink_work "$scratch/ignore" && hasnt busy_loop "$scratch/ignore"'
for cmd in "info" "tree" "flat" "export --format folded" "source" "plot top -o $scratch/p.txt" "diff $t"; do
	check "analyze $cmd --comm --module --focus --ignore" \
		"$a" $cmd --comm collect_busy --module collect_busy --focus main --ignore xyz "$t" \
		>/dev/null 2>"$scratch/err.opts"
done
set +e
"$a" flat --focus 'sink(' "$t" >/dev/null 2>"$scratch/err.re"
rc=$?
set -e
check "a bad --focus regex: exit $rc, want 2, one line: $(cat "$scratch/err.re")" \
	eval '[ $rc -eq 2 ] && [ "$(wc -l <"$scratch/err.re")" -eq 1 ] && has "sink(" "$scratch/err.re"'

# 2. flat names each function's module (two burn_cpu, of two programs); TSV: a module field, last.
"$a" flat "$t" >"$scratch/flat" 2>/dev/null || true
check "flat names modules: $(cat "$scratch/flat")" \
	eval 'has "busy_loop (collect_busy)" "$scratch/flat" && has "sink_work (collect_procs)" "$scratch/flat"'
"$a" flat --format tsv "$t" >"$scratch/tsv" 2>/dev/null || true
check "TSV: module is the last field: $(head -n 3 "$scratch/tsv")" \
	eval 'head -n 1 "$scratch/tsv" | grep -q "	inlined	samples	samples_self	cpu	cpu_self	module\$" &&
	awk -F"\t" "\$5 == \"sink_work\" && \$NF == \"collect_procs\"" "$scratch/tsv" | grep -q .'
"$a" flat --comm collect_busy --format tsv "$t" 2>/dev/null | head -n 1 >"$scratch/tsv1" || true
check "TSV of one program: no module field: $(cat "$scratch/tsv1")" eval 'hasnt module "$scratch/tsv1"'

# 3. Exports keep programs apart: folded stacks rooted at the program, pprof's command label.
"$a" export --format folded -o "$scratch/folded" "$t" 2>/dev/null || true
check "folded: each program's main under its own root: $(cat "$scratch/folded")" \
	eval 'grep -q "^collect_busy;main;busy_loop" "$scratch/folded" &&
	grep -q "^collect_procs;main;sink_work" "$scratch/folded"'
"$a" export --format folded --comm collect_busy -o "$scratch/folded1" "$t" 2>/dev/null || true
check "folded of one process: no root: $(cat "$scratch/folded1")" eval 'grep -q "^main;busy_loop" "$scratch/folded1"'
need go golang-go
"$a" export --format pprof -o "$scratch/p.pb.gz" "$t" 2>/dev/null || true
HOME=$scratch go tool pprof -tags "$scratch/p.pb.gz" >"$scratch/tags" 2>&1 || true
check "pprof: command labels: $(cat "$scratch/tags")" \
	eval 'grep -q "^ *command:" "$scratch/tags" && grep -q "): collect_procs\$" "$scratch/tags" &&
	grep -q "^ *pid:" "$scratch/tags"'

# 5. info: one line per command and per distinct module; every row behind --processes, --modules.
"$a" info "$t" >"$scratch/info" 2>/dev/null || true
check "info: one line per command: $(cat "$scratch/info")" \
	eval 'grep -Eq "^ +1 +1 +[0-9]+ +.* collect_procs\$" "$scratch/info" && hasnt "^Processes:" "$scratch/info"'
check "info: libc once, in 3 processes: $(cat "$scratch/info")" \
	eval '[ "$(grep -c "/libc\.so" "$scratch/info")" -eq 1 ] && grep -q "3 processes .*/libc\.so" "$scratch/info"'
"$a" info --processes --modules "$t" >"$scratch/info.all" 2>/dev/null || true
check "info --processes --modules: every row: $(cat "$scratch/info.all")" \
	eval 'has "^Processes:" "$scratch/info.all" && [ "$(grep -c "/libc\.so" "$scratch/info.all")" -eq 3 ]'
check "info --format json: every module still" \
	eval '[ "$(info_json "$t" | jq "[.modules[] | select(.path | endswith(\"libc.so.6\"))] | length")" -eq 3 ]'

# 6. A warning is said once per run, not once per process mapping the module; -q says none.
# dash (no debug info, no symbols) busy in three processes, so each has samples in it: the
# pipeline's few dash samples can be none.
spin='i=0; while [ $i -lt 40000 ]; do i=$((i + 1)); done'
"$bin/collect" -q -o "$scratch/sh.zst" sh -c "$spin; sh -c '$spin'; sh -c '$spin'" >/dev/null 2>&1 ||
	fail "collect of three shells failed"
t=$scratch/sh.zst
"$a" flat "$t" >/dev/null 2>"$scratch/warn" || true
check "each warning once: $(cat "$scratch/warn")" eval '[ -z "$(sort "$scratch/warn" | uniq -d)" ] && [ -s "$scratch/warn" ]'
"$a" flat -q "$t" >/dev/null 2>"$scratch/warn.q" || true
check "-q: no warnings: $(cat "$scratch/warn.q")" eval '[ ! -s "$scratch/warn.q" ]'

[ $failed -eq 0 ] || fail "$failed checks failed"
echo "many programs: ok"
