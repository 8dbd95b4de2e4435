package bench_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/isolate"
)

// The scripted model's scenario is part of the plan's id, as the engine
// is; a plan on the agents' own models keeps the id it had before.
func TestMockInPlanID(t *testing.T) {
	p := bench.Plan{Tasks: []bench.Task{{Prompt: "write"}}, Agents: []string{"claude", "codex"}, Check: "test -f out.txt"}
	const before = "414fef123f1218aea38e28bfbc8c1a96" // this plan's id before the scenario was hashed
	require.Equal(t, before, p.ID())
	seen := map[string]string{before: ""}
	for _, mock := range []string{"text", "tools"} {
		p.Mock = mock
		id := p.ID()
		require.NotContains(t, seen, id, "--mock %s has the id of %q", mock, seen[id])
		seen[id] = mock
	}
	p.Isolate = isolate.Bwrap
	require.NotContains(t, seen, p.ID(), "engine and scenario together")
}

// A bench resumed on another model than its results directory's runs is
// refused with one line (before, a real bench took a --mock bench's runs
// as its own and ran nothing), and so is the other way round; the same
// scenario resumes.
func TestResumeWithAnotherMock(t *testing.T) {
	for _, c := range []struct{ first, then, want string }{
		{"text", "", "with --mock text, not without --mock"},
		{"", "text", "without --mock, not with --mock text"},
		{"text", "tools", "with --mock text, not with --mock tools"},
	} {
		t.Run(c.first+"-then-"+c.then, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "results")
			p := oraclePlan(t, isolate.None, "oracle")
			p.Mock = c.first
			rep, err := bench.Run(t.Context(), p, bench.Options{Results: dir})
			require.NoError(t, err)
			require.Equal(t, "success", rep.Runs[0].Status, rep.Runs[0].Error)
			require.Equal(t, c.first, rep.Mock)
			var pf bench.PlanFile
			data, err := os.ReadFile(filepath.Join(dir, "plan.json"))
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(data, &pf))
			require.Equal(t, c.first, pf.Mock)
			row := filepath.Join(dir, "runs", "000000.json")
			was, err := os.ReadFile(row)
			require.NoError(t, err)

			p.Mock = c.then
			_, err = bench.Run(t.Context(), p, bench.Options{Results: dir})
			require.EqualError(t, err, "bench: --results "+dir+" holds the runs of this plan "+c.want+
				": the runs of a scripted model and of another model do not mix; use another directory")
			now, err := os.ReadFile(row)
			require.NoError(t, err)
			require.Equal(t, was, now, "nothing there is changed")

			p.Mock = c.first
			rep, err = bench.Run(t.Context(), p, bench.Options{Results: dir})
			require.NoError(t, err)
			require.True(t, rep.Runs[0].Resumed, "the same scenario resumes")
		})
	}
}

// Shards of one plan, one run against the scripted model and one not, do
// not merge, from results directories or reports (before, they merged
// into one complete report).
func TestMergeRefusesMockAndReal(t *testing.T) {
	base := t.TempDir()
	var dirs, files []string
	for i, mock := range []string{"text", ""} {
		name := "mock-" + mock
		dir := filepath.Join(base, name)
		p := oraclePlan(t, isolate.None, "oracle")
		p.Repeat, p.Mock = 2, mock // two groups (task × repeat): one run in each shard
		rep, err := bench.Run(t.Context(), p, bench.Options{Results: dir, Shard: bench.Shard{Index: i, Count: 2}})
		require.NoError(t, err)
		require.Len(t, rep.Runs, 1)
		var out bytes.Buffer
		require.NoError(t, rep.Write(&out, "json"))
		file := filepath.Join(base, name+".json")
		require.NoError(t, os.WriteFile(file, out.Bytes(), 0o600))
		dirs, files = append(dirs, dir), append(files, file)
	}
	for name, inputs := range map[string][]string{"dirs": dirs, "reports": files, "mixed": {dirs[0], files[1]}} {
		t.Run(name, func(t *testing.T) {
			_, err := bench.Merge(inputs)
			require.ErrorIs(t, err, bench.ErrPlanMismatch)
			require.ErrorContains(t, err, inputs[0]+" ran with --mock text, "+inputs[1]+" without --mock: the runs of a scripted model and of another model do not mix")
		})
	}
	m, err := bench.Merge([]string{files[0]})
	require.NoError(t, err)
	require.Equal(t, "text", m.Mock, "a merge keeps its runs' scenario")
}
