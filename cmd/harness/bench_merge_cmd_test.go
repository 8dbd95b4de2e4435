package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// bench's --seed seeds a merge's intervals as it does a bench's (before,
// a merge of a results directory always had seed 1).
func TestBenchMergeSeed(t *testing.T) {
	home := isolate(t)
	results := filepath.Join(home, "results")
	plan := benchArgs(t, "bench-cli-writer", "--agents", "claude", "-p", "write out.txt", "--workdir", benchSource(t),
		"--report", "json", "--no-store", "--results", results)
	r := invoke(t, "", plan...)
	require.Equal(t, 0, r.code, r.stderr)
	for seed, want := range map[string]uint64{"": 1, "7": 7} {
		args := []string{"bench", "merge", "--report", "json", "--no-store", results}
		if seed != "" {
			args = []string{"bench", "--seed", seed, "merge", "--report", "json", "--no-store", results}
		}
		m := invoke(t, "", args...)
		require.Equal(t, 0, m.code, m.stderr)
		require.Equal(t, want, decodeReport(t, m.stdout).Seed, seed)
	}
}
