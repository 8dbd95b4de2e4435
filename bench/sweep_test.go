package bench_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/internal/privtmp"
)

// TestSweepsSpareLiveAndKeptBenches: the stale temporary directories
// benches sweep (privtmp) are never a live bench's run trees nor a
// --keep tree. A bench that has run for over a minute (its run trees'
// directory aged so) sees another bench start and run meanwhile, and a
// harness of before run too (it swept every harness-bench-* it could
// lock): its run still measures its tree and checks it, and once it is
// over its kept trees stay through the same. What a bench killed with
// SIGKILL left (its run trees, a run's TMPDIR: unlocked and old) goes
// with the next bench, except its kept trees. Before, the bench's own
// directory of run trees was named like the runs' TMPDIRs and never
// locked: the other bench's run removed it ("files changed: git add: …
// cannot change to …"), and a kept one after a minute.
func TestSweepsSpareLiveAndKeptBenches(t *testing.T) {
	hostTmp := t.TempDir()
	t.Setenv("TMPDIR", hostTmp)
	old := time.Now().Add(-2 * privtmp.StaleAge)
	age := func(dir string) {
		t.Helper()
		require.NoError(t, os.Chtimes(dir, old, old))
	}
	ageAll := func() {
		entries, err := os.ReadDir(hostTmp)
		require.NoError(t, err)
		for _, e := range entries {
			age(filepath.Join(hostTmp, e.Name()))
		}
	}
	plan := bench.Plan{Tasks: []bench.Task{{Prompt: "write out.txt", Check: "test -s out.txt"}}, Agents: []string{"claude"}}
	writer := fakes(map[string]string{"claude": "bench-writer"})
	others := func() {
		t.Helper()
		rep, err := bench.Run(t.Context(), plan, bench.Options{Setup: writer})
		require.NoError(t, err)
		require.True(t, rep.Runs[0].Check.Passed, rep.Runs[0].Error)
		d, err := privtmp.Make(hostTmp, "harness-bench-") // an earlier harness's run
		require.NoError(t, err)
		require.NoError(t, d.Remove())
	}
	for _, keep := range []bool{false, true} {
		rep, err := bench.Run(t.Context(), plan, bench.Options{Keep: keep,
			Setup: func(s bench.Spec, tk harness.Task) (harness.Task, harness.Observer, error) {
				ageAll() // this bench, and its run, started over a minute ago
				others()
				require.DirExists(t, tk.Cwd, "keep %v", keep)
				return writer(s, tk)
			}})
		require.NoError(t, err)
		r := rep.Runs[0]
		require.Empty(t, r.Error, "keep %v", keep)
		require.NotNil(t, r.Files)
		require.Equal(t, 1, r.Files.Files)
		require.True(t, r.Check.Passed, r.Check.Output)
		if keep {
			ageAll()
			others()
			require.FileExists(t, filepath.Join(r.Tree, "out.txt"), "a kept tree stays")
			require.NoError(t, os.RemoveAll(rep.Dir))
		}
	}

	// A bench killed with SIGKILL left these, unlocked, a while ago.
	left := map[string]bool{"harness-benchrun-killed": false, "harness-benchtmp-killed": false,
		"harness-benchkeep-killed": true, "harness-bench-before": true}
	for name := range left {
		dir := filepath.Join(hostTmp, name, "sub")
		require.NoError(t, os.MkdirAll(dir, 0o755))
		require.NoError(t, os.Chmod(dir, 0o555)) // a Go module cache's
		age(filepath.Dir(dir))
	}
	rep, err := bench.Run(t.Context(), plan, bench.Options{Setup: writer})
	require.NoError(t, err)
	require.True(t, rep.Runs[0].Check.Passed, rep.Runs[0].Error)
	entries, err := os.ReadDir(hostTmp)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	require.ElementsMatch(t, []string{"harness-benchkeep-killed", "harness-bench-before"}, names,
		"the stale run trees and TMPDIR go; kept trees stay, and so does what an earlier harness named (its bench may be alive)")
	for _, n := range names {
		require.NoError(t, os.Chmod(filepath.Join(hostTmp, n, "sub"), 0o755))
	}
}
