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

// The isolation engine is part of the plan's id; a plan run on the host
// (none, or "") keeps the id it had before the engine was hashed, so
// results directories, stored reports and Job labels of such plans stay
// valid.
func TestIsolateInPlanID(t *testing.T) {
	p := bench.Plan{Tasks: []bench.Task{{Prompt: "write"}}, Agents: []string{"claude", "codex"}, Check: "test -f out.txt"}
	const before = "414fef123f1218aea38e28bfbc8c1a96" // this plan's id before the engine was hashed
	require.Equal(t, before, p.ID())
	p.Isolate = isolate.None
	require.Equal(t, before, p.ID())
	seen := map[string]string{before: isolate.None}
	for _, engine := range []string{isolate.Bwrap, isolate.Podman, isolate.Docker} {
		p.Isolate = engine
		id := p.ID()
		require.NotContains(t, seen, id, "%s has the id of %s", engine, seen[id])
		seen[id] = engine
	}
}

// oraclePlan is a Harbor plan of one task, cheap under none and bwrap.
func oraclePlan(t *testing.T, engine string, agents ...string) bench.Plan {
	t.Helper()
	tasks, err := bench.LoadTasks(filepath.Join(harborSuite, "create-file"))
	require.NoError(t, err)
	return bench.Plan{Tasks: tasks, Agents: agents, Isolate: engine}
}

// A bench resumed under another engine is refused with one line, as a
// changed plan is, instead of taking the other engine's runs as its own
// (before, --isolate bwrap after --isolate none resumed every run).
func TestResumeUnderAnotherEngine(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "results")
	rep, err := bench.Run(t.Context(), oraclePlan(t, isolate.None, "oracle"), bench.Options{Results: dir})
	require.NoError(t, err)
	require.Equal(t, "success", rep.Runs[0].Status, rep.Runs[0].Error)
	require.Equal(t, isolate.None, rep.Isolate)
	row := filepath.Join(dir, "runs", "000000.json")
	was, err := os.ReadFile(row)
	require.NoError(t, err)

	_, err = bench.Run(t.Context(), oraclePlan(t, isolate.Bwrap, "oracle"), bench.Options{Results: dir})
	require.EqualError(t, err, "bench: --results "+dir+" holds the runs of this plan under --isolate none, not bwrap: the runs of two engines do not mix; use another directory")
	now, err := os.ReadFile(row)
	require.NoError(t, err)
	require.Equal(t, was, now, "nothing there is changed")

	// A plan.json of an earlier harness names no engine: taken as none.
	planFile := filepath.Join(dir, "plan.json")
	var pf map[string]any
	data, err := os.ReadFile(planFile)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &pf))
	require.Equal(t, isolate.None, pf["isolate"])
	delete(pf, "isolate")
	data, err = json.Marshal(pf)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(planFile, data, 0o600))
	rep, err = bench.Run(t.Context(), oraclePlan(t, "", "oracle"), bench.Options{Results: dir})
	require.NoError(t, err)
	require.True(t, rep.Runs[0].Resumed, "the earlier harness's runs under none resume")
	_, err = bench.Run(t.Context(), oraclePlan(t, isolate.Bwrap, "oracle"), bench.Options{Results: dir})
	require.ErrorContains(t, err, "under --isolate none (taken as none: written by an earlier harness, which did not record the engine), not bwrap")
}

// Shards of one plan run under two engines do not merge, from results
// directories or reports (before, they merged into one complete report).
func TestMergeRefusesTwoEngines(t *testing.T) {
	base := t.TempDir()
	var dirs, files []string
	for i, engine := range []string{isolate.None, isolate.Bwrap} {
		dir := filepath.Join(base, engine)
		p := oraclePlan(t, engine, "oracle")
		p.Repeat = 2 // two groups (task × repeat): one run in each shard
		rep, err := bench.Run(t.Context(), p, bench.Options{Results: dir, Shard: bench.Shard{Index: i, Count: 2}})
		require.NoError(t, err)
		require.Len(t, rep.Runs, 1)
		require.Equal(t, engine, rep.Isolate)
		var out bytes.Buffer
		require.NoError(t, rep.Write(&out, "json"))
		file := filepath.Join(base, engine+".json")
		require.NoError(t, os.WriteFile(file, out.Bytes(), 0o600))
		dirs, files = append(dirs, dir), append(files, file)
	}
	for name, inputs := range map[string][]string{"dirs": dirs, "reports": files, "mixed": {dirs[0], files[1]}} {
		t.Run(name, func(t *testing.T) {
			_, err := bench.Merge(inputs)
			require.ErrorIs(t, err, bench.ErrPlanMismatch)
			require.ErrorContains(t, err, inputs[0]+" ran under --isolate none, "+inputs[1]+" under --isolate bwrap")
		})
	}
	m, err := bench.Merge([]string{dirs[1]})
	require.NoError(t, err)
	require.Equal(t, isolate.Bwrap, m.Isolate, "a merge keeps its runs' engine")
}
