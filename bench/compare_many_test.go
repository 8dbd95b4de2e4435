package bench_test

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/bench"
)

// TestDiffManyTasks: two reports of a plan's most runs (MaxRuns), each
// on a task of its own, are compared. Before, finding the plan's cells
// compared each run with every cell found so far, and matching the two
// sides' cells did so twice more: some 10^10 comparisons, minutes of a
// compare that looked hung. All runs but the first are skipped, so that
// the agent's row has one time to resample, not 100 000.
func TestDiffManyTasks(t *testing.T) {
	report := func() *bench.Report {
		r := &bench.Report{PlanID: "p", Planned: bench.MaxRuns, Runs: make([]bench.RunReport, 0, bench.MaxRuns)}
		for i := range bench.MaxRuns {
			rr := bench.RunReport{Index: i, Task: "t" + strconv.Itoa(i), Agent: "claude", Repeat: 1, Status: bench.StatusSkipped}
			if i == 0 {
				rr.Status, rr.WallMS, rr.Check = "success", 1000, &bench.CheckResult{Passed: true}
			}
			r.Runs = append(r.Runs, rr)
		}
		return r
	}
	d, err := bench.Diff(report(), report(), bench.DiffOptions{MaxCostGrowth: -1, MaxTimeGrowth: -1})
	require.NoError(t, err)
	require.Len(t, d.Rows, 1+bench.MaxRuns, "the agent's row and one a task")
	require.False(t, d.Regressed)
}
