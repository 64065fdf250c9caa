# unit_interposed: interpose.h is the one list of the functions the agent
# interposes: the agent exports exactly those, and its own three (region
# control and its version).
# usage: interposed.sh AGENT LISTER (LISTER: unit_interposed_list, printing the list)
agent=$1
lister=$2
scratch=$(mktemp -d) || exit 1
trap 'rm -rf "$scratch"' EXIT
nm -D --defined-only "$agent" | awk '{ print $3 }' | sort >"$scratch/exported" || exit 1
{ "$lister" && printf '%s\n' ipscope_agent_start ipscope_agent_stop ipscope_agent_version; } | sort >"$scratch/listed" ||
	exit 1
if ! cmp -s "$scratch/exported" "$scratch/listed"; then
	echo "the agent's exports (<) and interpose.h's list (>) differ:"
	diff "$scratch/exported" "$scratch/listed"
	exit 1
fi
echo "interposed: $(wc -l <"$scratch/listed") symbols, one list"
