#!/usr/bin/env bash
# Builds Jaeger v2 (the all-in-one binary: OTLP receiver and query API) from the Go module proxy
# into a cache, once: the OTLP tests read their traces back from it. About 3 minutes and 70 MB
# on 2 cores, so a binary already in the cache is kept. `go install pkg@version` refuses the
# module (its go.mod has a replace directive), so the module's source is built as a main module.
set -euo pipefail

version="${JAEGER_VERSION:-v1.76.0}"
out="${1:-${HOME}/.cache/harness/jaeger-${version}-min}"
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
# Only the components the tests configure (scripts/jaeger-components.go.in says which and why):
# from an empty build cache, 374 s of CPU (195 s on 2 cores) instead of 494 (257 s) with all of
# Jaeger's add-ons (Kafka, Prometheus, AWS, OTTL, ...), measured one after the other here.
cp "$(dirname "$0")/jaeger-components.go.in" "$work/cmd/jaeger/internal/components.go"
# Built to a temporary name and renamed: an interrupted build leaves no binary the cache would keep.
# Without optimisation or inlining (-N -l): the tests send it a few spans, and from an empty build
# cache it compiles in 461 s of CPU instead of 609 (2 cores, measured side by side), which a fresh
# machine's make test waits for.
(cd "$work" && CGO_ENABLED=0 GOFLAGS=-mod=mod "$go" build -trimpath -gcflags=all='-N -l' -ldflags '-s -w' -o "$out.tmp" ./cmd/jaeger)
mv "$out.tmp" "$out"
