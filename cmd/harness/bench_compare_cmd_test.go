package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/bench"
)

// writeRuns writes a JSON report of claude's runs on task t, one per
// wall time (ms), skipped when the time is negative.
func writeRuns(t *testing.T, dir, name string, walls ...int64) string {
	t.Helper()
	r := &bench.Report{PlanID: "p"}
	for i, w := range walls {
		run := bench.RunReport{Index: i, Task: "t", Agent: "claude", Repeat: i + 1, Status: "success", WallMS: w,
			Check: &bench.CheckResult{Passed: true}}
		if w < 0 {
			run.Status, run.WallMS, run.Check = bench.StatusSkipped, 0, nil
		}
		r.Runs = append(r.Runs, run)
	}
	return writeCompareReport(t, dir, name, r)
}

// TestBenchCompareNothingToCompare: reports whose runs never ran on one
// side have nothing to compare: one line and exit 2, no table. Before,
// the table gave a rate "+0% [-100%, +100%]", "no difference shown" and
// exit 0: the gate passed on nothing.
func TestBenchCompareNothingToCompare(t *testing.T) {
	home := isolate(t)
	ran := writeRuns(t, home, "ran", 1000, 1000)
	skipped := writeRuns(t, home, "skipped", -1, -1)
	for _, args := range [][]string{{ran, skipped}, {skipped, ran}, {skipped, skipped}} {
		r := invoke(t, "", append([]string{"bench", "compare"}, args...)...)
		require.Equal(t, exitUsage, r.code, r.stdout)
		require.Empty(t, r.stdout)
		require.Contains(t, r.stderr, "nothing to compare")
		require.Equal(t, 1, strings.Count(strings.TrimSpace(r.stderr), "\n")+1, r.stderr)
	}
}

// TestBenchCompareTimeNoise: two runs a side of 2 ms against 3 ms are
// too few to tell, and ten are within the noise of --time-noise (1s by
// default): exit 0; --time-noise 0 takes the floor away. Before, both
// were "worse: median wall time +50%", exit 1.
func TestBenchCompareTimeNoise(t *testing.T) {
	home := isolate(t)
	r := invoke(t, "", "bench", "compare", writeRuns(t, home, "b2", 2, 2), writeRuns(t, home, "n2", 3, 3))
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "too few runs to tell")

	ten := func(ms int64) []int64 { return []int64{ms, ms, ms, ms, ms, ms, ms, ms, ms, ms} }
	base, next := writeRuns(t, home, "b10", ten(2)...), writeRuns(t, home, "n10", ten(3)...)
	r = invoke(t, "", "bench", "compare", base, next)
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "within measurement noise (1s)")
	r = invoke(t, "", "bench", "compare", "--time-noise", "0", base, next)
	require.Equal(t, exitAgentFailed, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "worse: median wall time +50%")
	r = invoke(t, "", "bench", "compare", "--time-noise", "-1s", base, next)
	require.Equal(t, exitUsage, r.code, r.stdout+r.stderr)
}

// writeChecked writes a JSON report of claude's n runs on task t, the
// first k passing their check.
func writeChecked(t *testing.T, dir, name string, n, k int) string {
	t.Helper()
	r := &bench.Report{PlanID: "p"}
	for i := range n {
		r.Runs = append(r.Runs, bench.RunReport{Index: i, Task: "t", Agent: "claude", Repeat: i + 1, Status: "success",
			WallMS: 1000, Check: &bench.CheckResult{Passed: i < k}})
	}
	b, err := json.Marshal(r)
	require.NoError(t, err)
	p := filepath.Join(dir, name+".json")
	require.NoError(t, os.WriteFile(p, b, 0o600))
	return p
}

// TestBenchCompareRateTooFewRuns: 2/2 → 0/2 passes is too few runs to
// tell (Fisher's exact p = 1/3), exit 0; 20/20 → 0/20 is worse, exit 1.
// Before, 2/2 → 0/2 was "worse: pass rate 100% → 0%", exit 1.
func TestBenchCompareRateTooFewRuns(t *testing.T) {
	home := isolate(t)
	r := invoke(t, "", "bench", "compare", writeChecked(t, home, "b2", 2, 2), writeChecked(t, home, "n2", 2, 0))
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "pass rate: too few runs to tell (100% → 0%, Fisher's exact p = 0.333; below 0.05 needed)")

	r = invoke(t, "", "bench", "compare", "--report", "json", writeChecked(t, home, "b2", 2, 2), writeChecked(t, home, "n2", 2, 0))
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	var d bench.DiffReport
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &d))
	require.InDelta(t, 1.0/3, d.Rows[0].RatePValue, 1e-12)
	require.Contains(t, r.stdout, `"rate_p_value"`)

	r = invoke(t, "", "bench", "compare", writeChecked(t, home, "b20", 20, 20), writeChecked(t, home, "n20", 20, 0))
	require.Equal(t, exitAgentFailed, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "worse: pass rate 100% → 0%")
}
