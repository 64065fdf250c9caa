# Reports that hide system frames (tree, flat without -C) read a system
# library's debug info only where one of its frames shows, naming the others
# from their symbol tables (analyze/load/load_stacks.c). What they print must
# be what reading every library whole gives: an --ignore pattern that matches
# nothing changes no sample but reads them whole (a pattern may name a
# function only debug info knows), so the two must agree byte for byte, on a
# CPU trace and an allocation trace of tests/e2e/workloads/report_names_only.cpp
# (a program function with the short name of one glibc inlines, tcache_get;
# allocation stacks of libc frames alone; system calls).
. "$(dirname "$0")/lib.sh"
w=$workloads/report_names_only
"$bin/collect" -q -o "$scratch/cpu.zst" "$w" 3000000 2>"$scratch/err" || fail "collect: $(cat "$scratch/err")"
"$bin/collect" -q --allocs -o "$scratch/allocs.zst" "$w" 2000 2>"$scratch/err" ||
	fail "collect --allocs: $(cat "$scratch/err")"
for t in cpu allocs; do
	for cmd in "flat" "flat --lines" "flat --format tsv" "tree" "tree --no-inline"; do
		"$bin/analyze" $cmd --offline "$scratch/$t.zst" >"$scratch/read" 2>&1 || fail "$t: analyze $cmd failed"
		"$bin/analyze" $cmd --offline --ignore '^$' "$scratch/$t.zst" >"$scratch/whole" 2>&1 ||
			fail "$t: analyze $cmd --ignore failed"
		cmp -s "$scratch/read" "$scratch/whole" ||
			fail "$t: analyze $cmd differs from the same report with every library read whole: $(diff "$scratch/whole" "$scratch/read" | head -20)"
	done
done
grep -q ' tcache_get$' "$scratch/read" || fail "the program's tcache_get is not named as such: $(head -20 "$scratch/read")"
"$bin/analyze" flat --offline "$scratch/cpu.zst" | grep -q ' tcache_get$' ||
	fail "cpu: tcache_get is not in flat: $("$bin/analyze" flat --offline "$scratch/cpu.zst" | head -20)"
echo "report_names_only: ok"
