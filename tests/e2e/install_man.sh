# Every option a program's --help lists appears in its manual page, and the
# reverse: the pages are generated from --help (doc/gen-man.sh), and this
# checks the generator read every option line. Also: each page renders with
# man(1) without warnings.
# usage: install_man.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
need man man-db
man_dir=$build/man
help_options() { # --help text on stdin -> options, one per line
	sed -n 's/^ \{1,6\}\(-[^ ].*\)/\1/p' | sed 's/   .*//; s/, / /g' | tr ' ' '\n' | grep '^-' | sort -u
}
page_options() { # roff page -> options of its .TP/.B entries
	awk '/^\.TP$/ { getline; if ($1 == ".B") { $1 = ""; print } }' "$1" |
		sed 's/\\-/-/g; s/^ //; s/, / /g' | tr ' ' '\n' | grep '^-' | sort -u
}
check() { # check PAGE COMMAND...
	page=$man_dir/$1.1
	shift
	[ -f "$page" ] || fail "no manual page $page"
	"$@" --help | help_options >"$scratch/help"
	page_options "$page" >"$scratch/page"
	[ -s "$scratch/help" ] || fail "$*: --help lists no options"
	missing=$(comm -23 "$scratch/help" "$scratch/page")
	extra=$(comm -13 "$scratch/help" "$scratch/page")
	[ -z "$missing" ] || fail "$page lacks options of '$* --help': $missing"
	[ -z "$extra" ] || fail "$page has options '$* --help' does not: $extra"
	warnings=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
	[ -z "$warnings" ] || fail "man warns about $page: $warnings"
	echo "$page: $(wc -l <"$scratch/help") options, as in --help"
}
check collect "$bin/collect"
commands=$("$bin/analyze" --help | awk '/^commands:$/ { on = 1; next } on && /^  [a-z]/ { print $1 } /^$/ { on = 0 }')
[ -n "$commands" ] || fail "analyze --help lists no commands"
for c in $commands; do
	check "analyze-$c" "$bin/analyze" "$c"
done
grep -q '^\.SH COMMANDS' "$man_dir/analyze.1" || fail "analyze.1 has no COMMANDS section"
for c in $commands; do
	grep -q "^\.B $c\$" "$man_dir/analyze.1" || fail "analyze.1 does not list command $c"
done
