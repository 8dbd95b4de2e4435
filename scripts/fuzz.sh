#!/usr/bin/env bash
# A short fuzz of every fuzz target (make fuzz). Each package's fuzz test
# binary is built once, with the fuzzer's instrumentation, and runs each of
# its targets in turn: a `go test -fuzz` per target would link it again,
# and listing the targets with `go test -list` would link every package's
# test binary once more. The corpus cache is go test's own
# ($GOCACHE/fuzz/PKG/TARGET), so a run goes on from what earlier runs found.
#
# A target that fails is run once more: a real finding is saved under
# testdata/fuzz and fails again at once, while a hiccup of the fuzzing engine
# (no input saved) does not.
set -euo pipefail
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-3s}
cache=$($GO env GOCACHE)/fuzz
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
log=$bin/log

dirs=$(git ls-files '*_test.go' | xargs grep -l '^func Fuzz' | xargs -n1 dirname | sort -u)
# The binaries are built first, two at a time: a build's link, and its
# compile of the package itself, use one core (one at a time, the 17
# builds took 90 s of make test).
printf '%s\n' $dirs | GO=$GO xargs -P 2 -I{} sh -c '"$GO" test -c -fuzz=. -o "$1/$(echo "$2" | tr / _).test" "./$2"' sh "$bin" {}

for dir in $dirs; do
  pkg=$($GO list "./$dir")
  test=$bin/$(echo "$dir" | tr / _).test
  for target in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$dir"/*_test.go); do
    echo "fuzz $pkg $target"
    run() { (cd "$dir" && "$test" -test.run='^$' -test.fuzz="^$target\$" \
      -test.fuzztime="$FUZZTIME" -test.fuzzcachedir="$cache/$pkg") >"$log" 2>&1; }
    # Go 1.26's fuzzing coordinator can fail a target at the end of its
    # -fuzztime with a bare "context deadline exceeded" and no input saved
    # (golang/go#75804, fixed in Go 1.27). A real finding always saves its
    # input ("Failing input written"), a hang included; so such a failure
    # counts as clean once the target's seeds and testdata corpus replay
    # without error.
    raced() {
      grep -q 'context deadline exceeded' "$log" && ! grep -q 'Failing input' "$log" || return 1
      echo "  the coordinator's deadline race (golang/go#75804): replaying the corpus"
      (cd "$dir" && "$test" -test.run="^$target\$") >"$log" 2>&1
    }
    run || raced || run || raced || { cat "$log"; exit 1; }
  done
done
