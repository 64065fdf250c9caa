# unit_interposed: interpose.h is the one list of the functions the agent
# interposes: the agent exports exactly those, and its own three (region
# control and its version). And the agent needs no libm: every process of a
# profiled tree loads what the agent needs, and libm alone was 0.37 ms of
# each one's start (alloc_choice.h has the logarithms the agent uses).
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
if readelf -d "$agent" | grep -q 'NEEDED.*\[libm\.so'; then
	echo "the agent links libm: $(nm -D --undefined-only "$agent" | grep -c .) undefined symbols, see which are libm's"
	exit 1
fi
echo "interposed: $(wc -l <"$scratch/listed") symbols, one list; no libm"
