# help2man.awk - one manual page (roff, man(7) macros) from a program's
# --help text, laid out as ipscope's --help always is:
#
#   usage: PROG SYNOPSIS            (further "       PROG ..." usage lines)
#   <blank>
#   description paragraphs
#   <blank>
#     -o, --option ARG       text, continued on lines indented
#                            by 20 columns or more
#   commands:                (analyze --help only: "  NAME   summary" lines)
#   text after the options   (becomes NOTES)
#
# Variables: name (page name, e.g. analyze-tree), version, summary (the
# NAME line's text, e.g. the command's line in `analyze --help`; without
# it, the first sentence of the description, whole: a NAME line cut
# mid-sentence is what whatis and apropos would show).
function esc(s) {
	gsub(/\\/, "\\e", s)
	gsub(/-/, "\\-", s)
	return s
}
function text_line(s) {
	s = esc(s)
	if (s ~ /^[.\047]/)
		s = "\\&" s
	return s
}
# Leading spaces of s (awk intervals like / {1,6}/ are not portable: mawk).
function indent_of(s) {
	return match(s, /^ +/) ? RLENGTH : 0
}
function end_option() {
	if (opt != "") {
		options[++noptions] = opt SUBSEP desc
		opt = ""
		desc = ""
	}
}
# The description's first sentence, its lines joined: up to the first
# period that ends the paragraph or is followed by a space.
function first_sentence(    i, s) {
	s = ""
	for (i = 1; i <= nparagraphs && (s == "" || paragraphs[i] != ""); i++) {
		if (paragraphs[i] == "")
			continue
		s = s (s == "" ? "" : " ") paragraphs[i]
		if (match(s, /\. /))
			return substr(s, 1, RSTART)
	}
	return s
}
/^usage: / {
	s = $0
	sub(/^usage: /, "", s)
	synopsis[++nsynopsis] = s
	next
}
/^       [a-z]/ && nsynopsis && !body {
	s = $0
	sub(/^ +/, "", s)
	synopsis[++nsynopsis] = s
	next
}
{ body = 1 }
/^commands:$/ { in_commands = 1; next }
in_commands && /^  [a-z][a-z-]* / {
	s = $0
	sub(/^ +/, "", s)
	match(s, / +/)
	commands[++ncommands] = substr(s, 1, RSTART - 1) SUBSEP substr(s, RSTART + RLENGTH)
	next
}
indent_of($0) >= 1 && indent_of($0) <= 6 && substr($0, indent_of($0) + 1, 1) == "-" {
	end_option()
	s = $0
	sub(/^ +/, "", s)
	if (match(s, /  +/)) {
		opt = substr(s, 1, RSTART - 1)
		desc = substr(s, RSTART + RLENGTH)
	} else {
		opt = s
		desc = ""
	}
	seen_options = 1
	next
}
indent_of($0) >= 20 && opt != "" {
	s = $0
	sub(/^ +/, "", s)
	desc = desc (desc == "" ? "" : " ") s
	next
}
/^$/ {
	end_option()
	in_commands = 0
	if (seen_options || ncommands)
		notes[++nnotes] = ""
	else
		paragraphs[++nparagraphs] = ""
	next
}
{
	end_option()
	if (seen_options || ncommands)
		notes[++nnotes] = $0
	else
		paragraphs[++nparagraphs] = $0
}
END {
	end_option()
	printf ".TH %s 1 \"\" \"ipscope %s\" \"ipscope manual\"\n", toupper(esc(name)), version
	print ".SH NAME"
	if (summary == "")
		summary = first_sentence()
	if (summary == "")
		summary = "part of the ipscope profiler"
	sub(/\.$/, "", summary)
	print esc(name) " \\- " esc(summary)
	print ".SH SYNOPSIS"
	print ".nf"
	for (i = 1; i <= nsynopsis; i++)
		print text_line(synopsis[i])
	print ".fi"
	print ".SH DESCRIPTION"
	for (i = 1; i <= nparagraphs; i++)
		print paragraphs[i] == "" ? ".PP" : text_line(paragraphs[i])
	if (ncommands) {
		print ".SH COMMANDS"
		for (i = 1; i <= ncommands; i++) {
			split(commands[i], c, SUBSEP)
			print ".TP"
			print ".B " esc(c[1])
			print text_line(c[2]) "; see \\fB" esc(name) "\\-" esc(c[1]) "\\fR(1)."
		}
	}
	if (noptions) {
		print ".SH OPTIONS"
		for (i = 1; i <= noptions; i++) {
			split(options[i], o, SUBSEP)
			print ".TP"
			print ".B " esc(o[1])
			if (o[2] != "")
				print text_line(o[2])
		}
	}
	started = 0
	for (i = 1; i <= nnotes; i++) {
		if (notes[i] == "" && !started)
			continue
		if (!started) {
			print ".SH NOTES"
			started = 1
		}
		print notes[i] == "" ? ".PP" : text_line(notes[i])
	}
}
