# ipscope.bash - bash completion for collect and analyze (installed as
# share/bash-completion/completions/{collect,analyze}). Commands and options
# are read from the programs' own --help when completing, so they are never
# out of date; option values that --help describes in prose are listed here.

# Options (-x and --long) of the option lines of "$@ --help".
_ipscope_help_options()
{
	"$@" --help 2>/dev/null | sed -n 's/^ \{1,6\}\(-[^ ].*\)/\1/p' |
		sed 's/   .*//; s/, / /g' | tr ' ' '\n' | grep '^-' | sed 's/[=[].*//'
}

# Values of option $1 of program $2 (command $3 for analyze), one per line.
_ipscope_option_values()
{
	case $2:$3:$1 in
	analyze:export:--format | analyze:export:-f) echo folded speedscope pprof ;;
	analyze:diff:--format | analyze:diff:-f) echo text tsv folded pprof speedscope ;;
	analyze:diff:--confidence | analyze:plot:--confidence) echo 0.9 0.95 0.99 0.999 ;;
	analyze:plot:--top) echo 5 10 20 40 ;;
	analyze:source:--format) echo text tsv ;;
	analyze:*:--format | analyze:*:-f) echo text tsv json ;;
	analyze:*:--value) echo samples cpu wall alloc_space alloc_objects inuse_space inuse_objects peak_space \
		peak_objects temporary_space temporary_objects ;;
	analyze:*:--sortedby) echo filefuncline count self ;;
	analyze:*:--color) echo auto always never ;;
	analyze:*:--state) echo on-cpu off-cpu ;;
	collect:*:--mode | collect:*:-m) echo cpu wall ;;
	collect:*:--pid | collect:*:-p) ps -u "$(id -u)" -o pid= 2>/dev/null ;;
	collect:*:--source) echo auto perf timer ;;
	collect:*:--interval | collect:*:-i) echo 100us 250us 500us 1ms 10ms ;;
	collect:*:--delay | collect:*:--duration) echo 500ms 1s 2s 10s 1m ;;
	collect:*:--allocs) echo 1 0.1 0.01 0.001 ;;
	collect:*:--alloc-bytes) echo 4KiB 64KiB 512KiB 1MiB ;;
	*) return 1 ;;
	esac
}

# Does option $1 of "$2 --help" take an argument (an upper-case word after it,
# or after its long form: "-o, --output FILE", or "--alloc-bytes=N"; not an
# optional one, "--allocs[=RATE]")?
_ipscope_takes_argument()
{
	local program=$1 option=$2
	shift 2
	"$program" "$@" --help 2>/dev/null | sed -n 's/^ \{1,6\}\(-[^ ].*\)/\1/p' | sed 's/   .*//' |
		grep -qE "(^|, )$option(, --[a-z-]+)?[ =][A-Z]"
}

_ipscope_analyze()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local program=${COMP_WORDS[0]} command=
	local i
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		-*) ;;
		*) command=${COMP_WORDS[i]}; break ;;
		esac
	done
	COMPREPLY=()
	if [ -z "$command" ]; then
		local commands
		commands=$("$program" --help 2>/dev/null |
			awk '/^commands:$/ { on = 1; next } on && /^  [a-z]/ { print $1 } /^$/ { on = 0 }')
		COMPREPLY=($(compgen -W "$commands --help --version" -- "$cur"))
		return 0
	fi
	local values
	if [[ $prev == -* ]] && values=$(_ipscope_option_values "$prev" analyze "$command"); then
		COMPREPLY=($(compgen -W "$values" -- "$cur"))
		return 0
	fi
	if [[ $prev == -* ]] && _ipscope_takes_argument "$program" "$prev" "$command"; then
		COMPREPLY=($(compgen -f -- "$cur"))
		return 0
	fi
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_ipscope_help_options "$program" "$command")" -- "$cur"))
		return 0
	fi
	# analyze plot KIND first, then traces.
	if [ "$command" = plot ]; then
		local words=0
		for ((i = i + 1; i < COMP_CWORD; i++)); do
			case ${COMP_WORDS[i]} in
			-*) ;;
			*) [[ ${COMP_WORDS[i-1]} == -* ]] && _ipscope_takes_argument "$program" "${COMP_WORDS[i-1]}" plot ||
				words=$((words + 1)) ;;
			esac
		done
		if [ "$words" -eq 0 ]; then
			COMPREPLY=($(compgen -W "timeline top diff heap rate" -- "$cur"))
			return 0
		fi
	fi
	# A trace: *.zst files first, any file or directory otherwise.
	COMPREPLY=($(compgen -f -X '!*.zst' -- "$cur") $(compgen -d -- "$cur"))
	[ ${#COMPREPLY[@]} -gt 0 ] || COMPREPLY=($(compgen -f -- "$cur"))
	return 0
}

_ipscope_collect()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local program=${COMP_WORDS[0]}
	local i
	# Past the program to run, its own completion takes over.
	for ((i = 1; i < COMP_CWORD; i++)); do
		local word=${COMP_WORDS[i]} before=${COMP_WORDS[i-1]}
		case $word in
		--) break ;;
		-* | =) continue ;;
		esac
		# --option=VALUE (split by bash at '=') or --option VALUE
		if [ "$before" = = ] || { [[ $before == -* ]] && _ipscope_takes_argument "$program" "$before"; }; then
			continue
		fi
		break
	done
	[ "${COMP_WORDS[i]}" = -- ] && i=$((i + 1))
	if [ "$i" -lt "$COMP_CWORD" ]; then
		if declare -F _command_offset >/dev/null; then
			_command_offset "$i"
		else
			COMPREPLY=($(compgen -f -- "$cur"))
		fi
		return 0
	fi
	COMPREPLY=()
	# --allocs=RATE: bash splits at '=' (COMP_WORDBREAKS), so the option is the word before it.
	if [ "$cur" = = ] && [[ $prev == --* ]]; then
		cur=
	elif [ "$prev" = = ] && [ "$COMP_CWORD" -ge 2 ]; then
		prev=${COMP_WORDS[COMP_CWORD-2]}
	fi
	local values
	if [[ $prev == -* ]] && values=$(_ipscope_option_values "$prev" collect ""); then
		COMPREPLY=($(compgen -W "$values" -- "$cur"))
		return 0
	fi
	if [[ $prev == -* ]] && _ipscope_takes_argument "$program" "$prev"; then
		COMPREPLY=($(compgen -f -- "$cur"))
		return 0
	fi
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_ipscope_help_options "$program")" -- "$cur"))
		return 0
	fi
	COMPREPLY=($(compgen -c -- "$cur") $(compgen -f -- "$cur"))
	return 0
}

complete -F _ipscope_analyze analyze
complete -F _ipscope_collect collect
