#!/bin/sh
# export_setup_node.sh - install the npm consumers of ipscope's exports
# (speedscope, whose package ships the file-format JSON schema, and ajv to
# validate against it) at the versions pinned in tests/e2e/node/, into DEST
# (normally BUILD/tests/export-node). The export tests run them from there.
#
# usage: export_setup_node.sh DEST
# Exit 0 when installed (or already installed from the same lock file), 1
# when node or npm is missing (naming the Debian package) or the installation
# failed.
set -eu
dest=${1:?usage: export_setup_node.sh DEST}
src=$(cd "$(dirname "$0")/node" && pwd)

for tool in node:nodejs npm:npm; do
	if ! command -v "${tool%:*}" >/dev/null 2>&1; then
		echo "FAIL: ${tool%:*} is not installed: the Debian package ${tool#*:} has it (scripts/debian-packages.txt)" >&2
		exit 1
	fi
done

mkdir -p "$dest"
# npm ci wipes and reinstalls; skip it when this lock file is already installed.
if [ -f "$dest/node_modules/.ipscope-lock" ] &&
	cmp -s "$src/package-lock.json" "$dest/node_modules/.ipscope-lock" &&
	[ -f "$dest/node_modules/speedscope/dist/release/file-format-schema.json" ]; then
	exit 0
fi
cp "$src/package.json" "$src/package-lock.json" "$dest/"
cd "$dest"
if ! npm ci --no-audit --no-fund --ignore-scripts --loglevel=error; then
	echo "export_setup_node: npm ci failed in $dest" >&2
	exit 1
fi
cp package-lock.json node_modules/.ipscope-lock
echo "export_setup_node: installed speedscope and ajv into $dest/node_modules"
