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

// compareReport is a report of claude's runs on task t, all passed, of
// a plan of planned runs under engine.
func compareReport(engine string, planned, runs int) *bench.Report {
	r := &bench.Report{PlanID: "0123456789abcdef0123456789abcdef", Planned: planned, Isolate: engine}
	for i := range runs {
		r.Runs = append(r.Runs, bench.RunReport{Index: i % planned, Task: "t", Agent: "claude", Repeat: i + 1,
			Status: "success", WallMS: 1000, Check: &bench.CheckResult{Passed: true}})
	}
	return r
}

func writeCompareReport(t *testing.T, dir, name string, r *bench.Report) string {
	t.Helper()
	b, err := json.Marshal(r)
	require.NoError(t, err)
	p := filepath.Join(dir, name+".json")
	require.NoError(t, os.WriteFile(p, b, 0o600))
	return p
}

// TestBenchCompareEngines: a BASE under --isolate none against a NEW
// under podman is another condition: one line, exit 2, no table, as
// merge refuses them. A report without isolate (an earlier harness's)
// is none. Before, compare took them as one condition (exit 0).
func TestBenchCompareEngines(t *testing.T) {
	home := isolate(t)
	none := writeCompareReport(t, home, "none", compareReport("none", 8, 8))
	old := writeCompareReport(t, home, "old", compareReport("", 8, 8))
	podman := writeCompareReport(t, home, "podman", compareReport("podman", 8, 8))
	r := invoke(t, "", "bench", "compare", none, podman)
	require.Equal(t, exitUsage, r.code, r.stdout+r.stderr)
	require.Empty(t, r.stdout)
	require.Contains(t, r.stderr, "bench: compare: not comparable: BASE ran under --isolate none, NEW under --isolate podman")
	require.Equal(t, 1, strings.Count(strings.TrimSpace(r.stderr), "\n")+1, r.stderr)
	r = invoke(t, "", "bench", "merge", "--no-store", none, podman)
	require.Equal(t, exitUsage, r.code, "merge refuses them too: %s", r.stderr)

	r = invoke(t, "", "bench", "compare", old, podman)
	require.Equal(t, exitUsage, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stderr, "BASE ran under --isolate none, NEW under --isolate podman")
	r = invoke(t, "", "bench", "compare", old, none)
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
}

// TestBenchCompareReadsReportsBounded: compare reads a JSON report as
// merge does, decoding no more runs than its plan has, so a report far
// larger than its plan is refused at its first run too many, with
// merge's line (op aside) and exit 2. The file here ends right after
// that run, cut short as a huge one would be at that point: the bounded
// reader never gets there. Before, compare read the file whole first
// (a 636 MB report of a plan of 8: 4.1 GB RSS, 7 s; merge 15 MB) and
// said it was not JSON.
func TestBenchCompareReadsReportsBounded(t *testing.T) {
	home := isolate(t)
	base := writeCompareReport(t, home, "base", compareReport("", 2, 2))
	b, err := json.Marshal(compareReport("", 2, 3))
	require.NoError(t, err)
	cut := strings.LastIndex(string(b), "]") // the rest of a huge file never read
	huge := filepath.Join(home, "huge.json")
	require.NoError(t, os.WriteFile(huge, b[:cut], 0o600))

	merge := invoke(t, "", "bench", "merge", "--no-store", huge)
	require.Equal(t, exitUsage, merge.code, merge.stderr)
	require.Contains(t, merge.stderr, "more than 2 runs: more than its plan has")
	for _, args := range [][]string{{base, huge}, {huge, base}} {
		r := invoke(t, "", append([]string{"bench", "compare"}, args...)...)
		require.Equal(t, exitUsage, r.code, r.stdout+r.stderr)
		require.Empty(t, r.stdout)
		require.Equal(t, strings.Replace(merge.stderr, "bench: merge: ", "bench: compare: ", 1), r.stderr)
	}
}
