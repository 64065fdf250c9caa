# cmake/revision.cmake: the revision --version prints and the .deb's version
# names, from each kind of source tree a build can start from, in a scratch
# git repository of the test's own: a checkout with git (describe, -dirty), a
# checkout on a machine without git (HEAD read from .git: a loose ref, packed
# refs, a detached HEAD, a worktree's .git file), a `git archive` tarball
# (export-subst), and a tree with neither ("unknown").
# usage: revision.sh BUILD_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
source_dir=$2
need git git
script=$source_dir/cmake/revision.cmake

# revision_of TREE [NO_GIT]: the IPSCOPE_REVISION revision.cmake writes for TREE.
revision_of() {
	rm -f "$scratch/r.h"
	cmake -DSOURCE_DIR="$1" -DOUTPUT="$scratch/r.h" ${2:+-DNO_GIT=ON} -P "$script" >"$scratch/cmake.out" 2>&1 ||
		fail "revision.cmake failed on $1: $(cat "$scratch/cmake.out")"
	sed -n 's/^#define IPSCOPE_REVISION "\(.*\)"$/\1/p' "$scratch/r.h"
}
is() { [ "$1" = "$2" ] || fail "$3: '$1', expected '$2'"; }

repo=$scratch/repo
mkdir -p "$repo/cmake"
cp "$source_dir/cmake/source-revision" "$repo/cmake/"
cp "$source_dir/.gitattributes" "$repo/"
echo one >"$repo/file"
git -C "$repo" init -q -b main
git -C "$repo" -c user.name=t -c user.email=t@t add -A
git -C "$repo" -c user.name=t -c user.email=t@t commit -q -m one
head=$(git -C "$repo" rev-parse HEAD)
short=$(echo "$head" | cut -c1-12)

is "$(revision_of "$repo")" "$short" "checkout with git"
echo two >"$repo/file"
is "$(revision_of "$repo")" "$short-dirty" "changed checkout with git"
git -C "$repo" checkout -q file
is "$(revision_of "$repo" no-git)" "$short" "checkout without git, loose ref"
git -C "$repo" pack-refs --all
[ ! -e "$repo/.git/refs/heads/main" ] || fail "pack-refs left the loose ref"
is "$(revision_of "$repo" no-git)" "$short" "checkout without git, packed refs"
git -C "$repo" checkout -q --detach
is "$(revision_of "$repo" no-git)" "$short" "checkout without git, detached HEAD"
git -C "$repo" checkout -q main
git -C "$repo" worktree add -q "$scratch/wt" 2>/dev/null
[ -f "$scratch/wt/.git" ] || fail "git worktree made no .git file"
is "$(revision_of "$scratch/wt" no-git)" "$short" "worktree without git"

mkdir "$scratch/tarball"
git -C "$repo" archive --format=tar HEAD | tar -C "$scratch/tarball" -xf -
is "$(revision_of "$scratch/tarball")" "$short" "git archive tarball"
mkdir "$scratch/plain"
cp -r "$source_dir/cmake" "$scratch/plain/"
is "$(revision_of "$scratch/plain")" unknown "tree without .git, not from git archive"

# The build's own revision is its source tree's.
built=$(sed -n 's/^#define IPSCOPE_REVISION "\(.*\)"$/\1/p' "$build/generated/ipscope_revision.h")
if [ -e "$source_dir/.git" ]; then
	case $built in
	"$(git -C "$source_dir" rev-parse --short=12 HEAD)"*) ;;
	*) fail "the build says revision '$built', its checkout is at $(git -C "$source_dir" rev-parse HEAD)" ;;
	esac
fi
"$bin/collect" --version | grep -q "$built" || fail "collect --version does not say $built: $("$bin/collect" --version)"
echo "revision: ok (this build: $built)"
