package bench_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/bench"
)

// The agents' permission mode and turn limit are part of the plan's id,
// as the engine and the scenario are; a plan with full access and no
// limit keeps the id it had before.
func TestPermissionsInPlanID(t *testing.T) {
	p := bench.Plan{Tasks: []bench.Task{{Prompt: "write"}}, Agents: []string{"claude", "codex"}, Check: "test -f out.txt"}
	const before = "414fef123f1218aea38e28bfbc8c1a96" // this plan's id before either was hashed
	require.Equal(t, before, p.ID())
	p.Permissions = harness.FullAccess
	require.Equal(t, before, p.ID(), "full access is the default")
	seen := map[string]string{before: "default"}
	for name, q := range map[string]bench.Plan{
		"read-only":             {Permissions: harness.ReadOnly},
		"max-turns-3":           {MaxTurns: 3},
		"max-turns-4":           {MaxTurns: 4},
		"read-only-max-turns-3": {Permissions: harness.ReadOnly, MaxTurns: 3},
	} {
		p.Permissions, p.MaxTurns = q.Permissions, q.MaxTurns
		id := p.ID()
		require.NotContains(t, seen, id, "%s has the id of %s", name, seen[id])
		seen[id] = name
	}
}

// A bench resumed with other permissions or another turn limit than its
// results directory's runs is refused with one line (before, read-only
// and full-access runs resumed as one plan); the runs get the plan's
// permissions and limit, and the report and plan.json record them.
func TestResumeWithOtherPermissions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "results")
	var mu sync.Mutex
	var got []harness.Task
	inner := fakes(writers)
	setup := func(s bench.Spec, tk harness.Task) (harness.Task, harness.Observer, error) {
		mu.Lock()
		got = append(got, tk)
		mu.Unlock()
		return inner(s, tk)
	}
	p := resumePlan()
	p.Permissions, p.MaxTurns = harness.ReadOnly, 7
	rep, err := bench.Run(t.Context(), p, bench.Options{Results: dir, Setup: setup})
	require.NoError(t, err)
	require.Equal(t, harness.ReadOnly, rep.Permissions)
	require.Equal(t, 7, rep.MaxTurns)
	require.Len(t, got, 4)
	for _, tk := range got {
		require.Equal(t, harness.ReadOnly, tk.Permissions)
		require.Equal(t, 7, tk.MaxTurns)
	}
	var pf bench.PlanFile
	data, err := os.ReadFile(filepath.Join(dir, "plan.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &pf))
	require.Equal(t, harness.ReadOnly, pf.Permissions)
	require.Equal(t, 7, pf.MaxTurns)
	require.Equal(t, rep.PlanID, pf.PlanID)

	for name, c := range map[string]struct {
		perm  string
		turns int
		want  string
	}{
		"full-access": {"", 7, "with --permissions read-only --max-turns 7, not with --permissions full-access --max-turns 7"},
		"no-limit":    {harness.ReadOnly, 0, "with --permissions read-only --max-turns 7, not with --permissions read-only and no --max-turns"},
	} {
		t.Run(name, func(t *testing.T) {
			q := resumePlan()
			q.Permissions, q.MaxTurns = c.perm, c.turns
			_, err := bench.Run(t.Context(), q, bench.Options{Results: dir, Setup: inner})
			require.EqualError(t, err, "bench: --results "+dir+" holds the runs of this plan "+c.want+
				": runs that may do different things do not mix; use another directory")
		})
	}
	rep, err = bench.Run(t.Context(), p, bench.Options{Results: dir, Setup: inner})
	require.NoError(t, err)
	for _, r := range rep.Runs {
		require.True(t, r.Resumed, "the same permissions resume")
	}
}

// Shards of one plan run with different permissions do not merge, from
// results directories or reports (before, they merged into one report).
func TestMergeRefusesOtherPermissions(t *testing.T) {
	base := t.TempDir()
	var dirs, files []string
	for i, perm := range []string{harness.ReadOnly, harness.FullAccess} {
		dir := filepath.Join(base, perm)
		p := resumePlan()
		p.Permissions = perm
		rep, err := bench.Run(t.Context(), p, bench.Options{Results: dir, Setup: fakes(writers), Shard: bench.Shard{Index: i, Count: 2}})
		require.NoError(t, err)
		require.Len(t, rep.Runs, 2)
		buf, err := json.Marshal(rep)
		require.NoError(t, err)
		file := filepath.Join(base, perm+".json")
		require.NoError(t, os.WriteFile(file, buf, 0o600))
		dirs, files = append(dirs, dir), append(files, file)
	}
	for name, inputs := range map[string][]string{"dirs": dirs, "reports": files, "mixed": {dirs[0], files[1]}} {
		t.Run(name, func(t *testing.T) {
			_, err := bench.Merge(inputs)
			require.ErrorIs(t, err, bench.ErrPlanMismatch)
			require.ErrorContains(t, err, inputs[0]+" ran with --permissions read-only and no --max-turns, "+inputs[1]+
				" with --permissions full-access and no --max-turns: runs that may do different things do not mix")
		})
	}
	m, err := bench.Merge([]string{files[0]})
	require.NoError(t, err)
	require.Equal(t, harness.ReadOnly, m.Permissions, "a merge keeps its runs' permissions")
}
