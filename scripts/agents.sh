#!/usr/bin/env bash
# Installs the pinned agent CLIs listed in agents.lock into DIR (default .agents/) with one
# `npm install --prefix`. A re-run with the same pins is a no-op: a stamp file in DIR holds the
# hash of the pins it installed. On any failure it exits non-zero and says why.
#
# Node itself may be pinned (the npm package "node" ships the binary): it is installed first, and
# the rest is installed by npm running on it, with --engine-strict, so a package whose declared
# node engine the agents' node does not satisfy fails the install instead of being installed with
# a warning. harness runs an agent found in DIR/node_modules/.bin with that directory first on its
# PATH, so `#!/usr/bin/env node` there finds the pinned node.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
lock="${AGENTS_LOCK:-$root/agents.lock}"
dir="${1:-$root/.agents}"

die() { echo "agents.sh: $*" >&2; exit 1; }

command -v npm >/dev/null 2>&1 || die "npm not found in PATH (install npm; the node the agents run on is pinned in agents.lock)"
[ -r "$lock" ] || die "pin file $lock not readable"

# Pins: non-empty, non-comment lines of the form name@version (name may be @scope/name).
mapfile -t pins < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' "$lock" | grep -v '^$' || true)
[ "${#pins[@]}" -gt 0 ] || die "no pins in $lock"

deps=""
node_dep=""
for pin in "${pins[@]}"; do
	name="${pin%@*}"
	version="${pin##*@}"
	if [ -z "$name" ] || [ -z "$version" ] || [ "$name" = "$pin" ]; then
		die "bad pin '$pin' in $lock (want name@version)"
	fi
	case "$version" in
	*[!0-9A-Za-z.+-]*) die "pin '$pin' is not an exact version" ;;
	esac
	deps="$deps${deps:+,
}    \"$name\": \"$version\""
	[ "$name" != node ] || node_dep="    \"node\": \"$version\""
done

hash="$(printf '%s\n' "${pins[@]}" | sha256sum | cut -d' ' -f1)"
stamp="$dir/.agents-stamp"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$hash" ] && [ -d "$dir/node_modules/.bin" ]; then
	echo "agents.sh: $dir already has these pins; nothing to do" >&2
	exit 0
fi

mkdir -p "$dir" || die "cannot create $dir"
# Absolute from here on: node's require() takes a relative path for a module name.
dir="$(cd "$dir" && pwd)"
stamp="$dir/.agents-stamp"
rm -f "$stamp"
manifest() {
	cat >"$dir/package.json" <<JSON
{
  "name": "harness-agents",
  "private": true,
  "description": "Pinned agent CLIs for harness end-to-end tests (written by scripts/agents.sh)",
  "dependencies": {
$1
  }
}
JSON
}

# npm install, bounded and tried again: npm was seen to hang for good mid-install (the node
# package's postinstall runs a nested npm that sat idle on a socket, 9 minutes, CI at 43445b2).
# timeout signals the attempt's whole process group.
npm_install() {
	local limit="$1" try
	shift
	for try in 1 2 3; do
		timeout --kill-after=10s "$limit" npm install "$@" && return 0
		echo "agents.sh: npm install failed or ran out of its $limit (attempt $try of 3)" >&2
	done
	return 1
}

if [ -n "$node_dep" ]; then
	manifest "$node_dep"
	echo "agents.sh: installing the pinned node into $dir" >&2
	npm_install 5m --prefix "$dir" --no-audit --no-fund --save-exact ||
		die "npm install of the pinned node failed (see the npm output above)"
	[ -x "$dir/node_modules/.bin/node" ] || die "the pinned node installed no $dir/node_modules/.bin/node"
	export PATH="$dir/node_modules/.bin:$PATH"
fi
command -v node >/dev/null 2>&1 || die "node not found in PATH (pin it in $lock, or install node)"
echo "agents.sh: the agents run on node $(node --version) ($(command -v node))" >&2

manifest "$deps"
echo "agents.sh: installing ${pins[*]} into $dir" >&2
# --engine-strict: npm (on the node above) refuses a package whose declared engine it does not
# satisfy, rather than warning and installing it anyway.
if ! npm_install 15m --prefix "$dir" --no-audit --no-fund --save-exact --engine-strict; then
	die "npm install failed (see the npm output above); $dir is left without a stamp"
fi

# npm may succeed yet leave a different version (e.g. a stale lockfile): check every pin.
for pin in "${pins[@]}"; do
	name="${pin%@*}"
	want="${pin##*@}"
	got="$(node -p "require(process.argv[1]).version" "$dir/node_modules/$name/package.json" 2>/dev/null || true)"
	[ "$got" = "$want" ] || die "npm finished but $dir/node_modules/$name is at version '${got:-missing}', want $want"
done
printf '%s\n' "$hash" >"$stamp"
echo "agents.sh: done" >&2
