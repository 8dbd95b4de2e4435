#!/usr/bin/env bash
# Builds Jaeger v2 (the all-in-one binary: OTLP receiver and query API) from the Go module proxy
# into a cache, once: the OTLP tests read their traces back from it. About 5 minutes and 100 MB
# on 2 cores, so a binary already in the cache is kept. `go install pkg@version` refuses the
# module (its go.mod has a replace directive), so the module's source is built as a main module.
set -euo pipefail

version="${JAEGER_VERSION:-v1.76.0}"
out="${1:-${HOME}/.cache/harness/jaeger-${version}}"
go="${GO:-go}"

if [ -x "$out" ]; then
	exit 0
fi
mkdir -p "$(dirname "$out")"
src="$("$go" mod download -json "github.com/jaegertracing/jaeger@${version}" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
[ -n "$src" ] && [ -d "$src" ] || { echo "jaeger.sh: could not download github.com/jaegertracing/jaeger@${version}" >&2; exit 1; }
work="$(mktemp -d)"
trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
cp -r "$src/." "$work/"
chmod -R u+w "$work"
# Built to a temporary name and renamed: an interrupted build leaves no binary the cache would keep.
# Without optimisation or inlining (-N -l): the tests send it a few spans, and from an empty build
# cache it compiles in 461 s of CPU instead of 609 (2 cores, measured side by side), which a fresh
# machine's make test waits for.
(cd "$work" && CGO_ENABLED=0 GOFLAGS=-mod=mod "$go" build -trimpath -gcflags=all='-N -l' -ldflags '-s -w' -o "$out.tmp" ./cmd/jaeger)
mv "$out.tmp" "$out"
