package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// --seed 0 is refused, exit 2, one line, by bench and each sub-command
// that reads it: 0 is the unset seed (before, it was silently the
// default 1, or a merge's first report's seed).
func TestBenchSeedZeroRefused(t *testing.T) {
	home := isolate(t)
	for name, args := range map[string][]string{
		"bench":           {"bench", "--agents", "nop", "-p", "x", "--no-store", "--seed", "0"},
		"bench-equals":    {"bench", "--agents", "nop", "-p", "x", "--no-store", "--seed=0"},
		"merge":           {"bench", "--seed", "0", "merge", home},
		"compare":         {"bench", "compare", "--seed", "0", home, home},
		"k8s-job":         {"bench", "--agents", "nop", "-p", "x", "--seed", "0", "k8s-job", "--shards", "2", "--image", "i"},
		"merge-seed-last": {"bench", "merge", home, "--seed", "0"},
	} {
		t.Run(name, func(t *testing.T) {
			r := invoke(t, "", args...)
			require.Equal(t, exitUsage, r.code, r.stderr)
			require.Empty(t, r.stdout)
			require.Equal(t, "harness: bench: --seed 0: want 1 or more (0 is no seed: the default, 1)\n", r.stderr)
		})
	}
}
