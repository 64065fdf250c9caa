# The bash completion script, sourced in bash, completes subcommands, options
# (read from --help) and option values.
# usage: install_completion.sh BUILD_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
src=$2
cat >"$scratch/complete.bash" <<'SCRIPT'
. "$1/doc/completion/ipscope.bash"
PATH=$2:$PATH
complete_line() { # complete_line FUNCTION WORDS...: COMPREPLY of the last word
	local f=$1
	shift
	COMP_WORDS=("$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	"$f"
	echo "${COMPREPLY[*]}"
}
expect() { # expect WANT FUNCTION WORDS...
	local want=$1
	shift
	local got
	got=$(complete_line "$@")
	[ "$got" = "$want" ] || { echo "FAIL: '${*:2}' completed to '$got', expected '$want'" >&2; exit 1; }
	echo "'${*:2}' -> '$got'"
}
expect tree _ipscope_analyze analyze t
expect --noisefloor _ipscope_analyze analyze tree --noi
expect --value _ipscope_analyze analyze tree --val
expect "samples" _ipscope_analyze analyze tree --value s
expect "--sortedby" _ipscope_analyze analyze flat --sor
expect "folded speedscope pprof" _ipscope_analyze analyze export --format ""
expect "count" _ipscope_analyze analyze flat --sortedby c
expect "text tsv" _ipscope_analyze analyze diff --format t
expect "diff" _ipscope_analyze analyze d
expect "source" _ipscope_analyze analyze so
expect "text tsv" _ipscope_analyze analyze source --format ""
expect "--noisefloor" _ipscope_analyze analyze view --noi
expect "--leaks" _ipscope_analyze analyze view --le
expect "peak_space peak_objects" _ipscope_analyze analyze view --value p
expect "timeline top" _ipscope_analyze analyze plot t
expect "timeline top" _ipscope_analyze analyze plot -o x.png t
expect "--source" _ipscope_collect collect --sou
expect "perf" _ipscope_collect collect --source p
expect "cpu" _ipscope_collect collect -m c
expect "off-cpu" _ipscope_analyze analyze flat --state of
expect "--pid" _ipscope_analyze analyze tree --pi
expect "--no-follow" _ipscope_collect collect --no-f
expect "500ms" _ipscope_collect collect --delay 5
expect "--allocs --alloc-bytes" _ipscope_collect collect --allo
expect "0.1 0.01 0.001" _ipscope_collect collect --allocs = 0.
expect "1 0.1 0.01 0.001" _ipscope_collect collect --allocs =
expect "512KiB" _ipscope_collect collect --alloc-bytes = 5
expect "peak_space peak_objects" _ipscope_analyze analyze tree --value pe
SCRIPT
bash "$scratch/complete.bash" "$src" "$bin" || fail "completion"
