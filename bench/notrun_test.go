package bench_test

import (
	"bytes"
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/event"
)

// notRunRuns: claude ran twice (a success, a failure) and never ran four
// times (setup, not installed, spawn failed, unsupported), once skipped;
// codex succeeded on every repeat.
func notRunRuns() []bench.RunReport {
	claude := []bench.RunReport{
		{Status: "success", WallMS: 1000},
		{Status: "error", Reason: event.ErrAgentError, WallMS: 3000},
		{Status: "error", Reason: bench.ReasonSetup, Error: "tree: no such directory"},
		{Status: "error", Reason: event.ErrNotInstalled, WallMS: 2},
		{Status: "error", Reason: event.ErrSpawnFailed, WallMS: 1},
		{Status: "error", Reason: bench.ReasonUnsupported, Error: "the task needs 1 GPU(s)"},
		{Status: bench.StatusSkipped},
	}
	var runs []bench.RunReport
	for i, c := range claude {
		c.Index, c.Agent, c.Task, c.Repeat = 2*i, "claude", "t", i+1
		runs = append(runs, c, bench.RunReport{Index: 2*i + 1, Agent: "codex", Task: "t", Repeat: i + 1, Status: "success", WallMS: 500})
	}
	return runs
}

// A run whose agent never ran is counted apart, in no rate, median or
// comparison (before, it was a failure: claude's success rate was 1/6,
// its median wall time 2ms).
func TestNotRunIsApart(t *testing.T) {
	r := &bench.Report{Runs: notRunRuns()}
	bench.Summarize(r)
	claude := r.Groups[0]
	require.Equal(t, 2, claude.Runs)
	require.Equal(t, 4, claude.NotRun)
	require.Equal(t, 1, claude.Skipped)
	require.Equal(t, 1, claude.Succeeded)
	require.Equal(t, 0.5, claude.SuccessRate)
	lo, hi := bench.Wilson(1, 2)
	require.Equal(t, []float64{lo, hi}, []float64{claude.SuccessCILow, claude.SuccessCIHigh})
	require.Equal(t, int64(1000), claude.WallP50MS)
	require.Equal(t, int64(3000), claude.WallP90MS)
	require.Equal(t, 7, r.Groups[1].Runs)

	c := r.Comparisons[0]
	require.Equal(t, "success", c.Metric)
	require.Equal(t, 2, c.Pairs, "only the repeats both agents ran are pairs")
	require.Equal(t, 1, c.Both)
	require.Equal(t, 1, c.OnlyB)

	for i, want := range []bool{false, false, true, true, true, true, false} {
		require.Equal(t, want, r.Runs[2*i].NotRun(), "run %d", 2*i)
	}

	var out bytes.Buffer
	require.NoError(t, r.Write(&out, "table"))
	require.Contains(t, out.String(), "2 (+4 not run, +1 skipped)")
	require.Contains(t, out.String(), "error (not_installed, not run)")
	require.Contains(t, out.String(), "not run: 4 runs ended before their agent started")
	out.Reset()
	require.NoError(t, r.Write(&out, "json"))
	require.Equal(t, int64(4), gjson.GetBytes(out.Bytes(), "groups.0.not_run").Int())
	require.Equal(t, 0.5, gjson.GetBytes(out.Bytes(), "groups.0.success_rate").Float())
	require.False(t, gjson.GetBytes(out.Bytes(), "groups.1.not_run").Exists())
}

// In a bench, a run whose agent is not installed is not run: out of the
// rate, not recorded in --results, and run by the resume.
func TestNotInstalledIsNotRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "results")
	plan := bench.Plan{Tasks: []bench.Task{{Name: "one", Prompt: "write"}}, Agents: []string{"claude"}, Repeat: 2, Check: "test -f out.txt"}
	works := fakes(writers)
	secondMissing := func(s bench.Spec, t harness.Task) (harness.Task, harness.Observer, error) {
		t, obs, err := works(s, t)
		if s.Repeat == 2 {
			t.Binary = "/nonexistent/claude"
		}
		return t, obs, err
	}
	rep, err := bench.Run(context.Background(), plan, bench.Options{Results: dir, Setup: secondMissing})
	require.NoError(t, err)
	require.Equal(t, event.ErrNotInstalled, rep.Runs[1].Reason)
	g := rep.Groups[0]
	require.Equal(t, []int{1, 1, 1}, []int{g.Runs, g.Succeeded, g.NotRun})
	require.Equal(t, 1.0, g.SuccessRate)
	require.Equal(t, 1.0, *g.PassRate)

	var started atomic.Int32
	rep, err = bench.Run(context.Background(), plan, bench.Options{Results: dir, Setup: counting(&started, writers)})
	require.NoError(t, err)
	require.Equal(t, int32(1), started.Load(), "the run that did not run runs again")
	require.True(t, rep.Runs[0].Resumed)
	g = rep.Groups[0]
	require.Equal(t, []int{2, 2, 0}, []int{g.Runs, g.Succeeded, g.NotRun})
}

// The gate: runs not run are in no rate, but a NEW where more of them did
// not run is worse, never "no difference shown".
func TestDiffNotRun(t *testing.T) {
	def := bench.DiffOptions{MaxCostGrowth: -1, MaxTimeGrowth: -1}
	broken := synth(10, true, 1000, 0.1)
	for i := range broken.Runs {
		if broken.Runs[i].Agent == "codex" {
			broken.Runs[i].Status, broken.Runs[i].Reason, broken.Runs[i].Check = "error", event.ErrNotInstalled, nil
		}
	}
	bench.Summarize(broken)
	d, err := bench.Diff(synth(10, true, 1000, 0.1), broken, def)
	require.NoError(t, err)
	require.True(t, d.Regressed)
	codex := d.Rows[1]
	require.Equal(t, "codex", codex.Agent)
	require.Equal(t, "worse", codex.Verdict)
	require.Equal(t, []string{"runs not run 0/20 → 20/20"}, codex.Why)
	require.Equal(t, 20, codex.NewNotRun)
	require.Empty(t, d.Rows[0].Verdict, "claude ran as before")

	d, err = bench.Diff(broken, broken, def)
	require.NoError(t, err)
	require.False(t, d.Regressed, "as many not run on both sides")
}
