package bench_test

import (
	"bytes"
	"testing"
	"time"

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
		// 10 s → 13 s: beyond the noise of a second.
		d, err := bench.Diff(synth(10, true, 10000, 0.1), synth(10, true, 13000, 0.1), def)
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
	t.Run("mock", func(t *testing.T) {
		// A scripted model's runs against the agents' own models, or
		// another scenario's: the same cells, nothing to compare.
		mocked := func(mock string) *bench.Report { r := synth(10, true, 1000, 0.1); r.Mock = mock; return r }
		_, err := bench.Diff(mocked("tool"), mocked(""), def)
		require.ErrorIs(t, err, bench.ErrNotComparable)
		require.EqualError(t, err, "bench: compare: not comparable: BASE ran against the scripted model (--mock tool), NEW against the agents' own models")
		_, err = bench.Diff(mocked("tool"), mocked("text"), def)
		require.ErrorIs(t, err, bench.ErrNotComparable)
		_, err = bench.Diff(mocked("tool"), mocked("tool"), def)
		require.NoError(t, err)
	})
}

// runsOf makes a report of one agent on one task, a run per wall time
// (ms), each passing, with the given cost.
func runsOf(cost float64, walls ...int64) *bench.Report {
	r := &bench.Report{PlanID: "p"}
	for i, w := range walls {
		c := cost
		r.Runs = append(r.Runs, bench.RunReport{Index: i, Task: "t", Agent: "claude", Repeat: i + 1, Status: "success",
			WallMS: w, CostUSD: &c, Check: &bench.CheckResult{Passed: true}})
	}
	return r
}

// TestDiffTooFewRuns: a median's growth from fewer than MinMedianRuns
// runs a side is "too few runs to tell", with no interval and no
// verdict. Before, two runs of 2 ms against two of 3 ms were "worse:
// median wall time +50% (interval +50%…+50%)": the bootstrap of two
// runs collapses onto the estimate.
func TestDiffTooFewRuns(t *testing.T) {
	def := bench.DiffOptions{MaxCostGrowth: -1, MaxTimeGrowth: -1}
	for _, c := range []struct {
		name       string
		base, next *bench.Report
	}{
		{"2ms-to-3ms", runsOf(0.1, 2, 2), runsOf(0.1, 3, 3)},
		{"2s-to-3s", runsOf(0.1, 2000, 2100), runsOf(0.1, 3000, 3100)},
		{"cost", runsOf(0.1, 2000, 2000, 2000, 2000, 2000), runsOf(0.2, 2000, 2000, 2000, 2000, 2000)},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := bench.Diff(c.base, c.next, def)
			require.NoError(t, err)
			require.False(t, d.Regressed)
			row := d.Rows[0]
			require.Empty(t, row.Verdict, "%+v", row)
			require.NotEmpty(t, row.Undecided)
			require.Contains(t, row.Undecided[0], "too few runs to tell")
			var out bytes.Buffer
			require.NoError(t, d.Write(&out, "table"))
			require.Contains(t, out.String(), "(too few runs)")
			require.Contains(t, out.String(), "too few runs to tell")
		})
	}

	// With MinMedianRuns a side, the same rise is a verdict.
	six := []int64{2000, 2000, 2000, 2000, 2000, 2000}
	slow := []int64{3100, 3100, 3100, 3100, 3100, 3100}
	d, err := bench.Diff(runsOf(0.1, six...), runsOf(0.1, slow...), def)
	require.NoError(t, err)
	require.True(t, d.Regressed)
	require.Contains(t, d.Rows[0].Why[0], "median wall time +55%")
}

// checked makes a report of claude's n runs on one task, the first k
// passing their check.
func checked(n, k int) *bench.Report {
	r := &bench.Report{PlanID: "p"}
	for i := range n {
		r.Runs = append(r.Runs, bench.RunReport{Index: i, Task: "t", Agent: "claude", Repeat: i + 1, Status: "success",
			WallMS: 1000, Check: &bench.CheckResult{Passed: i < k}})
	}
	return r
}

// TestDiffRateTooFewRuns: a rate's difference makes a row worse or
// better only when Fisher's exact test rejects equal rates too. Before,
// 2/2 → 0/2 was "worse: pass rate 100% → 0%" (Newcombe's interval
// [-100%, -7%] excludes zero; Fisher's p is 1/3).
func TestDiffRateTooFewRuns(t *testing.T) {
	def := bench.DiffOptions{MaxCostGrowth: -1, MaxTimeGrowth: -1}
	for _, c := range []struct {
		name       string
		base, next *bench.Report
		want       string
	}{
		{"2/2-to-0/2", checked(2, 2), checked(2, 0), "pass rate: too few runs to tell (100% → 0%, Fisher's exact p = 0.333; below 0.05 needed)"},
		{"0/2-to-2/2", checked(2, 0), checked(2, 2), "pass rate: too few runs to tell (0% → 100%, Fisher's exact p = 0.333; below 0.05 needed)"},
		{"3/3-to-0/3", checked(3, 3), checked(3, 0), "pass rate: too few runs to tell (100% → 0%, Fisher's exact p = 0.1; below 0.05 needed)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := bench.Diff(c.base, c.next, def)
			require.NoError(t, err)
			require.False(t, d.Regressed)
			row := d.Rows[0]
			require.Empty(t, row.Verdict, "%+v", row)
			require.True(t, row.RateDiffCIHi < 0 || row.RateDiffCILow > 0, "the interval alone excludes zero: %+v", row)
			require.Equal(t, c.want, row.Undecided[0])
			var out bytes.Buffer
			require.NoError(t, d.Write(&out, "table"))
			require.Contains(t, out.String(), "no difference shown; "+c.want)
		})
	}

	// Enough runs: a verdict.
	d, err := bench.Diff(checked(20, 20), checked(20, 0), def)
	require.NoError(t, err)
	require.True(t, d.Regressed)
	require.Equal(t, "worse", d.Rows[0].Verdict)
	require.Equal(t, []string{"pass rate 100% → 0%"}, d.Rows[0].Why)
	require.InEpsilon(t, 2.0/137846528820, d.Rows[0].RatePValue, 1e-9)
	d, err = bench.Diff(checked(20, 0), checked(20, 20), def)
	require.NoError(t, err)
	require.Equal(t, "better", d.Rows[0].Verdict)
	// 4/4 → 0/4: Fisher's p = 1/35, significant.
	d, err = bench.Diff(checked(4, 4), checked(4, 0), def)
	require.NoError(t, err)
	require.Equal(t, "worse", d.Rows[0].Verdict)
}

// TestDiffTimeNoise: a median wall time that rose by no more than the
// noise (DefaultTimeNoise, a second) is no regression, whatever its
// ratio and however many runs; TimeNoise < 0 takes the floor away.
// Before, 10 runs of 2 ms against 10 of 3 ms were +50 % worse.
func TestDiffTimeNoise(t *testing.T) {
	fast := runsOf(0.1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2)
	slower := runsOf(0.1, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3)
	d, err := bench.Diff(fast, slower, bench.DiffOptions{MaxCostGrowth: -1, MaxTimeGrowth: -1})
	require.NoError(t, err)
	require.False(t, d.Regressed)
	require.Empty(t, d.Rows[0].Verdict)
	require.Equal(t, []string{"wall time: +50% is +1ms, within measurement noise (1s)"}, d.Rows[0].Undecided)

	d, err = bench.Diff(fast, slower, bench.DiffOptions{MaxCostGrowth: -1, MaxTimeGrowth: -1, TimeNoise: -1})
	require.NoError(t, err)
	require.True(t, d.Regressed, "no floor")
	d, err = bench.Diff(runsOf(0.1, 2000, 2000, 2000, 2000, 2000, 2000), runsOf(0.1, 2600, 2600, 2600, 2600, 2600, 2600),
		bench.DiffOptions{MaxCostGrowth: -1, MaxTimeGrowth: -1, TimeNoise: 500 * time.Millisecond})
	require.NoError(t, err)
	require.True(t, d.Regressed, "+600ms is beyond a floor of 500ms")
}

// TestDiffNothingToCompare: reports whose runs all were skipped or not
// run on a side have nothing to compare: Diff says so (an error, one
// line) rather than a rate "+0% [-100%, +100%]" and "no difference
// shown". A row of its own with nothing to compare, beside rows that
// have, shows no interval and says why. A NEW whose runs did not run is
// still worse.
func TestDiffNothingToCompare(t *testing.T) {
	def := bench.DiffOptions{MaxCostGrowth: -1, MaxTimeGrowth: -1}
	skipped := synth(2, true, 1000, 0.1)
	for i := range skipped.Runs {
		skipped.Runs[i].Status = bench.StatusSkipped
	}
	for _, c := range []struct{ base, next *bench.Report }{
		{synth(2, true, 1000, 0.1), skipped}, {skipped, synth(2, true, 1000, 0.1)}, {skipped, skipped},
	} {
		_, err := bench.Diff(c.base, c.next, def)
		require.ErrorIs(t, err, bench.ErrNothingToCompare)
		require.NotContains(t, err.Error(), "\n")
	}

	// codex's runs were skipped in NEW, claude's ran: codex has nothing
	// to compare, and is listed once.
	partial := synth(2, true, 1000, 0.1)
	for i := range partial.Runs {
		if partial.Runs[i].Agent == "codex" {
			partial.Runs[i].Status = bench.StatusSkipped
		}
	}
	d, err := bench.Diff(synth(2, true, 1000, 0.1), partial, def)
	require.NoError(t, err)
	require.False(t, d.Regressed)
	var codex []bench.DiffRow
	for _, r := range d.Rows {
		if r.Agent == "codex" && r.Task == "" {
			codex = append(codex, r)
		}
	}
	require.Len(t, codex, 1)
	require.Equal(t, []string{"nothing to compare: no run of NEW ran"}, codex[0].Undecided)
	var out bytes.Buffer
	require.NoError(t, d.Write(&out, "table"))
	require.NotContains(t, out.String(), "[-100%, +100%]")
	require.Contains(t, out.String(), "nothing to compare: no run of NEW ran")
}

// TestDiffGroupFirstRunSkipped: a group whose first run was skipped is
// one row, not one row more for each skipped run before its first that
// ran.
func TestDiffGroupFirstRunSkipped(t *testing.T) {
	r := runsOf(0.1, 5000, 5000, 5000)
	r.Runs[0].Status = bench.StatusSkipped
	d, err := bench.Diff(r, r, bench.DiffOptions{MaxCostGrowth: -1, MaxTimeGrowth: -1})
	require.NoError(t, err)
	require.Len(t, d.Rows, 1)
}

// TestPairedNoPairs: in a bench's report, two groups that made no run of
// one task and repeat together (codex never ran) have nothing to
// compare: the paired table says so rather than "+0% [-100%, +100%]".
func TestPairedNoPairs(t *testing.T) {
	r := &bench.Report{Runs: []bench.RunReport{
		{Index: 0, Task: "t", Agent: "claude", Repeat: 1, Status: "success", Check: &bench.CheckResult{Passed: true}},
		{Index: 1, Task: "t", Agent: "codex", Repeat: 1, Status: bench.StatusSkipped},
	}}
	bench.Summarize(r)
	require.Len(t, r.Comparisons, 1)
	require.Zero(t, r.Comparisons[0].Pairs)
	for _, format := range []string{"table", "markdown"} {
		var out bytes.Buffer
		require.NoError(t, r.Write(&out, format))
		require.NotContains(t, out.String(), "[-100%, +100%]", format)
		require.Contains(t, out.String(), "nothing to compare: no pair", format)
	}
}
