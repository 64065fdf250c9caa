# Every option a program's --help lists appears in its manual page, and the
# reverse: the pages are generated from --help (doc/gen-man.sh), and this
# checks the generator read every option line. Also: each page renders with
# man(1) without warnings, and its NAME line is whole: a command's summary
# line in `analyze --help`, or the first sentence of the description, never
# a piece of one (what whatis and apropos show).
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
name_line() { # roff page -> its NAME text, after "NAME \-", roff escapes undone
	awk '/^\.SH NAME$/ { getline; print; exit }' "$1" | sed 's/^.* \\- //; s/\\-/-/g; s/\\e/\\/g'
}
first_sentence() { # --help text on stdin -> its description's first sentence, lines joined
	awk '/^usage: |^       [a-z]/ && !body { next } { body = 1 }
		$0 == "" { if (s != "") exit; next } { s = s (s == "" ? "" : " ") $0 }
		END { print s }' | sed 's/\. .*/./'
}
check_name() { # check_name PAGE EXPECTED: PAGE's NAME line says EXPECTED, whole
	got=$(name_line "$man_dir/$1.1")
	[ "$got" = "$2" ] || fail "$1.1: NAME line '$got' is not the whole '$2'"
}
check_sentence() { # check_sentence PAGE COMMAND...: NAME is the first sentence of --help's description
	name_page=$1
	shift
	sentence=$("$@" --help | first_sentence)
	case $sentence in
	*.) check_name "$name_page" "${sentence%.}" ;;
	*) fail "$*: --help's description does not begin with a sentence: $sentence" ;;
	esac
}
check collect "$bin/collect"
check_sentence collect "$bin/collect"
check_sentence analyze "$bin/analyze"
commands=$("$bin/analyze" --help | awk '/^commands:$/ { on = 1; next } on && /^  [a-z]/ { print $1 } /^$/ { on = 0 }')
[ -n "$commands" ] || fail "analyze --help lists no commands"
for c in $commands; do
	check "analyze-$c" "$bin/analyze" "$c"
	check_name "analyze-$c" "$("$bin/analyze" --help | sed -n "s/^  $c  *//p")"
done
grep -q '^\.SH COMMANDS' "$man_dir/analyze.1" || fail "analyze.1 has no COMMANDS section"
for c in $commands; do
	grep -q "^\.B $c\$" "$man_dir/analyze.1" || fail "analyze.1 does not list command $c"
done
