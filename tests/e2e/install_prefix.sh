# cmake --install into a temporary prefix: the programs, the agent in
# lib/ipscope/, manual pages, completion and docs land where install.cmake
# says; the installed collect finds its agent (no environment variable) and
# the installed analyze prints the same report as the build tree's; an agent
# from another build and a missing one are refused with a clear message.
# A trace written by a newer collector makes analyze info warn. The installed
# analyze finds its plot templates in share/ipscope/plots/.
# usage: install_prefix.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
need man man-db
need zstd zstd
prefix=$scratch/prefix
cmake --install "$build" --prefix "$prefix" >"$scratch/install.log" 2>&1 ||
	fail "cmake --install failed: $(cat "$scratch/install.log")"
for f in bin/collect bin/analyze lib/ipscope/libipscope-agent.so share/man/man1/collect.1 \
	share/man/man1/analyze.1 share/man/man1/analyze-tree.1 share/man/man1/analyze-info.1 \
	share/bash-completion/completions/analyze share/bash-completion/completions/collect \
	share/doc/ipscope/README.md share/doc/ipscope/TRACE_FORMAT.md share/doc/ipscope/doc/ARCHITECTURE.md \
	share/doc/ipscope/doc/limitations.md share/ipscope/plots/timeline.gp \
	share/ipscope/plots/top.gp share/ipscope/plots/diff.gp share/ipscope/plots/heap.gp \
	share/ipscope/plots/rate.gp share/man/man1/analyze-diff.1 share/man/man1/analyze-plot.1; do
	[ -e "$prefix/$f" ] || fail "installed tree lacks $f"
done
[ ! -e "$prefix/bin/libipscope-agent.so" ] || fail "the agent must not be installed in bin/"

# The installed programs, run from outside the build tree, without IPSCOPE_AGENT.
unset IPSCOPE_AGENT
cd "$scratch"
"$prefix/bin/collect" --version | grep -Eq '^collect \(ipscope\) [0-9.]+, revision [^ ]+$' ||
	fail "collect --version: $("$prefix/bin/collect" --version)"
"$prefix/bin/analyze" --version | grep -Eq '^analyze \(ipscope\) [0-9.]+, revision [^ ]+$' ||
	fail "analyze --version: $("$prefix/bin/analyze" --version)"
"$prefix/bin/collect" -q -o t.zst "$workloads/report_split" 0.4 2>err || fail "installed collect: $(cat err)"
"$prefix/bin/analyze" tree t.zst >installed.tree || fail "installed analyze tree failed"
"$bin/analyze" tree t.zst >build.tree || fail "build-tree analyze tree failed"
cmp -s installed.tree build.tree || fail "installed and build-tree reports differ: $(diff installed.tree build.tree)"
grep -q heavy installed.tree || fail "installed collect recorded no samples of heavy(): $(cat installed.tree)"
# gnuplot is in scripts/debian-packages.txt: its absence fails, never skips.
need gnuplot gnuplot-nox
"$prefix/bin/analyze" plot top -o top.txt t.zst 2>err || fail "installed analyze plot: $(cat err)"
grep -q "top functions of report_split" top.txt || fail "installed analyze plot drew no top: $(cat top.txt)"
MANPATH="$prefix/share/man" man -w analyze-tree >/dev/null 2>&1 || man -l "$prefix/share/man/man1/analyze-tree.1" >/dev/null ||
	fail "man cannot read analyze-tree.1"

# A trace from a newer collector (its version mark patched): analyze info says so.
version=$("$prefix/bin/collect" --version | sed 's/^collect (ipscope) \([0-9.]*\),.*/\1/')
newer=$(echo "$version" | tr 0-8 9) # same length: the record's size stays right
[ "$newer" != "$version" ] || fail "cannot make a newer version than $version"
zstd -q -dc t.zst | sed "s/ipscope $version /ipscope $newer /" | zstd -q -o newer.zst ||
	fail "cannot rewrite the trace"
"$prefix/bin/analyze" info newer.zst >info || fail "analyze info on a newer trace failed"
grep -q "^Warning: .*written by ipscope $newer .*newer than this analyze" info ||
	fail "no warning about the newer collector: $(head -5 info)"
"$prefix/bin/analyze" info t.zst | grep -q "newer than this analyze" && fail "warning on a trace of this version"

# An agent from another build: same file with another version mark.
cp -r "$prefix" other
sed 's/IPSCOPE_AGENT_VERSION=[0-9.]* /IPSCOPE_AGENT_VERSION=9.9.9 /' \
	"$prefix/lib/ipscope/libipscope-agent.so" >other/lib/ipscope/libipscope-agent.so
if other/bin/collect -q -o u.zst "$workloads/report_split" 0.1 2>err; then
	fail "collect ran with a mismatched agent"
fi
grep -q "cannot use the agent .*9\.9\.9" err || fail "no clear message for a mismatched agent: $(cat err)"
[ ! -e u.zst ] || fail "a trace was left behind after refusing the agent"
rm other/lib/ipscope/libipscope-agent.so
if other/bin/collect -q -o u.zst "$workloads/report_split" 0.1 2>err; then
	fail "collect ran without its agent"
fi
grep -q "cannot find the agent" err || fail "no clear message for a missing agent: $(cat err)"
echo "install prefix: ok"
