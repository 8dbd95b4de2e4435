package bench_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/bench"
)

// TestInputsHoldFiguresBenchWrites: merge and compare refuse a run whose
// wall time, tokens or cost bench cannot have written (negative, or a
// cost past MaxRunCostUSD), from a report or a results directory's row,
// with one line. Before, two runs of cost_usd 1e308 were merged: their
// total was +Inf, which no JSON holds, so 'merge --report json' exited 1
// with "json: unsupported value: +Inf" and the report was not stored.
func TestInputsHoldFiguresBenchWrites(t *testing.T) {
	costly := func(i int, usd float64) bench.RunReport { r := run(i); r.CostUSD = &usd; return r }
	for name, tc := range map[string]struct {
		r    bench.RunReport
		want string
	}{
		"cost-past-any-run": {costly(1, 1e308), "run #2: cost_usd 1e+308: not a figure bench writes (0 to 1e+06)"},
		"cost-negative":     {costly(1, -0.5), "run #2: cost_usd -0.5: not a figure bench writes (0 to 1e+06)"},
		"wall-negative":     {func() bench.RunReport { r := run(1); r.WallMS = -5; return r }(), "run #2: wall_ms -5: not a figure bench writes"},
		"tokens-negative":   {func() bench.RunReport { r := run(1); r.Tokens.Output = -1; return r }(), "run #2: a token count below 0: not a figure bench writes"},
	} {
		t.Run(name, func(t *testing.T) {
			path := writeJSONFile(t, craftedReport(2, run(0), tc.r))
			_, err := bench.Merge([]string{path})
			require.EqualError(t, err, "bench: merge: "+path+": "+tc.want)

			dir, id := craftedDir(t)
			data, err := json.Marshal(bench.RunRecord{PlanID: id, Run: func() bench.RunReport { r := tc.r; r.Agent, r.Task = "codex", "one"; return r }()})
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, "runs", "000001.json"), data, 0o600))
			_, err = bench.Merge([]string{dir})
			require.ErrorContains(t, err, "000001.json: "+tc.want)

			rep := craftedReport(2, run(0), tc.r)
			_, err = bench.Diff(rep, rep, bench.DiffOptions{})
			require.EqualError(t, err, "bench: compare: BASE: "+tc.want)
		})
	}
	t.Run("the-largest-costs-sum", func(t *testing.T) {
		rep := craftedReport(2, costly(0, bench.MaxRunCostUSD), costly(1, bench.MaxRunCostUSD))
		m, err := bench.Merge([]string{writeJSONFile(t, rep)})
		require.NoError(t, err)
		_, err = json.Marshal(m)
		require.NoError(t, err)
	})
	t.Run("growth-past-a-float", func(t *testing.T) {
		// A median too small to divide by gives no growth, not +Inf.
		_, _, _, ok := bench.BootstrapGrowth([]float64{math.SmallestNonzeroFloat64}, []float64{1}, fixedRNG{})
		require.False(t, ok)
	})
}

type fixedRNG struct{}

func (fixedRNG) IntN(int) int { return 0 }
