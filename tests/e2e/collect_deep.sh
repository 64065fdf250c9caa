# Deep stacks (issue 9): a 5000-deep recursion, in cpu and in wall mode, at
# the default --max-frames (256) and at the most (1024): no crash, every
# stack cut at the root side (the leaf, bottom(), is kept) and marked with a
# [truncated] frame at its root, and analyze info counts them.
. "$(dirname "$0")/lib.sh"
for run in "cpu 256" "wall 256" "cpu 1024"; do
	mode=${run% *}
	frames=${run#* }
	"$bin/collect" -q -m "$mode" --max-frames "$frames" -o "$scratch/t.zst" "$workloads/report_recursive" 5000 \
		2>"$scratch/err" || fail "$run: collect exited $?: $(cat "$scratch/err")"
	json=$(info_json "$scratch/t.zst")
	samples=$(echo "$json" | jq '.samples')
	cut=$(echo "$json" | jq '.stacks.truncated_samples')
	echo "$mode, --max-frames $frames: $cut of $samples samples on cut stacks"
	[ "$(echo "$json" | jq '.stacks.truncated')" -gt 0 ] || fail "$run: no stack counted as cut"
	within "$cut" "$samples" "$(awk -v s="$samples" 'BEGIN { print s * 0.05 }')" ||
		fail "$run: $cut of $samples samples are on cut stacks (the recursion is in nearly all)"
	"$bin/analyze" info "$scratch/t.zst" | grep -q "cut at max frames, in $cut samples" || fail "$run: info does not count them"
	"$bin/analyze" tree "$scratch/t.zst" >"$scratch/tree" || fail "$run: analyze tree failed"
	# The [truncated] frame is a root (no indentation after the bar), with the recursion under it.
	grep -q '╎[0-9 ]*?:?; \[truncated\]$' "$scratch/tree" || fail "$run: no [truncated] root: $(head -20 "$scratch/tree")"
	"$bin/analyze" flat "$scratch/t.zst" >"$scratch/flat"
	awk '$NF == "bottom" && $3 > 0' "$scratch/flat" | grep -q . || fail "$run: the leaf bottom() lost its samples"
	depth=$("$bin/analyze" export --format folded "$scratch/t.zst" | awk -F';' '/\[truncated\]/ { if (NF > m) m = NF } END { print m + 0 }')
	# (+ [truncated], and off CPU the system call the thread waits in, kept with system frames hidden)
	[ "$depth" -le $((frames + 2)) ] && [ "$depth" -ge $((frames - 8)) ] ||
		fail "$run: cut stacks are $depth frames deep, want about $frames and a [truncated]"
done
echo "deep stacks: ok"
