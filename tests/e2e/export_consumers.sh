#!/bin/sh
# export_consumers.sh - end-to-end tests of `analyze export` with the real
# consumers: a trace of tests/e2e/workloads/export_threads.cpp (three named
# threads; an inlined function, a template, recursion) is exported to each
# format, read back by the tool that format is for, and its numbers compared
# with `analyze flat` on the same trace: every function's self and
# cumulative count must match exactly, with and without -C.
#
# usage: export_consumers.sh STEP BUILD_DIR
#   STEP  collect | pprof | speedscope | folded | stable | output; collect runs first
#         (a ctest fixture) and the others read its trace from
#         BUILD_DIR/tests/export-e2e; speedscope needs export_setup_node.sh
#         to have installed the npm packages into BUILD_DIR/tests/export-node.
# Exit 0 pass, 1 fail (a consumer not installed too, naming its Debian package).
set -eu
step=${1:?usage: export_consumers.sh STEP BUILD_DIR}
build=$(cd "${2:?usage: export_consumers.sh STEP BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
work=$build/tests/export-e2e
node_dir=$build/tests/export-node
trace=$work/threads.trace.zst
analyze=$build/bin/analyze

fail() {
	echo "FAIL ($step): $*" >&2
	exit 1
}

# need COMMAND PACKAGE: fail, naming the Debian package, when COMMAND is not installed.
need() {
	command -v "$1" >/dev/null 2>&1 ||
		fail "$1 is not installed: the Debian package $2 has it (scripts/debian-packages.txt)"
}

# Per-function "name<TAB>self<TAB>cum<TAB>cum of its largest row" rows of
# `analyze flat` (its TSV: count, self, file, line, function...), names summed:
# flat keeps same-named functions of different files apart, consumers merge
# them by name. A stack holding two of them (ld.so's inlined calloc under
# libc's) counts once in the consumer's cum and once per row in the sum, so
# the consumer's cum lies between the largest row's and the sum
# (compare_functions).
flat_functions() {
	"$analyze" flat --format tsv "$@" "$trace" 2>/dev/null |
		awk -F'\t' 'NR > 1 { printf "%s\t%s\t%s\n", $5, $2, $1 }' | sum_by_name_keep_max
}

sum_by_name_keep_max() {
	awk -F'\t' '{ self[$1] += $2; cum[$1] += $3; if ($3 > max[$1]) max[$1] = $3 }
		END { for (n in self) printf "%s\t%.0f\t%.0f\t%.0f\n", n, self[n], cum[n], max[n] }' |
		LC_ALL=C sort
}

sum_by_name() {
	awk -F'\t' '{ self[$1] += $2; cum[$1] += $3 }
		END { for (n in self) printf "%s\t%.0f\t%.0f\n", n, self[n], cum[n] }' | LC_ALL=C sort
}

# Same per source line (flat --lines), keyed as folded --lines names frames:
# "function:line", or "function" when the line is unknown (0 in the TSV).
flat_lines() {
	"$analyze" flat --format tsv --lines "$@" "$trace" 2>/dev/null |
		awk -F'\t' 'NR > 1 { printf "%s%s\t%s\t%s\n", $5, ($4 == 0 ? "" : ":" $4), $2, $1 }' |
		sum_by_name_keep_max
}

# "name<TAB>self<TAB>cum" from folded text on stdin (count after the last
# space, frames split at ';', "_[i]" marks dropped, cum once per line).
folded_functions() {
	awk '{
		count = $NF; stack = substr($0, 1, length($0) - length(count) - 1)
		if (count !~ /^[0-9]+$/ || stack == "") { print "bad line: " $0 > "/dev/stderr"; exit 1 }
		n = split(stack, f, ";")
		for (i = 1; i <= n; i++) sub(/_\[i\]$/, "", f[i])
		self[f[n]] += count
		delete seen
		for (i = 1; i <= n; i++) if (!(f[i] in seen)) { seen[f[i]] = 1; cum[f[i]] += count }
	} END { for (k in cum) printf "%s\t%.0f\t%.0f\n", k, self[k], cum[k] }' | sum_by_name
}

# Total weight `analyze flat` counts: every sample is one row's self, so
# the self column of its TSV sums to the total.
flat_total() {
	"$analyze" flat --format tsv "$@" "$trace" 2>/dev/null |
		awk -F'\t' 'NR > 1 { s += $2 } END { printf "%.0f\n", s }'
}

# tid<TAB>name of every sampled thread, from analyze info's JSON.
trace_threads() {
	"$analyze" info --format json "$trace" 2>/dev/null |
		jq -r '.threads[] | select(.samples > 0) | "\(.tid)\t\(.name)"' | LC_ALL=C sort
}

compare() { # what expected actual
	[ -s "$2" ] && [ -s "$3" ] || fail "$1: nothing to compare ($2, $3)"
	if ! diff -u "$2" "$3" >"$work/$1.diff"; then
		cat "$work/$1.diff" >&2
		fail "$1: $(basename "$3") differs from analyze flat (diff above)"
	fi
}

# compare_functions WHAT FLAT ACTUAL: the same names and self counts; each
# cum equal to flat's, or, for a name of several flat rows, between the
# largest row's cum and their sum (flat_functions).
compare_functions() {
	[ -s "$2" ] && [ -s "$3" ] || fail "$1: nothing to compare ($2, $3)"
	cut -f1,2 "$2" >"$work/$1.names.flat"
	cut -f1,2 "$3" >"$work/$1.names.actual"
	compare "$1" "$work/$1.names.flat" "$work/$1.names.actual"
	LC_ALL=C join -t "$(printf '\t')" "$2" "$3" >"$work/$1.joined" || fail "$1: join failed"
	[ "$(wc -l <"$work/$1.joined")" -eq "$(wc -l <"$2")" ] || fail "$1: not every name joined"
	awk -F'\t' '$6 > $3 || $6 < $4 { print "cum of " $1 ": " $6 ", flat " $3 " (largest row " $4 ")"; bad = 1 }
		END { exit bad }' "$work/$1.joined" >&2 || fail "$1: $(basename "$3") cum differs from analyze flat (above)"
}

case $step in
collect)
	mkdir -p "$work"
	rm -f "$trace"
	"$build/bin/collect" -o "$trace" "$build/tests/workloads/export_threads" 0.6 >/dev/null 2>&1 ||
		fail "collect on export_threads failed"
	[ "$(trace_threads | wc -l)" -eq 3 ] || fail "expected 3 sampled threads: $(trace_threads)"
	;;

pprof)
	need go golang-go
	# go tool pprof keeps settings under $HOME; give it a private one.
	export HOME="$work/home"
	mkdir -p "$HOME"
	for opt in "" -C; do
		name=pprof${opt}
		"$analyze" export --format pprof $opt -o "$work/$name.pb.gz" "$trace" 2>/dev/null
		flat_functions $opt >"$work/$name.flat"
		# -nodefraction=0 etc.: -top drops small nodes by default.
		go tool pprof -top -sample_index=samples -nodecount=1000000 -nodefraction=0 \
			-edgefraction=0 "$work/$name.pb.gz" >"$work/$name.top" 2>"$work/$name.top.err" ||
			fail "go tool pprof -top failed: $(cat "$work/$name.top.err")"
		[ ! -s "$work/$name.top.err" ] || fail "go tool pprof -top warned: $(cat "$work/$name.top.err")"
		sed -nE 's/^ *([0-9]+) +[0-9.]+% +[0-9.]+% +([0-9]+) +[0-9.]+% +(.*)$/\3\t\1\t\2/p' \
			"$work/$name.top" | sed -E 's/ \((partial-)?inline\)\t/\t/' | sum_by_name >"$work/$name.pprof"
		[ -s "$work/$name.pprof" ] || fail "no rows parsed from go tool pprof -top"
		compare_functions "$name" "$work/$name.flat" "$work/$name.pprof"
		total=$(sed -nE 's/.*Total samples = ([0-9]+) *$/\1/p' "$work/$name.top")
		[ "$total" = "$(flat_total $opt)" ] || fail "pprof total $total, flat $(flat_total $opt)"
		echo "pprof$opt: $(wc -l <"$work/$name.pprof") functions, self and cum as analyze flat's; total $total"
	done
	# -traces: readable without warnings; every sample labelled with its
	# thread's name and tid; per-thread sums equal flat --tid.
	go tool pprof -traces -sample_index=samples "$work/pprof.pb.gz" >"$work/traces.txt" 2>"$work/traces.err" ||
		fail "go tool pprof -traces failed: $(cat "$work/traces.err")"
	[ ! -s "$work/traces.err" ] || fail "go tool pprof -traces warned: $(cat "$work/traces.err")"
	awk '/^-+\+-+$/ { if (n) print tid "\t" thread "\t" value; n = 0; tid = thread = "?"; next }
	     $1 == "thread:" { thread = $2; next }
	     $1 == "tid:" { tid = $2; next }
	     tid != "" && !n && $1 ~ /^[0-9]+$/ { value = $1; n = 1 }' "$work/traces.txt" |
		awk -F'\t' '{ sum[$1 "\t" $2] += $3 } END { for (k in sum) print k "\t" sum[k] }' |
		LC_ALL=C sort >"$work/traces.threads"
	trace_threads | while IFS="$(printf '\t')" read -r tid tname; do
		echo "$tid	$tname	$(flat_total --tid "$tid")"
	done >"$work/flat.threads"
	compare traces "$work/flat.threads" "$work/traces.threads"
	echo "pprof -traces: thread and tid labels on every sample, per-thread totals equal flat --tid"
	;;

speedscope)
	need node nodejs
	[ -f "$node_dir/node_modules/speedscope/dist/release/file-format-schema.json" ] ||
		fail "speedscope package not installed in $node_dir (export_setup_node.sh)"
	for opt in "" -C; do
		name=speedscope${opt}
		"$analyze" export --format speedscope $opt -o "$work/$name.json" "$trace" 2>/dev/null
		node "$here/node/validate_speedscope.js" "$node_dir/node_modules" "$work/$name.json" \
			>"$work/$name.summary" || fail "speedscope export does not validate"
		# Weights are nanoseconds: divide by the interval, which must divide them.
		total=$(flat_total $opt)
		ns=$(awk -F'\t' '$1 == "profile" { s += $3 } END { printf "%.0f", s }' "$work/$name.summary")
		[ $((ns % total)) -eq 0 ] || fail "speedscope total $ns ns is not a multiple of $total samples"
		interval=$((ns / total))
		awk -F'\t' -v i="$interval" '$1 == "function" {
			if ($3 % i || $4 % i) { print "bad " $0; exit 1 }
			printf "%s\t%.0f\t%.0f\n", $2, $3 / i, $4 / i }' "$work/$name.summary" |
			sum_by_name >"$work/$name.speedscope"
		flat_functions $opt >"$work/$name.flat"
		compare_functions "$name" "$work/$name.flat" "$work/$name.speedscope"
		echo "speedscope$opt: schema-valid, $(wc -l <"$work/$name.speedscope") functions as analyze flat's"
	done
	# One profile per sampled thread, named "tid (name)", heaviest first,
	# each weighing what flat --tid says.
	awk -F'\t' '$1 == "profile" { print $2 "\t" $3 }' "$work/speedscope.summary" >"$work/profiles.txt"
	trace_threads | while IFS="$(printf '\t')" read -r tid tname; do
		echo "$tid ($tname)	$(($(flat_total --tid "$tid") * interval))"
	done | LC_ALL=C sort >"$work/flat.profiles"
	LC_ALL=C sort "$work/profiles.txt" >"$work/profiles.sorted"
	compare profiles "$work/flat.profiles" "$work/profiles.sorted"
	sort -s -t"$(printf '\t')" -k2,2nr "$work/profiles.txt" | cmp -s - "$work/profiles.txt" ||
		fail "profiles are not sorted by weight: $(cat "$work/profiles.txt")"
	echo "speedscope: one profile per thread ($(wc -l <"$work/profiles.txt")), sorted by weight, totals equal flat --tid"
	;;

folded)
	for opt in "" -C; do
		name=folded${opt}
		# --annotate-inline marks inlined frames "_[i]"; strip it to compare names.
		"$analyze" export --format folded --annotate-inline $opt -o "$work/$name.txt" "$trace" 2>/dev/null
		grep -q '_\[i\]' "$work/$name.txt" || fail "no inlined frame marked _[i] in $name.txt"
		LC_ALL=C sort -c "$work/$name.txt" || fail "$name.txt is not sorted"
		folded_functions <"$work/$name.txt" >"$work/$name.folded"
		flat_functions $opt >"$work/$name.flat"
		compare_functions "$name" "$work/$name.flat" "$work/$name.folded"
		total=$(awk '{ s += $NF } END { printf "%.0f", s }' "$work/$name.txt")
		[ "$total" = "$(flat_total $opt)" ] || fail "folded sums to $total, flat says $(flat_total $opt)"
		echo "folded$opt: $(wc -l <"$work/$name.txt") stacks summing to $total; per-function as analyze flat's"
	done
	# --lines: frames "function:line", per line equal to flat --lines.
	"$analyze" export --format folded --lines -o "$work/lines.txt" "$trace" 2>/dev/null
	folded_functions <"$work/lines.txt" >"$work/lines.folded"
	flat_lines >"$work/lines.flat"
	compare_functions lines "$work/lines.flat" "$work/lines.folded"
	echo "folded --lines: $(wc -l <"$work/lines.folded") source lines equal to analyze flat --lines"
	# --thread-roots: each thread's lines sum to its flat --tid total.
	"$analyze" export --format folded --thread-roots -o "$work/roots.txt" "$trace" 2>/dev/null
	awk '{ root = $0; sub(/;.*/, "", root); sub(/ [0-9]+$/, "", root); sum[root] += $NF }
	     END { for (r in sum) print r "\t" sum[r] }' "$work/roots.txt" | LC_ALL=C sort >"$work/roots.sums"
	trace_threads | while IFS="$(printf '\t')" read -r tid tname; do
		echo "$tid ($tname)	$(flat_total --tid "$tid")"
	done | LC_ALL=C sort >"$work/flat.roots"
	compare roots "$work/flat.roots" "$work/roots.sums"
	echo "folded --thread-roots: per-thread sums equal flat --tid"
	;;

stable)
	# Same trace, same options: same bytes, to a file or to a pipe.
	for format in folded speedscope pprof; do
		"$analyze" export --format "$format" --lines -o "$work/a.$format" "$trace" 2>/dev/null
		"$analyze" export --format "$format" --lines -o "$work/b.$format" "$trace" 2>/dev/null
		"$analyze" export --format "$format" --lines "$trace" 2>/dev/null | cat >"$work/c.$format"
		cmp -s "$work/a.$format" "$work/b.$format" || fail "$format differs between two runs"
		cmp -s "$work/a.$format" "$work/c.$format" || fail "$format differs between -o FILE and stdout"
	done
	echo "folded, speedscope and pprof are byte-identical across runs"
	;;

output)
	# -o to a FIFO writes through it (a rename would replace it); a write
	# error or an unreadable trace exits 1 and leaves no file behind.
	rm -f "$work/fifo" "$work/fifo.out" "$work/nofile.txt"
	mkfifo "$work/fifo"
	cat "$work/fifo" >"$work/fifo.out" &
	"$analyze" export --format folded -o "$work/fifo" "$trace" 2>/dev/null || fail "export to a FIFO failed"
	wait
	[ -p "$work/fifo" ] || fail "the FIFO was replaced"
	"$analyze" export --format folded "$trace" 2>/dev/null | cmp -s - "$work/fifo.out" ||
		fail "what went through the FIFO differs from stdout"
	status=0
	"$analyze" export --format folded "$trace" >/dev/full 2>"$work/full.err" || status=$?
	[ $status -eq 1 ] || fail "writing to a full device: exit $status, not 1"
	grep -q "No space left" "$work/full.err" || fail "no error message for a full device"
	status=0
	"$analyze" export --format pprof -o "$work/nofile.txt" "$work/missing.trace.zst" 2>/dev/null || status=$?
	[ $status -eq 1 ] || fail "missing trace: exit $status, not 1"
	[ ! -e "$work/nofile.txt" ] || fail "a failed export left $work/nofile.txt"
	ls "$work" | grep -q 'nofile.txt\.' && fail "a failed export left a temporary file"
	status=0
	"$analyze" export "$trace" 2>/dev/null || status=$?
	[ $status -eq 2 ] || fail "no --format: exit $status, not 2"
	echo "output: FIFO written through, write errors and bad input exit 1, usage errors 2"
	;;

*)
	fail "unknown step '$step'"
	;;
esac
