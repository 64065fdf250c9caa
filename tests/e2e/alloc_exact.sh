# collect --allocs at rate 1 against valgrind memcheck's totals for the whole
# run (tests/e2e/workloads/alloc_exact.cpp): allocations, frees, bytes and in
# use at exit, from the process's first allocation (libstdc++'s exception
# pool, made before the agent's constructor), through a library dlopen'ed
# plainly and with RTLD_DEEPBIND, and on four threads in a fixed order. memcheck
# runs without its freeres calls, so it counts what a native run does.
. "$(dirname "$0")/lib.sh"
need valgrind valgrind
need readelf binutils
w=$workloads/alloc_exact
lib=$workloads/liballoc_exact_lib.so
t=$scratch/t.zst

# memcheck ARGS: "allocations frees bytes in-use-bytes in-use-blocks" of the run.
memcheck() {
	valgrind --tool=memcheck --run-libc-freeres=no --run-cxx-freeres=no "$w" "$@" 2>&1 | awk '
		/in use at exit:/ { gsub(",", ""); for (i = 1; i <= NF; i++) if ($i == "exit:") { ub = $(i + 1); un = $(i + 4) } }
		/total heap usage:/ { gsub(",", ""); for (i = 1; i <= NF; i++) { if ($i == "allocs") na = $(i - 1); if ($i == "frees") nf = $(i - 1); if ($i == "bytes") nb = $(i - 1) } }
		END { print na, nf, nb, ub, un }'
}
# ours ARGS: the same figures from collect --allocs (one process).
ours() {
	"$bin/collect" -q --allocs --no-cpu -o "$t" "$w" "$@" 2>"$scratch/err" || fail "collect $*: $(cat "$scratch/err")"
	info_json "$t" | jq -r '.processes[0].values |
		"\(.alloc_objects) \(.alloc_objects - .inuse_objects) \(.alloc_space) \(.inuse_space) \(.inuse_objects)"'
}
temporaries() {
	info_json "$t" | jq -r '.processes[0].values.temporary_objects'
}
# same WHAT ARGS: our figures are memcheck's.
same() {
	what=$1
	shift
	expected=$(memcheck "$@")
	[ -n "$(echo "$expected" | cut -d' ' -f5)" ] || fail "$what: could not read memcheck's summary"
	got=$(ours "$@")
	[ "$got" = "$expected" ] || fail "$what: allocations, frees, bytes, in use (bytes, blocks): $got, memcheck: $expected"
}

# Before main: libstdc++'s pool (72,704 bytes), a static constructor's vector, an exception.
same "static" static
[ "$(ours static | cut -d' ' -f3)" -gt 72704 ] || fail "static: the exception pool is missing"
# The exception's allocation, freed at once: heaptrack's one temporary.
[ "$(temporaries)" = 1 ] || fail "static: temporaries $(temporaries), expected 1"
same "dlopen" dlopen "$lib" plain

# RTLD_DEEPBIND: the library's own malloc and free are libc's until the agent rebinds them after
# dlopen returns; its constructor's 35 bytes (and their free in the destructor) are the exact
# difference, and collect names the library.
set -- $(memcheck dlopen "$lib" deepbind)
expected="$(($1 - 1)) $(($2 - 1)) $(($3 - 35)) $4 $5"
got=$(ours dlopen "$lib" deepbind)
[ "$got" = "$expected" ] || fail "deepbind: $got, expected memcheck's less the constructor's 35 bytes: $expected"
grep -q "1 library was loaded with RTLD_DEEPBIND ($lib)" "$scratch/err" || fail "deepbind: no warning: $(cat "$scratch/err")"
[ "$(info_json "$t" | jq -r '.metadata.deepbind_libraries')" = 1 ] || fail "deepbind: not in info: $(info_json "$t" | jq -c .metadata)"

# Four threads: the counts exact; each thread's DTV (the loader's calloc at pthread_create) is
# 16 bytes larger for each TLS module the agent brings that the program has not.
tls=0
for f in "$bin/libipscope-agent.so" $(ldd "$bin/libipscope-agent.so" | awk '$3 ~ /^\// { print $3 }'); do
	ldd "$w" | grep -q "/$(basename "$f") " && continue
	readelf -lW "$f" | grep -q '^ *TLS ' && tls=$((tls + 1))
done
set -- $(memcheck threads)
dtv=$((4 * 16 * tls))
expected="$1 $2 $(($3 + dtv)) $(($4 + dtv)) $5"
got=$(ours threads)
[ "$got" = "$expected" ] || fail "threads: $got, expected memcheck's with $tls TLS modules more: $expected"
[ "$(temporaries)" = 400 ] || fail "threads: temporaries $(temporaries), expected 400"
# libc's other names, called directly: memcheck counts them, and so must collect.
same "libc" libc

# An allocator's own API loaded beside libc's (jemalloc's mallocx): said, since nothing sees it.
"$bin/collect" -q --allocs --no-cpu -o "$t" "$w" dlopen "$workloads/liballoc_api_lib.so" plain 2>"$scratch/err" ||
	true # the library has no lib_strdup: the program exits 1, after the dlopen
grep -q "allocates through an allocator's own API (mallocx in .*liballoc_api_lib.so)" "$scratch/err" ||
	fail "api: no warning: $(cat "$scratch/err")"
"$bin/analyze" info "$t" 2>/dev/null | grep -q "^Unrecorded: *what the program allocated through an allocator's own API (mallocx in" ||
	fail "api: not in info: $("$bin/analyze" info "$t" 2>&1 | grep -i unrecorded)"
echo "alloc_exact: ok"
