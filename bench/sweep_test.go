package bench_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
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
// with the next bench, except its kept trees; so does what an earlier
// harness left (harness-bench-*, TestSweepsLegacy). Before, the bench's own
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
		age(dir)
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
	require.ElementsMatch(t, []string{"harness-benchkeep-killed"}, names,
		"the stale run trees and TMPDIRs go, an earlier harness's too; kept trees stay")
	for _, n := range names {
		require.NoError(t, os.Chmod(filepath.Join(hostTmp, n, "sub"), 0o755))
	}
}

// TestSweepsLegacy: the harness-bench-* directories of earlier harnesses
// (their run trees, never locked, and their runs' TMPDIRs) go with the
// next bench once stale, unless something shows them in use: a lock
// (an earlier run's TMPDIR), anything in them modified within a minute,
// or a process working in them (its working directory, an open file),
// since such a bench never locked its run trees. Before, none went: a
// killed bench of an earlier harness left its trees for good.
func TestSweepsLegacy(t *testing.T) {
	hostTmp := t.TempDir()
	t.Setenv("TMPDIR", hostTmp)
	old := time.Now().Add(-2 * privtmp.StaleAge)
	ageTree := func(root string) {
		t.Helper()
		var dirs []string
		require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			dirs = append(dirs, p)
			return err
		}))
		for i := len(dirs) - 1; i >= 0; i-- { // the deepest first
			require.NoError(t, os.Chtimes(dirs[i], old, old))
		}
	}
	dir := func(name string) string { return filepath.Join(hostTmp, name) }
	for _, name := range []string{"harness-bench-killed", "harness-bench-readonly", "harness-bench-fresh", "harness-bench-locked",
		"harness-bench-open", "harness-bench-cwd", "harness-bench-young", "harness-benchkeep-kept"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir(name), "tree", "sub"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir(name), "tree", "sub", "f.txt"), []byte("x\n"), 0o644))
	}
	require.NoError(t, os.Chmod(filepath.Join(dir("harness-bench-readonly"), "tree", "sub"), 0o555))
	t.Cleanup(func() { os.Chmod(filepath.Join(dir("harness-bench-readonly"), "tree", "sub"), 0o755) })

	// An earlier run's TMPDIR, its lock held.
	held, err := os.Open(dir("harness-bench-locked"))
	require.NoError(t, err)
	defer held.Close()
	require.NoError(t, syscall.Flock(int(held.Fd()), syscall.LOCK_EX|syscall.LOCK_NB))
	// A file open in an earlier bench's tree.
	open, err := os.Open(filepath.Join(dir("harness-bench-open"), "tree", "sub", "f.txt"))
	require.NoError(t, err)
	defer open.Close()
	// An agent working in an earlier bench's tree, silent: cat waits on
	// its stdin, which the test holds.
	agent := exec.Command("cat")
	agent.Dir = filepath.Join(dir("harness-bench-cwd"), "tree", "sub")
	stdin, err := agent.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, agent.Start())
	defer func() { stdin.Close(); agent.Wait() }()

	for _, name := range []string{"harness-bench-killed", "harness-bench-readonly", "harness-bench-fresh", "harness-bench-locked",
		"harness-bench-open", "harness-bench-cwd", "harness-benchkeep-kept"} {
		ageTree(dir(name))
	}
	// Fresh inside: a live run wrote its tree a moment ago.
	require.NoError(t, os.WriteFile(filepath.Join(dir("harness-bench-fresh"), "tree", "sub", "new.txt"), nil, 0o644))
	require.NoError(t, os.Chtimes(dir("harness-bench-fresh"), old, old))

	plan := bench.Plan{Tasks: []bench.Task{{Prompt: "write out.txt", Check: "test -s out.txt"}}, Agents: []string{"claude"}}
	rep, err := bench.Run(t.Context(), plan, bench.Options{Setup: fakes(map[string]string{"claude": "bench-writer"})})
	require.NoError(t, err)
	require.True(t, rep.Runs[0].Check.Passed, rep.Runs[0].Error)

	entries, err := os.ReadDir(hostTmp)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	require.ElementsMatch(t, []string{"harness-bench-fresh", "harness-bench-locked", "harness-bench-open", "harness-bench-cwd",
		"harness-bench-young", "harness-benchkeep-kept"}, names,
		"the stale ones go, read-only directories too; what is in use or young stays, and kept trees of today's")
	require.FileExists(t, filepath.Join(dir("harness-bench-cwd"), "tree", "sub", "f.txt"))
}
