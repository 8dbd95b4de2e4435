package bench_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/bench"
)

func TestParseShard(t *testing.T) {
	s, err := bench.ParseShard("1/3")
	require.NoError(t, err)
	require.Equal(t, bench.Shard{Index: 1, Count: 3}, s)
	require.Equal(t, "1/3", s.String())
	for _, bad := range []string{"3/3", "x", "", "1", "-1/3", "0/0", "1/x", "a/3", "1/3/4"} {
		_, err := bench.ParseShard(bad)
		require.Error(t, err, bad)
	}
}

func TestShardsPartitionThePlan(t *testing.T) {
	for size := 0; size <= 30; size++ {
		specs := make([]bench.Spec, size)
		for i := range specs {
			specs[i].Index = i
		}
		for n := 1; n <= 7; n++ {
			var got []int
			for i := range n {
				for _, s := range (bench.Shard{Index: i, Count: n}).Of(specs, bench.Shape{}) {
					got = append(got, s.Index)
				}
			}
			want := make([]int, size)
			for i := range want {
				want[i] = i
			}
			if size == 0 {
				want = nil
			}
			require.Equal(t, want, got, "size %d, %d shards: each run once, in order", size, n)
		}
	}
}

// TestShardsKeepGroupsWhole: a shard holds whole groups (the runs of every
// model and agent on one task and repeat: a paired comparison's), the N
// shards hold every run once, and their numbers of groups differ by at
// most one. Before, a shard was a block of n/N runs: with 6 tasks × 2
// agents in 5 shards, reward-json's oracle (run 6) was in shard 2 and its
// nop (run 7) in shard 3.
func TestShardsKeepGroupsWhole(t *testing.T) {
	plan := func(tasks, models, repeats, agents int) bench.Plan {
		p := bench.Plan{Repeat: repeats}
		for i := range tasks {
			p.Tasks = append(p.Tasks, bench.Task{Name: fmt.Sprintf("t%d", i), Prompt: "x"})
		}
		for i := range agents {
			p.Agents = append(p.Agents, fmt.Sprintf("a%d", i))
		}
		for i := range models {
			if models > 1 {
				p.Models = append(p.Models, fmt.Sprintf("m%d", i))
			}
		}
		return p
	}
	p := plan(6, 1, 1, 2)
	for i := range 5 {
		var idx []int
		for _, s := range (bench.Shard{Index: i, Count: 5}).Of(p.Specs(), p.Shape()) {
			idx = append(idx, s.Index)
		}
		require.Equal(t, [][]int{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9, 10, 11}}[i], idx, "shard %d/5", i)
	}

	for tasks := 1; tasks <= 4; tasks++ {
		for models := 1; models <= 2; models++ {
			for repeats := 1; repeats <= 3; repeats++ {
				for agents := 1; agents <= 3; agents++ {
					p := plan(tasks, models, repeats, agents)
					specs := p.Specs()
					for n := 1; n <= 7; n++ {
						name := fmt.Sprintf("%d tasks × %d models × %d repeats × %d agents, %d shards", tasks, models, repeats, agents, n)
						shardOf := map[int]int{}
						groupShard := map[string]int{}
						var sizes []int
						for i := range n {
							got := (bench.Shard{Index: i, Count: n}).Of(specs, p.Shape())
							require.True(t, slices.IsSortedFunc(got, func(a, b bench.Spec) int { return a.Index - b.Index }), name)
							groups := map[string]bool{}
							for _, s := range got {
								_, twice := shardOf[s.Index]
								require.False(t, twice, name)
								shardOf[s.Index] = i
								g := fmt.Sprintf("%s/%d", s.Task.Name, s.Repeat)
								if first, ok := groupShard[g]; ok {
									require.Equal(t, first, i, "%s: group %s split", name, g)
								}
								groupShard[g], groups[g] = i, true
							}
							sizes = append(sizes, len(groups))
						}
						require.Len(t, shardOf, len(specs), name)
						require.LessOrEqual(t, slices.Max(sizes)-slices.Min(sizes), 1, "%s: %v", name, sizes)
					}
				}
			}
		}
	}
}

func TestPlanID(t *testing.T) {
	p := bench.Plan{Tasks: []bench.Task{{Name: "a", Prompt: "do a", Tree: "/x"}}, Agents: []string{"claude", "codex"}, Repeat: 2, Check: "true"}
	id := p.ID()
	require.Len(t, id, 32)
	q := p
	q.Agents = []string{"claude-code", "codex"}
	q.Tasks = []bench.Task{{Name: "a", Prompt: "do a", Tree: "/elsewhere"}}
	require.Equal(t, id, q.ID(), "aliases resolve; the tree's path is not the plan")
	for name, change := range map[string]func(*bench.Plan){
		"prompt": func(p *bench.Plan) { p.Tasks = []bench.Task{{Name: "a", Prompt: "do b"}} },
		"repeat": func(p *bench.Plan) { p.Repeat = 3 },
		"check":  func(p *bench.Plan) { p.Check = "false" },
		"model":  func(p *bench.Plan) { p.Models = []string{"m"} },
		"order":  func(p *bench.Plan) { p.Agents = []string{"codex", "claude"} },
	} {
		c := p
		change(&c)
		require.NotEqual(t, id, c.ID(), name)
	}
}

// counting is fakes() that counts the runs it starts.
func counting(n *atomic.Int32, byAgent map[string]string) func(bench.Spec, harness.Task) (harness.Task, harness.Observer, error) {
	f := fakes(byAgent)
	return func(s bench.Spec, t harness.Task) (harness.Task, harness.Observer, error) {
		n.Add(1)
		return f(s, t)
	}
}

func keys(runs []bench.RunReport) []bench.RunKey {
	var out []bench.RunKey
	for _, r := range runs {
		out = append(out, r.Key())
	}
	return out
}

func resumePlan() bench.Plan {
	return bench.Plan{Tasks: []bench.Task{{Name: "one", Prompt: "write"}, {Name: "two", Prompt: "write"}},
		Agents: []string{"claude", "codex"}, Check: "test -f out.txt"}
}

var writers = map[string]string{"claude": "bench-writer", "codex": "bench-writer"}

func TestResultsResume(t *testing.T) {
	t.Run("interrupted", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "results")
		var started atomic.Int32
		intr := make(chan struct{}, 1)
		rep, err := bench.Run(context.Background(), resumePlan(), bench.Options{Parallel: 1, Results: dir, Interrupt: intr,
			Setup: counting(&started, writers),
			Progress: func(p bench.Progress) {
				if p.State == bench.StateDone && p.Spec.Index == 0 {
					intr <- struct{}{}
				}
			}})
		require.NoError(t, err)
		require.True(t, rep.Cancelled)
		require.Equal(t, int32(1), started.Load())
		rows, _ := filepath.Glob(filepath.Join(dir, "runs", "*.json"))
		require.Len(t, rows, 1, "only the run that ended is recorded")

		started.Store(0)
		rep, err = bench.Run(context.Background(), resumePlan(), bench.Options{Parallel: 1, Results: dir, Setup: counting(&started, writers)})
		require.NoError(t, err)
		require.Equal(t, int32(3), started.Load(), "only the missing runs run")
		require.Len(t, rep.Runs, 4)
		require.True(t, rep.Runs[0].Resumed)
		for _, r := range rep.Runs {
			require.Equal(t, "success", r.Status, "%+v", r)
		}
		rows, _ = filepath.Glob(filepath.Join(dir, "runs", "*.json"))
		require.Len(t, rows, 4)
	})
	t.Run("killed", func(t *testing.T) {
		// A bench killed outright leaves the rows of the runs that ended;
		// dropping two rows stands for that.
		dir := t.TempDir()
		var started atomic.Int32
		_, err := bench.Run(context.Background(), resumePlan(), bench.Options{Parallel: 2, Results: dir, Setup: counting(&started, writers)})
		require.NoError(t, err)
		require.Equal(t, int32(4), started.Load())
		require.NoError(t, os.Remove(filepath.Join(dir, "runs", "000001.json")))
		require.NoError(t, os.Remove(filepath.Join(dir, "runs", "000003.json")))
		started.Store(0)
		rep, err := bench.Run(context.Background(), resumePlan(), bench.Options{Parallel: 2, Results: dir, Setup: counting(&started, writers)})
		require.NoError(t, err)
		require.Equal(t, int32(2), started.Load())
		var resumed []int
		for _, r := range rep.Runs {
			if r.Resumed {
				resumed = append(resumed, r.Index)
			}
		}
		require.Equal(t, []int{0, 2}, resumed)
	})
	t.Run("never-started", func(t *testing.T) {
		dir := t.TempDir()
		broken := func(s bench.Spec, t harness.Task) (harness.Task, harness.Observer, error) {
			t.Agent, t.Binary, t.Budgets = "claude", "/nonexistent/claude", small()
			return t, harness.Observer{}, nil
		}
		rep, err := bench.Run(context.Background(), resumePlan(), bench.Options{Results: dir, Setup: broken})
		require.NoError(t, err)
		require.Equal(t, "not_installed", rep.Runs[0].Reason)
		rows, _ := filepath.Glob(filepath.Join(dir, "runs", "*.json"))
		require.Empty(t, rows, "a run whose agent never started says nothing: it runs again")
		var started atomic.Int32
		rep, err = bench.Run(context.Background(), resumePlan(), bench.Options{Results: dir, Setup: counting(&started, writers)})
		require.NoError(t, err)
		require.Equal(t, int32(4), started.Load())
	})
	t.Run("other-plan", func(t *testing.T) {
		dir := t.TempDir()
		var started atomic.Int32
		_, err := bench.Run(context.Background(), resumePlan(), bench.Options{Results: dir, Setup: counting(&started, writers)})
		require.NoError(t, err)
		p := resumePlan()
		p.Repeat = 2
		_, err = bench.Run(context.Background(), p, bench.Options{Results: dir, Setup: counting(&started, writers)})
		require.ErrorContains(t, err, "holds the runs of plan")
	})
	t.Run("corrupt-row", func(t *testing.T) {
		dir := t.TempDir()
		var started atomic.Int32
		_, err := bench.Run(context.Background(), resumePlan(), bench.Options{Results: dir, Setup: counting(&started, writers)})
		require.NoError(t, err)
		bad := filepath.Join(dir, "runs", "000002.json")
		require.NoError(t, os.WriteFile(bad, []byte(`{"plan_id":`), 0o600))
		started.Store(0)
		_, err = bench.Run(context.Background(), resumePlan(), bench.Options{Results: dir, Setup: counting(&started, writers)})
		require.ErrorContains(t, err, "000002.json: not a run record")
		require.Zero(t, started.Load())
		data, _ := os.ReadFile(bad)
		require.Equal(t, `{"plan_id":`, string(data), "nothing already written is lost")
		rows, _ := filepath.Glob(filepath.Join(dir, "runs", "*.json"))
		require.Len(t, rows, 4)
	})
	t.Run("row-of-another-run", func(t *testing.T) {
		// A row of this plan whose run is not the one at its index (its
		// task changed by hand) is refused, as merge refuses it; before,
		// it was taken for a missing run, run again and overwritten.
		dir := t.TempDir()
		var started atomic.Int32
		_, err := bench.Run(context.Background(), resumePlan(), bench.Options{Results: dir, Setup: counting(&started, writers)})
		require.NoError(t, err)
		row := filepath.Join(dir, "runs", "000000.json")
		data, err := os.ReadFile(row)
		require.NoError(t, err)
		var rec map[string]any
		require.NoError(t, json.Unmarshal(data, &rec))
		rec["run"].(map[string]any)["task"] = "zzz"
		tampered, err := json.Marshal(rec)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(row, tampered, 0o600))
		started.Store(0)
		_, err = bench.Run(context.Background(), resumePlan(), bench.Options{Results: dir, Setup: counting(&started, writers)})
		require.ErrorContains(t, err, "000000.json holds run #1, which is not the run the plan has at that index")
		require.Zero(t, started.Load())
		data, _ = os.ReadFile(row)
		require.Equal(t, string(tampered), string(data), "nothing already written is changed")
	})
}

func TestShardsMergeToThePlan(t *testing.T) {
	p := resumePlan()
	p.Repeat = 2 // 8 runs
	var started atomic.Int32
	whole, err := bench.Run(context.Background(), p, bench.Options{Setup: counting(&started, writers)})
	require.NoError(t, err)
	require.Len(t, whole.Runs, 8)
	require.Equal(t, p.ID(), whole.PlanID)

	dir := t.TempDir()
	var files []string
	for i := range 3 {
		rep, err := bench.Run(context.Background(), p, bench.Options{Results: dir, Shard: bench.Shard{Index: i, Count: 3},
			Setup: counting(&started, writers)})
		require.NoError(t, err)
		require.Equal(t, &bench.Shard{Index: i, Count: 3}, rep.Shard)
		require.Equal(t, 8, rep.Planned)
		f := filepath.Join(t.TempDir(), "shard.json")
		data, _ := json.Marshal(rep)
		require.NoError(t, os.WriteFile(f, data, 0o600))
		files = append(files, f)
	}
	require.Equal(t, int32(16), started.Load())

	for name, inputs := range map[string][]string{"dir": {dir}, "reports": files} {
		t.Run(name, func(t *testing.T) {
			m, err := bench.Merge(inputs)
			require.NoError(t, err)
			require.Equal(t, keys(whole.Runs), keys(m.Runs))
			require.Empty(t, m.Missing)
			require.Empty(t, m.Duplicates)
			require.Equal(t, whole.PlanID, m.PlanID)
			require.Nil(t, m.Shard)
			require.Len(t, m.Groups, 2)
			require.Equal(t, 4, m.Groups[0].Passed)
		})
	}
	t.Run("missing-and-duplicate", func(t *testing.T) {
		m, err := bench.Merge([]string{files[0], files[0], files[2]})
		require.NoError(t, err)
		require.Len(t, m.Duplicates, 2, "shard 0 holds runs 0 and 1 (task one, repeat 1)")
		var missing []int
		for _, k := range m.Missing {
			missing = append(missing, k.Index)
		}
		require.Equal(t, []int{2, 3}, missing, "shard 1 holds runs 2 and 3 (task one, repeat 2)")
		var out strings.Builder
		require.NoError(t, m.Write(&out, "table"))
		require.Contains(t, out.String(), "missing: #3, #4\n", "reports name the missing runs by index only")
		require.Contains(t, out.String(), "duplicate: #1 claude [one] repeat 1")
	})
	t.Run("missing-from-a-directory", func(t *testing.T) {
		row := filepath.Join(dir, "runs", "000005.json")
		require.NoError(t, os.Rename(row, row+".away"))
		defer os.Rename(row+".away", row)
		m, err := bench.Merge([]string{dir})
		require.NoError(t, err)
		require.Equal(t, []bench.RunKey{{Index: 5, Task: "two", Agent: "codex", Repeat: 1}}, m.Missing)
	})
	t.Run("bad-input", func(t *testing.T) {
		_, err := bench.Merge([]string{t.TempDir()})
		require.ErrorContains(t, err, "no results here")
		_, err = bench.Merge(nil)
		require.Error(t, err)
		junk := filepath.Join(t.TempDir(), "junk.json")
		require.NoError(t, os.WriteFile(junk, []byte("{not json"), 0o600))
		_, err = bench.Merge([]string{junk})
		require.ErrorContains(t, err, "not a bench JSON report")
		other := p
		other.Repeat = 1
		rep, err := bench.Run(context.Background(), other, bench.Options{Setup: counting(&started, writers)})
		require.NoError(t, err)
		f := filepath.Join(t.TempDir(), "other.json")
		data, _ := json.Marshal(rep)
		require.NoError(t, os.WriteFile(f, data, 0o600))
		_, err = bench.Merge([]string{dir, f})
		require.ErrorIs(t, err, bench.ErrPlanMismatch)
	})
	require.True(t, slices.IsSortedFunc(whole.Runs, func(a, b bench.RunReport) int { return a.Index - b.Index }))
}

func FuzzParseShard(f *testing.F) {
	for _, s := range []string{"0/3", "3/3", "x", "", "-1/2", "1/0", "9999999999999999999/1", " 1/2 ", "922337203685477580/922337203685477581"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sh, err := bench.ParseShard(s)
		if err != nil {
			return
		}
		if sh.Index < 0 || sh.Index >= sh.Count {
			t.Fatalf("%q gave %+v", s, sh)
		}
		specs := make([]bench.Spec, 10)
		if len(sh.Of(specs, bench.Shape{Tasks: 5, Models: 1, Repeats: 1, Agents: 2})) > 10 {
			t.Fatal("a shard larger than the plan")
		}
	})
}

// FuzzResultsRow: whatever a row file holds, opening the directory
// refuses it or takes it, never panics.
func FuzzResultsRow(f *testing.F) {
	f.Add([]byte(`{"plan_id":"x","run":{"index":0,"agent":"claude","status":"success"}}`))
	f.Add([]byte(`{"plan_id":`))
	f.Add([]byte(`null`))
	plan := bench.Plan{Tasks: []bench.Task{{Prompt: "p"}}, Agents: []string{"claude"}}
	// One results directory for every input: opening a new one writes and
	// syncs its plan file, which made each input cost a disk flush (a few
	// hundred inputs a second, and at times one slow enough to outlast the
	// fuzzing engine's deadline). Opening it again only reads.
	dir := f.TempDir()
	_, err := bench.OpenResults(dir, plan.Specs(), "", "")
	require.NoError(f, err)
	row0 := filepath.Join(dir, "runs", "000000.json")
	f.Fuzz(func(t *testing.T, row []byte) {
		require.NoError(t, os.WriteFile(row0, row, 0o600))
		_, _ = bench.OpenResults(dir, plan.Specs(), "", "")
		_, _ = bench.Merge([]string{dir})
	})
}

// TestTwoBenchesShareResults: two benches of one plan on one results
// directory (a shared volume, a bench started twice) run each run once
// between them, and each reports every run.
func TestTwoBenchesShareResults(t *testing.T) {
	p := resumePlan()
	p.Repeat = 2 // 8 runs
	dir := t.TempDir()
	var started atomic.Int32
	reps := make([]*bench.Report, 2)
	var wg sync.WaitGroup
	for i := range reps {
		wg.Go(func() {
			rep, err := bench.Run(context.Background(), p, bench.Options{Parallel: 2, Results: dir, Setup: counting(&started, writers)})
			require.NoError(t, err)
			reps[i] = rep
		})
	}
	wg.Wait()
	require.Equal(t, int32(8), started.Load(), "each run once")
	resumed := 0
	for _, rep := range reps {
		require.Len(t, rep.Runs, 8)
		for _, r := range rep.Runs {
			require.Equal(t, "success", r.Status, "%+v", r)
			if r.Resumed {
				resumed++
			}
		}
	}
	require.Equal(t, 8, resumed, "what one ran, the other took from its row")
	m, err := bench.Merge([]string{dir})
	require.NoError(t, err)
	require.Empty(t, m.Missing)
	require.Empty(t, m.Duplicates)
}
