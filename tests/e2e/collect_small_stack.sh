# Code on small stacks (tests/e2e/workloads/collect_small_stack.c): a
# makecontext coroutine on an 8 KiB stack, and a handler on a 16 KiB
# sigaltstack, sampled at 10 kHz in CPU and wall mode. Under collect they
# must run as bare (they died of SIGSEGV: the handler's unwinding took about
# 10 KiB of the interrupted stack), and the sampling handler may use of the
# interrupted stack no more than the kernel's signal frame (AT_MINSIGSTKSZ,
# which any signal costs) and 512 bytes (own_stack.c: about 200). The
# handler's own use bare is about 6 KiB (its signal's frame included, 3.4
# KiB with AVX-512): on an 8 KiB sigaltstack any second signal landing at its
# deepest would overflow it, the profiler's or another, so the alternate
# stack is 16 KiB (one run of a fresh machine's test did land there).
. "$(dirname "$0")/lib.sh"
w=$workloads/collect_small_stack
for what in "coroutine 8" "altstack 16"; do
	bare=$("$w" $what) || fail "$what: fails bare"
	used_bare=$(echo "$bare" | sed -n 's/^stack_used=\([0-9]*\) .*/\1/p')
	frame=$(echo "$bare" | sed -n 's/.* minsigstksz=\([0-9]*\)$/\1/p')
	[ "${frame:-0}" -gt 0 ] || frame=2048
	for mode in cpu wall; do
		out=$("$bin/collect" -q -m $mode -i 100us -o "$scratch/t.zst" "$w" $what 2>"$scratch/err") ||
			fail "$what, $mode: collect exited $?: $(cat "$scratch/err")"
		used=$(echo "$out" | sed -n 's/^stack_used=\([0-9]*\) .*/\1/p')
		echo "$what, $mode: $used bytes of the stack used, $used_bare bare (signal frame: $frame)"
		[ -n "$used" ] && [ "$used" -le $((used_bare + frame + 512)) ] ||
			fail "$what, $mode: $used bytes used, bare $used_bare, allowed $((used_bare + frame + 512))"
		[ "$(info_samples "$scratch/t.zst")" -gt 100 ] || fail "$what, $mode: $(info_samples "$scratch/t.zst") samples"
	done
done
# The samples' stacks cross the switch to the handler's own stack and the signal frame.
"$bin/collect" -q -o "$scratch/t.zst" "$w" altstack 16 >/dev/null 2>"$scratch/err" || fail "altstack: $(cat "$scratch/err")"
"$bin/analyze" tree "$scratch/t.zst" 2>/dev/null | grep -q "altstack_thread" ||
	fail "altstack: no sample reached the thread's frames: $("$bin/analyze" tree "$scratch/t.zst" 2>&1 | head -12)"
"$bin/collect" -q -o "$scratch/t.zst" "$w" coroutine 8 >/dev/null 2>"$scratch/err" || fail "coroutine: $(cat "$scratch/err")"
"$bin/analyze" flat "$scratch/t.zst" 2>/dev/null | grep -q "coroutine_work" || fail "coroutine: no coroutine_work"
echo "collect_small_stack: ok"
