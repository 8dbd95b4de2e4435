package bench_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/bench"
)

// synth makes a report of n runs per agent on two tasks, each passing
// when pass says so, with the given wall time and cost.
func synth(n int, pass bool, wallMS int64, cost float64) *bench.Report {
	r := &bench.Report{PlanID: "p"}
	i := 0
	for _, task := range []string{"t1", "t2"} {
		for rep := 1; rep <= n; rep++ {
			for _, agent := range []string{"claude", "codex"} {
				c := cost + float64(rep)*cost/100 // a little spread
				r.Runs = append(r.Runs, bench.RunReport{Index: i, Task: task, Agent: agent, Repeat: rep, Status: "success",
					WallMS: wallMS + int64(rep), CostUSD: &c, Check: &bench.CheckResult{Passed: pass}})
				i++
			}
		}
	}
	bench.Summarize(r)
	return r
}

func TestDiff(t *testing.T) {
	def := bench.DiffOptions{MaxCostGrowth: -1, MaxTimeGrowth: -1}
	t.Run("itself", func(t *testing.T) {
		base := synth(10, true, 1000, 0.1)
		d, err := bench.Diff(base, base, def)
		require.NoError(t, err)
		require.False(t, d.Regressed)
		require.Len(t, d.Rows, 6, "2 groups + 2×2 tasks")
		for _, r := range d.Rows {
			require.Empty(t, r.Verdict, "%+v", r)
			require.Zero(t, *r.WallGrowth)
		}
	})
	t.Run("all-pass-to-all-fail", func(t *testing.T) {
		d, err := bench.Diff(synth(10, true, 1000, 0.1), synth(10, false, 1000, 0.1), def)
		require.NoError(t, err)
		require.True(t, d.Regressed)
		require.Equal(t, "worse", d.Rows[0].Verdict)
		require.Equal(t, "pass", d.Rows[0].Metric)
		require.Equal(t, -1.0, d.Rows[0].RateDiff)
		var out bytes.Buffer
		require.NoError(t, d.Write(&out, "table"))
		require.Contains(t, out.String(), "worse: pass rate 100% → 0%")
	})
	t.Run("all-fail-to-all-pass", func(t *testing.T) {
		d, err := bench.Diff(synth(10, false, 1000, 0.1), synth(10, true, 1000, 0.1), def)
		require.NoError(t, err)
		require.False(t, d.Regressed)
		require.Equal(t, "better", d.Rows[0].Verdict)
	})
	t.Run("cost-growth", func(t *testing.T) {
		d, err := bench.Diff(synth(10, true, 1000, 0.1), synth(10, true, 1000, 0.15), def)
		require.NoError(t, err)
		require.True(t, d.Regressed, "+50%% cost on every run")
		require.Contains(t, d.Rows[0].Why[0], "median cost +50%")
		d, err = bench.Diff(synth(10, true, 1000, 0.1), synth(10, true, 1000, 0.15), bench.DiffOptions{MaxCostGrowth: 0.6, MaxTimeGrowth: -1})
		require.NoError(t, err)
		require.False(t, d.Regressed, "within the allowed growth")
	})
	t.Run("time-growth", func(t *testing.T) {
		d, err := bench.Diff(synth(10, true, 1000, 0.1), synth(10, true, 1300, 0.1), def)
		require.NoError(t, err)
		require.True(t, d.Regressed)
		require.Contains(t, d.Rows[0].Why[0], "median wall time +30%")
	})
	t.Run("different-plans", func(t *testing.T) {
		other := synth(10, true, 1000, 0.1)
		for i := range other.Runs {
			other.Runs[i].Task = "elsewhere"
		}
		_, err := bench.Diff(synth(10, true, 1000, 0.1), other, def)
		require.ErrorIs(t, err, bench.ErrNotComparable)
		_, err = bench.Diff(&bench.Report{}, other, def)
		require.ErrorIs(t, err, bench.ErrNotComparable)
	})
}
