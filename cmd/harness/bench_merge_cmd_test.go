package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/bench"
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

// The exit lines of bench and merge count as the reports do: a count of
// one is singular (internal/plural). Before, one failed run of one said
// "1 of 1 runs failed", a merge missing the one run of its plan "1 of 1
// runs missing, 0 duplicate".
func TestBenchExitLinesCountInEnglish(t *testing.T) {
	run := func(status string, passed bool) bench.RunReport {
		return bench.RunReport{Agent: "claude", Status: status, Check: &bench.CheckResult{Passed: passed}}
	}
	for _, c := range []struct {
		runs []bench.RunReport
		want string
	}{
		{[]bench.RunReport{run("error", false)}, "bench: 1 of 1 run failed or did not pass their check"},
		{[]bench.RunReport{run("success", false), run("success", true)}, "bench: 1 of 2 runs failed or did not pass their check"},
		{[]bench.RunReport{{Agent: "codex", Status: "error", Reason: "not_installed"}},
			"bench: 0 of 1 run failed or did not pass their check, 1 did not run"},
	} {
		require.EqualError(t, benchStatus(&bench.Report{Runs: c.runs}), c.want)
	}

	home := isolate(t)
	empty := writeCompareReport(t, home, "empty", &bench.Report{PlanID: "0123456789abcdef0123456789abcdef", Planned: 1, Runs: []bench.RunReport{}})
	r := invoke(t, "", "bench", "merge", "--no-store", empty)
	require.Equal(t, exitAgentFailed, r.code, r.stderr)
	require.Equal(t, "harness: bench: merge: plan 0123456789abcdef0123456789abcdef: 1 of 1 run missing, 0 duplicates (the report lists them)\n", r.stderr)
}
