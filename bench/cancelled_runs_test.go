package bench_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/event"
)

// figures is what the groups say of their agents: without the counts of
// runs that say nothing of them (skipped, cut short, not run), which a
// bench's report lists and a merge of it holds as missing, nor the groups
// made of such runs alone, which a merge has no run of.
func figures(gs []bench.Group) []bench.Group {
	var out []bench.Group
	for _, g := range gs {
		if g.Runs > 0 {
			g.Skipped, g.Cancelled, g.NotRun = 0, 0, 0
			out = append(out, g)
		}
	}
	return out
}

// TestInterruptedBenchEqualsItsMerge: the run an interrupt cut short is
// listed in the bench's report but counted nowhere, as a merge of that
// report, or of its results directory (which never recorded it), counts
// it: the bench's rates, medians and pairs are its merge's.
func TestInterruptedBenchEqualsItsMerge(t *testing.T) {
	plan := resumePlan() // runs: one/claude, one/codex, two/claude, two/codex
	dir := filepath.Join(t.TempDir(), "results")
	intr := make(chan struct{}, 1)
	setup := func(s bench.Spec, tk harness.Task) (harness.Task, harness.Observer, error) {
		name := "bench-writer"
		if s.Index == 2 {
			name = "hang-in-tool"
		}
		return fakes(map[string]string{s.Agent: name})(s, tk)
	}
	rep, err := bench.Run(context.Background(), plan, bench.Options{Parallel: 1, Results: dir, Interrupt: intr, Setup: setup,
		Progress: func(p bench.Progress) {
			if p.Spec.Index == 2 && p.State == bench.StateRunning && p.Tools > 0 {
				intr <- struct{}{} // run #3 is mid-tool
			}
		}})
	require.NoError(t, err)
	require.True(t, rep.Cancelled)
	require.Equal(t, event.ResultCancelled, rep.Runs[2].Status)
	require.Equal(t, bench.StatusSkipped, rep.Runs[3].Status)

	claude := rep.Groups[0]
	require.Equal(t, "claude", claude.Agent)
	require.Equal(t, 1, claude.Runs, "the run cut short is not a run of the figures")
	require.Equal(t, 1, claude.Cancelled)
	require.Equal(t, 1.0, claude.SuccessRate)
	require.Equal(t, rep.Runs[0].WallMS, claude.WallP90MS, "nor in the medians")
	require.Equal(t, 1, rep.Comparisons[0].Pairs, "nor in a pair")

	buf, err := json.Marshal(rep)
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "int.json")
	require.NoError(t, os.WriteFile(file, buf, 0o600))
	for _, in := range []string{file, dir} {
		m, err := bench.MergeSeed([]string{in}, rep.Seed)
		require.NoError(t, err, in)
		require.Equal(t, figures(m.Groups), figures(rep.Groups), "merge of %s", in)
		require.Equal(t, m.Comparisons, rep.Comparisons, "merge of %s", in)
		require.Len(t, m.Missing, 2, "merge of %s", in)
	}
}

// TestCancelledCheckCountsNowhere: a run whose check the cancel cut short
// has no verdict and is run again on resume, whatever its agent's
// status: it is in no rate, as in no results directory.
func TestCancelledCheckCountsNowhere(t *testing.T) {
	ok := run(0)
	cut := run(1)
	cut.Repeat = 2
	ok.WallMS, cut.WallMS = 10, 9000
	cut.Check = &bench.CheckResult{Error: "cancelled", ExitCode: -1}
	r := craftedReport(2, ok, cut)
	bench.Summarize(r)
	g := r.Groups[0]
	require.Equal(t, 1, g.Runs)
	require.Equal(t, 1, g.Cancelled)
	require.Equal(t, int64(10), g.WallP90MS, "its wall time is in no median")

	var b strings.Builder
	require.NoError(t, r.Write(&b, "table"))
	require.Contains(t, b.String(), "1 (+1 cancelled)")
	require.Contains(t, b.String(), "cancelled: 1 run cut short by the bench's cancel")
}
