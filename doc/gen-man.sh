#!/bin/sh
# gen-man.sh - write the manual pages from the programs' own --help, so the
# two never disagree: collect.1, analyze.1 and analyze-CMD.1 for every command
# `analyze --help` lists (doc/help2man.awk does the layout). What --help does
# not say (examples, files, environment, see also) comes from doc/man/NAME.in,
# roff appended to the generated page when it exists. NAME lines: a command's
# summary in `analyze --help`, else the description's first sentence.
# usage: gen-man.sh COLLECT ANALYZE SOURCE_DIR OUT_DIR VERSION
set -eu
collect=$1 analyze=$2 src=$3 out=$4 version=$5
mkdir -p "$out"
rm -f "$out"/*.1

page() { # page NAME SUMMARY COMMAND...: --help of COMMAND into NAME.1 (SUMMARY: its NAME line, "" for help2man.awk's)
	name=$1 summary=$2
	shift 2
	"$@" --help >"$out/$name.help"
	awk -v name="$name" -v version="$version" -v summary="$summary" -f "$src/help2man.awk" "$out/$name.help" >"$out/$name.1"
	if [ -f "$src/man/$name.in" ]; then
		cat "$src/man/$name.in" >>"$out/$name.1"
	else
		printf '.SH SEE ALSO\n\\fBanalyze\\fR(1), \\fBcollect\\fR(1)\n' >>"$out/$name.1"
	fi
	rm -f "$out/$name.help"
}

page collect "" "$collect"
page analyze "" "$analyze"
# A command's page is named by its one-line summary in `analyze --help`.
"$analyze" --help | awk '/^commands:$/ { on = 1; next } on && /^  [a-z]/ { print } /^$/ { on = 0 }' |
	while read -r command summary; do
		page "analyze-$command" "$summary" "$analyze" "$command"
	done
