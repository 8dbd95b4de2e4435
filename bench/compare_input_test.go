package bench_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/bench"
)

// TestDiffChecksItsInputs: compare holds each report to what merge holds
// its inputs to, and refuses one bench cannot have written. Before, a
// report holding its 12 runs three times was compared, its rates counting
// each copy (a gate could flip on copies), where merge refused it.
func TestDiffChecksItsInputs(t *testing.T) {
	def := bench.DiffOptions{MaxCostGrowth: -1, MaxTimeGrowth: -1}
	good := func() *bench.Report { // 2 tasks × 3 repeats × 2 agents
		r := synth(3, true, 1000, 0.1)
		r.Planned = len(r.Runs)
		return r
	}
	for name, tc := range map[string]struct {
		bad  func(r *bench.Report)
		want string
	}{
		"runs-beyond-the-plan": {func(r *bench.Report) { r.Runs = append(append(r.Runs, r.Runs...), r.Runs...) },
			"bench: compare: NEW: 36 runs of a plan of 12: more than its plan has"},
		"index-twice": {func(r *bench.Report) { r.Runs[1].Index = 0 },
			"bench: compare: NEW: holds run #1 twice: not a report bench writes"},
		"index-twice-no-planned": {func(r *bench.Report) { r.Planned, r.Runs[1].Index = 0, 0 },
			"bench: compare: NEW: holds run #1 twice: not a report bench writes"},
		"index-beyond-the-plan": {func(r *bench.Report) { r.Runs[11].Index = 12 },
			"bench: compare: NEW: run #13 is not in its plan (runs #1 to #12)"},
		"negative-index": {func(r *bench.Report) { r.Runs[0].Index = -1 },
			"bench: compare: NEW: a run has index -1: not a report bench writes (indexes start at 0)"},
		"negative-index-no-planned": {func(r *bench.Report) { r.Planned, r.Runs[0].Index = 0, -1 },
			"bench: compare: NEW: a run has index -1: not a report bench writes (indexes start at 0)"},
		"not-in-its-shard": {func(r *bench.Report) {
			r.Shard, r.Shape = &bench.Shard{Index: 0, Count: 2}, &bench.Shape{Tasks: 2, Models: 1, Repeats: 3, Agents: 2}
		}, "bench: compare: NEW: run #7 is not in its shard 0/2"},
		"no-agent": {func(r *bench.Report) { r.Runs[2].Agent = "" },
			"bench: compare: NEW: run #3 has no agent: not a report bench writes"},
		"bad-permissions": {func(r *bench.Report) { r.Permissions = "root" },
			`bench: compare: NEW: permissions "root", max turns 0: not a report bench writes`},
	} {
		t.Run(name, func(t *testing.T) {
			next := good()
			tc.bad(next)
			_, err := bench.Diff(good(), next, def)
			require.EqualError(t, err, tc.want)
			_, err = bench.Diff(next, good(), def)
			require.ErrorContains(t, err, "bench: compare: BASE: ", "BASE is checked as NEW is")
		})
	}
	t.Run("more-groups-than-a-plan-has", func(t *testing.T) {
		defer bench.SetLimits(bench.MaxRuns, 1)() // synth has 2 agents
		_, err := bench.Diff(good(), good(), def)
		require.EqualError(t, err, "bench: compare: BASE: more than 1 agent × model groups: not a plan bench makes")
	})
	t.Run("a-shard-of-the-plan", func(t *testing.T) {
		r := good()
		r.Runs = r.Runs[:6] // t1's three repeats: groups 0 to 2 of 6
		r.Shard, r.Shape = &bench.Shard{Index: 0, Count: 2}, &bench.Shape{Tasks: 2, Models: 1, Repeats: 3, Agents: 2}
		_, err := bench.Diff(r, r, def)
		require.NoError(t, err)
	})
}

// TestDiffRefusesOtherAgentLimits: a plan's permission mode and turn
// limit are part of its id; a read-only or turn-limited BASE against a
// NEW without those limits is another condition, not a regression, and
// is refused as another --mock is. A report of an earlier harness (no
// permissions) is full access. Before, such reports were compared.
func TestDiffRefusesOtherAgentLimits(t *testing.T) {
	def := bench.DiffOptions{MaxCostGrowth: -1, MaxTimeGrowth: -1}
	with := func(perm string, turns int) *bench.Report {
		r := synth(3, true, 1000, 0.1)
		r.Permissions, r.MaxTurns = perm, turns
		return r
	}
	_, err := bench.Diff(with("read-only", 0), with("full-access", 0), def)
	require.ErrorIs(t, err, bench.ErrNotComparable)
	require.EqualError(t, err, "bench: compare: not comparable: BASE ran with --permissions read-only and no --max-turns, "+
		"NEW with --permissions full-access and no --max-turns: runs that may do different things are not the same condition")
	_, err = bench.Diff(with("", 0), with("full-access", 5), def)
	require.ErrorIs(t, err, bench.ErrNotComparable)
	require.ErrorContains(t, err, "NEW with --permissions full-access --max-turns 5")
	_, err = bench.Diff(with("", 0), with("full-access", 0), def)
	require.NoError(t, err, "an earlier harness's report is full access, no limit")
	_, err = bench.Diff(with("read-only", 5), with("read-only", 5), def)
	require.NoError(t, err)
}
