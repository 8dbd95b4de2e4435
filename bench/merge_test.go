package bench_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/bench"
)

const craftedPlan = "0123456789abcdef0123456789abcdef"

// writeJSONFile writes v as JSON (a json.RawMessage as it is) to a new file and returns its path.
func writeJSONFile(t testing.TB, v any) string {
	t.Helper()
	data, ok := v.(json.RawMessage)
	if !ok {
		var err error
		data, err = json.Marshal(v)
		require.NoError(t, err)
	}
	path := filepath.Join(t.TempDir(), "report.json")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	return path
}

func craftedReport(planned int, runs ...bench.RunReport) *bench.Report {
	return &bench.Report{PlanID: craftedPlan, Planned: planned, Runs: runs}
}

func run(i int) bench.RunReport {
	return bench.RunReport{Index: i, Agent: "claude", Repeat: 1, Status: "success"}
}

// TestMergeRefusesCraftedReports: a report's counts are checked against
// the plan, not believed: 5 million planned runs cost 2 GB, 3 billion 17
// GB, before.
func TestMergeRefusesCraftedReports(t *testing.T) {
	sharded := craftedReport(10, run(3), run(4))
	sharded.Shard = &bench.Shard{Index: 1, Count: 3}
	manyGroups := craftedReport(9) // the limit is 8 below
	for i := range 9 {
		r := run(i)
		r.Model = "m" + strconv.Itoa(i)
		manyGroups.Runs = append(manyGroups.Runs, r)
	}
	for name, tc := range map[string]struct {
		inputs []any
		want   string
	}{
		"planned-5-million":   {[]any{craftedReport(5_000_000, run(0))}, "a plan of 5000000 runs: not a plan bench makes"},
		"planned-3-billion":   {[]any{craftedReport(3_000_000_000, run(0))}, "not a plan bench makes"},
		"planned-just-over":   {[]any{craftedReport(bench.MaxRuns+1, run(0))}, "not a plan bench makes"},
		"planned-negative":    {[]any{craftedReport(-1, run(0))}, "not a plan bench makes"},
		"planned-disagrees":   {[]any{craftedReport(4, run(0)), craftedReport(40, run(1))}, "gives it 40"},
		"index-past-the-plan": {[]any{craftedReport(4, run(4))}, "run #5 is not in its plan"},
		"index-negative":      {[]any{craftedReport(4, run(-7))}, "a run has index -7: not a report bench writes"},
		"index-outside-shard": {[]any{func() *bench.Report { r := *sharded; r.Runs = []bench.RunReport{run(0)}; return &r }()}, "run #1 is not in its shard 1/3"},
		"index-outside-groups": {[]any{func() *bench.Report {
			r := *sharded // groups 1 and 2 of 5 tasks × 2 agents: runs 2 to 5
			r.Shape = &bench.Shape{Tasks: 5, Models: 1, Repeats: 1, Agents: 2}
			r.Runs = []bench.RunReport{run(2), run(6)}
			return &r
		}()}, "run #7 is not in its shard 1/3"},
		"bad-shape": {[]any{func() *bench.Report {
			r := *sharded
			r.Shape = &bench.Shape{Tasks: 5, Models: 1, Repeats: 1, Agents: 3}
			return &r
		}()}, "not the 10 runs of its plan"},
		"bad-shard":              {[]any{func() *bench.Report { r := *sharded; r.Shard = &bench.Shard{Index: 3, Count: 3}; return &r }()}, "not a shard bench makes"},
		"same-run-twice":         {[]any{craftedReport(4, run(1), run(1))}, "holds run #2 twice"},
		"run-without-agent":      {[]any{craftedReport(4, bench.RunReport{Index: 2})}, "run #3 has no agent"},
		"too-many-groups":        {[]any{manyGroups}, "more than 8 agent × model groups"},
		"more-runs-than-planned": {[]any{json.RawMessage(`{"plan_id":"` + craftedPlan + `","planned":2,"runs":[{},{},{}` + strings.Repeat(`,{}`, 1<<20) + `]}`)}, "more than 2 runs"},
		"more-runs-than-a-plan":  {[]any{json.RawMessage(`{"plan_id":"` + craftedPlan + `","runs":[` + strings.Repeat(`{},`, 100) + `{}],"planned":1}`)}, "more than 100 runs"},
		"runs-not-an-array":      {[]any{json.RawMessage(`{"plan_id":"` + craftedPlan + `","planned":1,"runs":{}}`)}, "runs: not an array"},
		"data-after-report":      {[]any{json.RawMessage(`{"plan_id":"` + craftedPlan + `","planned":1,"runs":[]} {}`)}, "not a bench JSON report"},
		"no-runs":                {[]any{json.RawMessage(`{"plan_id":"` + craftedPlan + `","planned":1,"groups":[]}`)}, "no runs"},
		"not-an-object":          {[]any{json.RawMessage(`[1,2]`)}, "not a JSON object"},
		"planned-not-a-number":   {[]any{json.RawMessage(`{"plan_id":"` + craftedPlan + `","planned":"lots","runs":[]}`)}, "not a bench JSON report"},
	} {
		t.Run(name, func(t *testing.T) {
			defer bench.SetLimits(100, 8)()
			var paths []string
			for _, in := range tc.inputs {
				paths = append(paths, writeJSONFile(t, in))
			}
			_, err := bench.Merge(paths)
			require.ErrorContains(t, err, tc.want)
			require.NotContains(t, err.Error(), "\n")
		})
	}

	t.Run("the-largest-plan-stays-small", func(t *testing.T) {
		// The largest plan a report may name, with one run: all the
		// others missing is what the merge holds, a few MB.
		path := writeJSONFile(t, craftedReport(bench.MaxRuns, run(0)))
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		m, err := bench.Merge([]string{path})
		runtime.ReadMemStats(&after)
		require.NoError(t, err)
		require.Len(t, m.Missing, bench.MaxRuns-1)
		require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<20))
	})
	t.Run("aggregates-are-not-read", func(t *testing.T) {
		// A report's groups and comparisons are recomputed: however many
		// it claims, they are skipped, not decoded.
		junk := `{"plan_id":"` + craftedPlan + `","planned":2,"groups":[` + strings.Repeat(`{},`, 1<<20) + `{}],` +
			`"comparisons":[[[{"a":[1,2,{"b":null}]}]]],"runs":[{"index":1,"agent":"claude","status":"success"}]}`
		m, err := bench.Merge([]string{writeJSONFile(t, json.RawMessage(junk))})
		require.NoError(t, err)
		require.Len(t, m.Runs, 1)
		require.Len(t, m.Groups, 1)
		require.Equal(t, []bench.RunKey{{Index: 0}}, m.Missing)
	})
}

// craftedDir makes a results directory of the plan of two tasks × two
// agents, its rows as rows says (index → file content).
func craftedDir(t *testing.T) (dir string, planID string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "results")
	specs := resumePlan().Specs()
	_, err := bench.OpenResults(dir, specs, "", "")
	require.NoError(t, err)
	var pf bench.PlanFile
	data, err := os.ReadFile(filepath.Join(dir, "plan.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &pf))
	return dir, pf.PlanID
}

func TestMergeRefusesCraftedDirectories(t *testing.T) {
	row := func(t *testing.T, dir, name string, content string) {
		t.Helper()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "runs", name), []byte(content), 0o600))
	}
	goodRow := func(planID string, i int, agent, task string) string {
		data, _ := json.Marshal(bench.RunRecord{PlanID: planID, Run: bench.RunReport{Index: i, Agent: agent, Task: task, Repeat: 1, Status: "success"}})
		return string(data)
	}
	for name, tc := range map[string]struct {
		setup func(t *testing.T, dir, planID string)
		want  string
	}{
		"row-past-the-plan": {func(t *testing.T, dir, id string) { row(t, dir, "000004.json", goodRow(id, 4, "claude", "one")) },
			"000004.json: not the row of a run of this plan of 4 runs"},
		"row-misnamed": {func(t *testing.T, dir, id string) { row(t, dir, "1.json", goodRow(id, 1, "codex", "one")) },
			"1.json: not the row of a run"},
		"row-of-another-run": {func(t *testing.T, dir, id string) { row(t, dir, "000001.json", goodRow(id, 1, "claude", "two")) },
			"run #2 is not the run"},
		"row-too-large": {func(t *testing.T, dir, id string) {
			row(t, dir, "000001.json", goodRow(id, 1, "codex", "one")+strings.Repeat(" ", 1<<20))
		}, "more than 1048576 bytes"},
		"row-a-fifo": {func(t *testing.T, dir, id string) {
			require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "runs", "000001.json"), 0o600))
		}, "000001.json: not a regular file"},
		"plan-a-fifo": {func(t *testing.T, dir, id string) {
			require.NoError(t, os.Remove(filepath.Join(dir, "plan.json")))
			require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "plan.json"), 0o600))
		}, "plan.json: not a regular file"},
		"plan-too-large": {func(t *testing.T, dir, id string) {
			var b strings.Builder
			b.WriteString(`{"version":1,"plan_id":"` + id + `","runs":[`)
			for i := range 100 {
				fmt.Fprintf(&b, `{"index":%d,"agent":"claude"},`, i)
			}
			b.WriteString(`{"index":100,"agent":"claude"}]}`)
			require.NoError(t, os.WriteFile(filepath.Join(dir, "plan.json"), []byte(b.String()), 0o600))
		}, "a plan of 101 runs: not a plan bench makes (1 to 100)"},
		"plan-too-many-groups": {func(t *testing.T, dir, id string) {
			var b strings.Builder
			b.WriteString(`{"version":1,"plan_id":"` + id + `","runs":[{"index":0,"agent":"claude"}`)
			for i := 1; i < 10; i++ {
				fmt.Fprintf(&b, `,{"index":%d,"agent":"claude","model":"m%d"}`, i, i)
			}
			b.WriteString(`]}`)
			require.NoError(t, os.WriteFile(filepath.Join(dir, "plan.json"), []byte(b.String()), 0o600))
		}, "more than 8 agent × model groups"},
		"plan-out-of-order": {func(t *testing.T, dir, id string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "plan.json"),
				[]byte(`{"version":1,"plan_id":"`+id+`","runs":[{"index":1,"agent":"claude"}]}`), 0o600))
		}, "run #1 is not a run of a plan"},
	} {
		t.Run(name, func(t *testing.T) {
			defer bench.SetLimits(100, 8)()
			dir, id := craftedDir(t)
			row(t, dir, "000000.json", goodRow(id, 0, "claude", "one"))
			tc.setup(t, dir, id)
			_, err := bench.Merge([]string{dir})
			require.ErrorContains(t, err, tc.want)
			require.NotContains(t, err.Error(), "\n")
		})
	}
	t.Run("a-report-against-the-directory", func(t *testing.T) {
		dir, id := craftedDir(t)
		r := craftedReport(4, bench.RunReport{Index: 3, Agent: "claude", Task: "one", Repeat: 1, Status: "success"})
		r.PlanID = id
		_, err := bench.Merge([]string{writeJSONFile(t, r), dir})
		require.ErrorContains(t, err, "run #4 is not the run")
		r.Runs[0].Agent, r.Runs[0].Task = "codex", "two"
		m, err := bench.Merge([]string{writeJSONFile(t, r), dir})
		require.NoError(t, err)
		require.Len(t, m.Missing, 3)
	})
}

func TestPlanSizeIsBounded(t *testing.T) {
	p := resumePlan()
	require.NoError(t, p.CheckSize())
	p.Repeat = bench.MaxRuns / 4
	require.NoError(t, p.CheckSize())
	p.Repeat++
	require.ErrorContains(t, p.CheckSize(), "more than 100000 runs")
	p.Repeat = 1 << 62
	require.ErrorContains(t, p.CheckSize(), "more than 100000 runs")
	p.Repeat = 1
	for i := range bench.MaxGroups / 2 {
		p.Models = append(p.Models, "m"+strconv.Itoa(i))
	}
	require.NoError(t, p.CheckSize())
	p.Models = append(p.Models, "one-more")
	require.ErrorContains(t, p.CheckSize(), "more than 256 groups")
}

// BenchmarkMergeLargestPlan merges a report naming the largest plan bench
// makes with one run recorded: all it holds is the missing list, bounded
// by MaxRuns (a report claiming 5 million runs took 2.1 GB, before).
func BenchmarkMergeLargestPlan(b *testing.B) {
	path := writeJSONFile(b, craftedReport(bench.MaxRuns, run(0)))
	for b.Loop() {
		m, err := bench.Merge([]string{path})
		if err != nil || len(m.Missing) != bench.MaxRuns-1 {
			b.Fatal(err)
		}
	}
}
