package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// prune reads --tasks before it removes anything: tasks that do
// not load are bad input (exit 2), nothing removed. (The removal itself
// is isolate.TestPruneImages, on real podman.)
func TestBenchPruneBadTasks(t *testing.T) {
	isolate(t)
	dir := filepath.Join(t.TempDir(), "task")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "tests"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "instruction.md"), []byte("x\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "task.toml"), []byte("[verifier]\ntimeout_sec = \"x\"\n"), 0o644))
	r := invoke(t, "", "bench", "--tasks", dir, "prune")
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, "verifier.timeout_sec: want a number of seconds")
	require.Empty(t, r.stdout)
}
