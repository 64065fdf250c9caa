# cpack -G DEB: the package is named ipscope_VERSION+gitREV_amd64.deb (the
# plain ipscope_VERSION_amd64.deb when the build's revision is unknown: a tree
# neither checked out nor made by git archive, cmake/revision.cmake), its
# Depends come from dpkg-shlibdeps (the libraries the binaries link), and
# unpacked anywhere with dpkg-deb -x (relocated) it profiles and reports.
# usage: install_deb.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
need dpkg-deb dpkg
need dpkg-shlibdeps dpkg-dev
cd "$scratch"
cpack --config "$build/CPackConfig.cmake" -G DEB -B "$scratch/pkg" >cpack.log 2>&1 ||
	fail "cpack failed: $(cat cpack.log)"
deb=$(ls pkg/ipscope_*_amd64.deb 2>/dev/null | head -n 1)
[ -n "$deb" ] || fail "no ipscope_*_amd64.deb in pkg/: $(ls pkg)"
dpkg-deb -I "$deb" >info || fail "dpkg-deb -I failed"
cat info
depends=$(sed -n 's/^ Depends: //p' info)
[ -n "$depends" ] || fail "no Depends in the package"
for lib in libc6 libzstd1 libunwind8 libelf1 libjansson4 libprotobuf-c1 zlib1g libdeflate0 libdebuginfod1 libcapstone4; do
	echo "$depends" | grep -q "$lib" || fail "Depends lacks $lib: $depends"
done
dpkg-deb -x "$deb" root || fail "dpkg-deb -x failed"
# The name says the revision its collect was built from (cpack names the package from the last
# build's revision: build before cpack). A git checkout always has one.
revision=$(root/usr/bin/collect --version | sed -n 's/.*, revision //p')
source_dir=$(sed -n 's/^ipscope_SOURCE_DIR:STATIC=//p' "$build/CMakeCache.txt")
if [ -e "$source_dir/.git" ] && [ "$revision" = unknown ]; then
	fail "the package's collect says revision unknown, though $source_dir is a git checkout"
fi
version=$(sed -n 's/^project(ipscope VERSION \([0-9.]*\).*/\1/p' "$source_dir/CMakeLists.txt")
want=ipscope_$version+git$(echo "$revision" | tr -c 'A-Za-z0-9.~\n' .)_amd64.deb
[ "$revision" = unknown ] && want=ipscope_${version}_amd64.deb
[ "$deb" = "pkg/$want" ] || fail "the package is $deb, its collect says revision $revision: want pkg/$want"
[ -x root/usr/bin/collect ] && [ -f root/usr/lib/ipscope/libipscope-agent.so ] ||
	fail "package lacks usr/bin/collect or usr/lib/ipscope/libipscope-agent.so: $(find root | head -30)"
[ -f root/usr/share/man/man1/analyze-tree.1.gz ] || [ -f root/usr/share/man/man1/analyze-tree.1 ] ||
	fail "package lacks the analyze-tree manual page"
[ -f root/usr/share/ipscope/plots/timeline.gp ] || fail "package lacks the plot templates"
[ -f root/usr/include/ipscope.h ] || fail "package lacks usr/include/ipscope.h (region control)"
grep -q "^ Recommends: .*gnuplot" info || fail "the package does not recommend gnuplot (analyze plot)"
unset IPSCOPE_AGENT
root/usr/bin/collect -q -o t.zst "$workloads/report_split" 0.3 2>err || fail "unpacked collect: $(cat err)"
root/usr/bin/analyze flat t.zst >flat || fail "unpacked analyze failed"
grep -q heavy flat || fail "unpacked collect recorded no samples of heavy(): $(cat flat)"
"$bin/analyze" flat t.zst >build.flat || fail "build-tree analyze flat failed"
cmp -s flat build.flat || fail "the package's and the build tree's reports differ: $(diff flat build.flat)"
need gnuplot gnuplot-nox
root/usr/bin/analyze plot top -o top.txt t.zst 2>err || fail "unpacked analyze plot: $(cat err)"
grep -q "top functions of report_split" top.txt || fail "unpacked analyze plot drew no top"
echo "deb: ok ($deb)"
