#!/bin/sh
# gen-man.sh - write the manual pages from the programs' own --help, so the
# two never disagree: collect.1, analyze.1 and analyze-CMD.1 for every command
# `analyze --help` lists (doc/help2man.awk does the layout). What --help does
# not say (examples, files, environment, see also) comes from doc/man/NAME.in,
# roff appended to the generated page when it exists.
# usage: gen-man.sh COLLECT ANALYZE SOURCE_DIR OUT_DIR VERSION
set -eu
collect=$1 analyze=$2 src=$3 out=$4 version=$5
mkdir -p "$out"
rm -f "$out"/*.1

page() { # page NAME COMMAND...: --help of COMMAND into NAME.1
	name=$1
	shift
	"$@" --help >"$out/$name.help"
	awk -v name="$name" -v version="$version" -f "$src/help2man.awk" "$out/$name.help" >"$out/$name.1"
	if [ -f "$src/man/$name.in" ]; then
		cat "$src/man/$name.in" >>"$out/$name.1"
	else
		printf '.SH SEE ALSO\n\\fBanalyze\\fR(1), \\fBcollect\\fR(1)\n' >>"$out/$name.1"
	fi
	rm -f "$out/$name.help"
}

page collect "$collect"
page analyze "$analyze"
"$analyze" --help | awk '/^commands:$/ { on = 1; next } on && /^  [a-z]/ { print $1 } /^$/ { on = 0 }' |
	while read -r command; do
		page "analyze-$command" "$analyze" "$command"
	done
