package bench_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/harnesstest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestPercentile(t *testing.T) {
	for _, tc := range []struct {
		name     string
		xs       []int64
		p50, p90 int64
	}{
		{"none", nil, 0, 0},
		{"one", []int64{7}, 7, 7},
		{"two-lower-middle", []int64{20, 10}, 10, 20},
		{"three", []int64{3, 1, 2}, 2, 3},
		{"four", []int64{4, 1, 3, 2}, 2, 4},
		{"ten", []int64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, 5, 9},
		{"eleven", []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 6, 10},
		{"ties", []int64{5, 5, 5, 1}, 5, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := append([]int64(nil), tc.xs...)
			require.Equal(t, tc.p50, bench.Percentile(tc.xs, 50))
			require.Equal(t, tc.p90, bench.Percentile(tc.xs, 90))
			require.Equal(t, in, tc.xs, "the input is not reordered")
		})
	}
	require.Equal(t, 0.5, bench.Percentile([]float64{0.5, 0.25, 1}, 50))
}

func i64(n int64) *int64     { return &n }
func f64(f float64) *float64 { return &f }
func intp(n int) *int        { return &n }

// sampleRuns are known inputs: claude 3 runs (one failed, one check
// failed), codex 2 runs with estimated costs and one skipped.
func sampleRuns() []bench.RunReport {
	return []bench.RunReport{
		{Index: 0, Task: "add-file", Agent: "claude", Model: "sonnet", ReportedModel: "claude-sonnet-4", Repeat: 1, Run: "run_A",
			Status: "success", WallMS: 12000, FirstOutputMS: i64(900), FirstToolMS: i64(2100), Turns: 4, ToolCalls: 3,
			ToolsByKind: map[string]int{"write": 1, "shell": 2}, Files: &bench.FilesChanged{Files: 1, Insertions: 3, Paths: []string{"out.txt"}},
			Tokens: event.Tokens{Input: 1000, Output: 200, CacheRead: 5000, Reasoning: 10}, CostUSD: f64(0.02),
			Check: &bench.CheckResult{Command: "test -f out.txt", Passed: true, DurationMS: 5}, ExitCode: intp(0),
			Log: "/logs/run_A.ndjson"},
		{Index: 1, Task: "add-file", Agent: "claude", Model: "sonnet", Repeat: 2, Run: "run_B",
			Status: "success", WallMS: 30000, FirstOutputMS: i64(1200), Turns: 2, ToolCalls: 0,
			Files: &bench.FilesChanged{}, Tokens: event.Tokens{Input: 3000, Output: 400}, CostUSD: f64(0.04),
			Check: &bench.CheckResult{Command: "test -f out.txt", ExitCode: 1, Output: "no | file"}, Log: "/logs/run_B.ndjson"},
		{Index: 2, Task: "add-file", Agent: "claude", Model: "sonnet", Repeat: 3, Run: "run_C",
			Status: "timeout", Reason: "idle_timeout", Detail: "no output for 5m0s", Killed: true, WallMS: 300500,
			Tokens: event.Tokens{Input: 2000, Output: 100}, Log: "/logs/run_C.ndjson",
			Check: &bench.CheckResult{Command: "sleep 9", TimedOut: true, ExitCode: -1, Error: "the check exceeded its 1s limit"}},
		{Index: 3, Task: "add-file", Agent: "codex", ReportedModel: "gpt-5-codex", Repeat: 1, Run: "run_D", Status: "success", WallMS: 8000,
			FirstOutputMS: i64(400), FirstToolMS: i64(800), Turns: 1, ToolCalls: 1, ToolsByKind: map[string]int{"edit": 1},
			Files:  &bench.FilesChanged{Files: 2, Insertions: 10, Deletions: 4, Paths: []string{"a.go", "b.go"}},
			Tokens: event.Tokens{Input: 500, Output: 50, CacheWrite: 70}, CostUSD: f64(0.01), CostEstimated: true,
			Log: "/logs/run_D.ndjson"},
		{Index: 4, Task: "add-file", Agent: "codex", Repeat: 2, Status: "skipped"},
	}
}

// groups is the report's Groups for runs, as Summarize computes them.
func groups(runs []bench.RunReport) []bench.Group {
	r := &bench.Report{Runs: runs}
	bench.Summarize(r)
	return r.Groups
}

func TestGroups(t *testing.T) {
	g := groups(sampleRuns())
	require.Len(t, g, 2)
	claude, codex := g[0], g[1]
	require.Equal(t, "claude", claude.Agent)
	require.Equal(t, "sonnet", claude.Model)
	require.Equal(t, 3, claude.Runs)
	require.Equal(t, 2, claude.Succeeded)
	require.InDelta(t, 2.0/3, claude.SuccessRate, 1e-9)
	require.Equal(t, 3, claude.Checked, "a timed-out check is a verdict: fail")
	require.Equal(t, 1, claude.Passed)
	require.InDelta(t, 1.0/3, *claude.PassRate, 1e-9)
	require.Equal(t, int64(30000), claude.WallP50MS)
	require.Equal(t, int64(300500), claude.WallP90MS)
	require.Equal(t, int64(2000), claude.InputP50)
	require.Equal(t, int64(200), claude.OutputP50)
	require.Equal(t, 2, claude.CostRuns, "the median cost is over runs that report one")
	require.InDelta(t, 0.02, *claude.CostP50USD, 1e-12)
	require.InDelta(t, 0.06, *claude.CostTotalUSD, 1e-12)
	require.False(t, claude.CostEstimated)

	require.Equal(t, 1, codex.Runs)
	require.Equal(t, 1, codex.Skipped)
	require.Equal(t, 1.0, codex.SuccessRate)
	require.Nil(t, codex.PassRate, "no check, no pass rate")
	require.Equal(t, int64(8000), codex.WallP50MS)
	require.True(t, codex.CostEstimated)

	empty := groups([]bench.RunReport{{Agent: "gemini", Status: "skipped"}})[0]
	require.Zero(t, empty.Runs)
	require.Zero(t, empty.SuccessRate)
	require.Nil(t, empty.CostP50USD)
}

func sampleReport() *bench.Report {
	runs := sampleRuns()
	r := &bench.Report{Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), WallMS: 310000, Parallel: 2,
		Cancelled: true, Runs: runs}
	bench.Summarize(r)
	return r
}

func TestFormatsGolden(t *testing.T) {
	for _, format := range []string{"table", "markdown", "csv", "json"} {
		t.Run(format, func(t *testing.T) {
			var out bytes.Buffer
			require.NoError(t, sampleReport().Write(&out, format))
			harnesstest.Golden(t, filepath.Join("testdata", "report."+format+".golden"), out.Bytes(), *update)
		})
	}
}

func TestJSONRoundTrip(t *testing.T) {
	rep := sampleReport()
	var out bytes.Buffer
	require.NoError(t, rep.Write(&out, "json"))
	var back bench.Report
	require.NoError(t, json.Unmarshal(out.Bytes(), &back))
	require.Equal(t, *rep, back)
}

func TestCSVShape(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, sampleReport().Write(&out, "csv"))
	rows, err := csv.NewReader(&out).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 1+len(sampleRuns()))
	for _, r := range rows {
		require.Len(t, r, len(rows[0]))
	}
}

func TestUnknownFormat(t *testing.T) {
	err := sampleReport().Write(&bytes.Buffer{}, "yaml")
	require.ErrorContains(t, err, `unknown report format "yaml"`)
}

// A task named with a line break or a tab (a Harbor task is named by its
// directory) keeps each row of the table and of markdown on one line:
// before, the row was cut in two and the columns misaligned.
func TestTableCellsOneLine(t *testing.T) {
	rep := sampleReport()
	for i := range rep.Runs {
		rep.Runs[i].Task = "nl\nx\ttab\rcr"
	}
	bench.Summarize(rep)
	for _, format := range []string{"table", "markdown"} {
		var out bytes.Buffer
		require.NoError(t, rep.Write(&out, format))
		require.NotContains(t, out.String(), "\t", format)
		require.NotContains(t, out.String(), "\r", format)
		require.Contains(t, out.String(), `nl\nx\ttab\rcr`, format)
		for _, line := range strings.Split(out.String(), "\n") {
			require.False(t, strings.HasPrefix(line, "x"), "%s: a row cut in two: %q", format, line)
		}
	}
}

// The summary line counts in English and says no more ran at once than
// there were runs: a bench of one run with --parallel 2 said "1 runs, 2 at
// a time".
func TestSummaryLine(t *testing.T) {
	for _, c := range []struct {
		runs, parallel int
		want           string
	}{
		{1, 2, "## Bench: 1 run, 1 at a time, 5m10s\n"},
		{2, 2, "## Bench: 2 runs, 2 at a time, 5m10s\n"},
		{3, 2, "## Bench: 3 runs, 2 at a time, 5m10s\n"},
		{1, 0, "## Bench: 1 run, 5m10s\n"},
		{0, 4, "## Bench: 0 runs, 5m10s\n"},
	} {
		rep := sampleReport()
		rep.Runs, rep.Parallel = sampleRuns()[:c.runs], c.parallel
		bench.Summarize(rep)
		var out bytes.Buffer
		require.NoError(t, rep.Write(&out, "markdown"))
		first, _, _ := strings.Cut(out.String(), "\n")
		require.Equal(t, c.want, first+"\n", "%d runs, --parallel %d", c.runs, c.parallel)
	}
}
