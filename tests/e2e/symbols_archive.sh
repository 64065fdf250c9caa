# A trace analysed on another machine: analyze archive packs every module
# and debug file by build-id; after the program is rebuilt and its debug
# file gone, --search-dir on the unpacked archive names everything again;
# a search dir that holds only another build is never used, and the warning
# says which file had which build-id.
. "$(dirname "$0")/lib.sh"
need objcopy binutils
need readelf binutils
src=$(dirname "$0")/workloads/report_cpp.cpp
name='geometry::Accumulator<double>::add_many'
line=$(marker_line "@add-many-line" "$src")
mkdir -p "$scratch/app"
cxx() { c++ -O2 -g -DVARIANT="$1" -o "$scratch/app/app" "$src" || fail "cannot compile $src"; }
cxx 0
objcopy --only-keep-debug "$scratch/app/app" "$scratch/app/app.debug"
strip --strip-debug "$scratch/app/app"
(cd "$scratch/app" && objcopy --add-gnu-debuglink=app.debug app)
id=$(readelf -n "$scratch/app/app" | awk '/Build ID/ { print $3 }')
"$bin/collect" -q -o "$scratch/t.zst" "$scratch/app/app" 0.4 2>"$scratch/err" ||
	fail "collect exited $?: $(cat "$scratch/err")"

"$bin/analyze" archive -o "$scratch/a.tar" "$scratch/t.zst" 2>"$scratch/err" ||
	fail "analyze archive failed: $(cat "$scratch/err")"
tar tf "$scratch/a.tar" >"$scratch/members" || fail "tar cannot list the archive"
want=".build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-)"
grep -qx "$want" "$scratch/members" || fail "no $want in: $(cat "$scratch/members")"
grep -qx "$want.debug" "$scratch/members" || fail "no $want.debug in the archive"
tar xOf "$scratch/a.tar" ipscope-archive.txt | grep -q "^$id	debug	$want.debug	$scratch/app/app.debug" ||
	fail "the manifest does not list the debug file"

# Rebuilt, debug file gone: the recorded path holds another build.
cxx 7
rm "$scratch/app/app.debug"
"$bin/analyze" tree "$scratch/t.zst" >"$scratch/tree" 2>"$scratch/err" || fail "analyze tree failed"
grep -q "build-id differs" "$scratch/err" || fail "no build-id warning: $(cat "$scratch/err")"
grep -qF "$name" "$scratch/tree" && fail "a name was read from the rebuilt binary"

mkdir "$scratch/unpacked"
tar xf "$scratch/a.tar" -C "$scratch/unpacked" || fail "tar cannot unpack the archive"
"$bin/analyze" tree --search-dir "$scratch/unpacked" "$scratch/t.zst" >"$scratch/tree" 2>"$scratch/err" ||
	fail "analyze tree --search-dir failed"
grep -qF "report_cpp.cpp:$line; $name" "$scratch/tree" ||
	fail "--search-dir: tree lacks 'report_cpp.cpp:$line; $name': $(cat "$scratch/tree" "$scratch/err")"
grep -q "app/app" "$scratch/err" && fail "--search-dir: still a warning about app: $(cat "$scratch/err")"

# A search dir with only another build of app (found by name): never used, and said.
mkdir "$scratch/wrong"
cp "$scratch/app/app" "$scratch/wrong/app"
other=$(readelf -n "$scratch/wrong/app" | awk '/Build ID/ { print $3 }')
rm "$scratch/app/app"
"$bin/analyze" tree --search-dir "$scratch/wrong" "$scratch/t.zst" >"$scratch/tree" 2>"$scratch/err" ||
	fail "analyze tree --search-dir wrong failed"
grep -qF "$name" "$scratch/tree" && fail "a name was read from another build in the search dir"
grep -q "$scratch/wrong/app has build-id $other, the trace wants $id" "$scratch/err" ||
	fail "the warning does not say which file had what: $(cat "$scratch/err")"
# The module gone from its path altogether: found in the archive by build-id.
"$bin/analyze" flat --search-dir "$scratch/wrong" --search-dir "$scratch/unpacked" "$scratch/t.zst" \
	>"$scratch/flat" 2>"$scratch/err" || fail "analyze flat failed"
grep -qF "$name" "$scratch/flat" || fail "two search dirs: the archive's build was not found"
echo "archive and --search-dir: ok"
