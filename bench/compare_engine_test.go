package bench_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/bench"
)

// TestDiffRefusesOtherEngines: the isolation engine is part of a plan's
// id, and merge refuses to mix two; compare refuses them as another
// permission mode, naming both. A report of an earlier harness (no
// isolate) ran under none. Before, a BASE under none and a NEW under
// podman were compared as one condition.
func TestDiffRefusesOtherEngines(t *testing.T) {
	def := bench.DiffOptions{MaxCostGrowth: -1, MaxTimeGrowth: -1}
	under := func(engine string) *bench.Report {
		r := synth(3, true, 1000, 0.1)
		r.Isolate = engine
		return r
	}
	for name, tc := range map[string]struct{ base, next, want string }{
		"none-podman":      {"none", "podman", "BASE ran under --isolate none, NEW under --isolate podman"},
		"unrecorded-bwrap": {"", "bwrap", "BASE ran under --isolate none, NEW under --isolate bwrap"},
		"docker-podman":    {"docker", "podman", "BASE ran under --isolate docker, NEW under --isolate podman"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := bench.Diff(under(tc.base), under(tc.next), def)
			require.ErrorIs(t, err, bench.ErrNotComparable)
			require.ErrorContains(t, err, tc.want)
		})
	}
	for name, tc := range map[string]struct{ base, next string }{
		"unrecorded-none": {"", "none"},
		"podman-podman":   {"podman", "podman"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := bench.Diff(under(tc.base), under(tc.next), def)
			require.NoError(t, err)
		})
	}
}
