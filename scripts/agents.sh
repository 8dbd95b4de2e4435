#!/usr/bin/env bash
# Installs the pinned agent CLIs listed in agents.lock into DIR (default .agents/) with one
# `npm install --prefix`. A re-run with the same pins is a no-op: a stamp file in DIR holds the
# hash of the pins it installed. On any failure it exits non-zero and says why.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
lock="${AGENTS_LOCK:-$root/agents.lock}"
dir="${1:-$root/.agents}"

die() { echo "agents.sh: $*" >&2; exit 1; }

command -v npm >/dev/null 2>&1 || die "npm not found in PATH (install node >= 20 with npm)"
[ -r "$lock" ] || die "pin file $lock not readable"

# Pins: non-empty, non-comment lines of the form name@version (name may be @scope/name).
mapfile -t pins < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' "$lock" | grep -v '^$' || true)
[ "${#pins[@]}" -gt 0 ] || die "no pins in $lock"

deps=""
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
cat >"$dir/package.json" <<JSON
{
  "name": "harness-agents",
  "private": true,
  "description": "Pinned agent CLIs for harness end-to-end tests (written by scripts/agents.sh)",
  "dependencies": {
$deps
  }
}
JSON

echo "agents.sh: installing ${pins[*]} into $dir" >&2
if ! npm install --prefix "$dir" --no-audit --no-fund --save-exact; then
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
