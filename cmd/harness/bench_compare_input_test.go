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

// TestBenchCompareRefusesWhatMergeRefuses: a report holding more runs
// than its plan (here NEW's 8 runs and 32 copies of its failing ones)
// is refused by compare as by merge: one line, exit 2, no table. So is
// a read-only BASE against a full-access NEW. Before, compare counted
// every copy and called NEW worse (exit 1), and compared the two
// permission modes as one condition (exit 0).
func TestBenchCompareRefusesWhatMergeRefuses(t *testing.T) {
	home := isolate(t)
	write := func(name, perm string, pass []bool, copies int) string {
		t.Helper()
		r := &bench.Report{PlanID: "0123456789abcdef0123456789abcdef", Planned: len(pass), Permissions: perm}
		for i, p := range pass {
			r.Runs = append(r.Runs, bench.RunReport{Index: i, Task: "t", Agent: "claude", Repeat: i + 1, Status: "success",
				WallMS: 1000, Check: &bench.CheckResult{Passed: p}})
		}
		for range copies {
			for _, rr := range r.Runs[:len(pass)] {
				if !rr.Check.Passed {
					r.Runs = append(r.Runs, rr)
				}
			}
		}
		b, err := json.Marshal(r)
		require.NoError(t, err)
		p := filepath.Join(home, name+".json")
		require.NoError(t, os.WriteFile(p, b, 0o600))
		return p
	}
	half := []bool{true, false, true, false, true, false, true, false}
	base := write("base", "", half, 0)
	for name, tc := range map[string]struct {
		next, want string
	}{
		"copied-runs": {write("copied", "", half, 8), "not a bench JSON report: more than 8 runs: more than its plan has"},
		"read-only":   {write("ro", "read-only", half, 0), "BASE ran with --permissions full-access and no --max-turns, NEW with --permissions read-only"},
	} {
		t.Run(name, func(t *testing.T) {
			r := invoke(t, "", "bench", "compare", base, tc.next)
			require.Equal(t, exitUsage, r.code, r.stdout+r.stderr)
			require.Empty(t, r.stdout)
			require.Contains(t, r.stderr, tc.want)
			require.Equal(t, 1, strings.Count(strings.TrimSpace(r.stderr), "\n")+1, r.stderr)
			r = invoke(t, "", "bench", "merge", "--no-store", base, tc.next)
			require.Equal(t, exitUsage, r.code, "merge refuses it too: %s", r.stderr)
		})
	}
}
