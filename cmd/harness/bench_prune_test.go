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

// prune reads bench's --tasks only: --isolate docker did not choose the
// engine (podman's images were removed), and the other flags of a run
// did nothing. Refused, one line, exit 2, before any engine is asked.
func TestBenchPruneRefusesRunFlags(t *testing.T) {
	isolate(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--isolate", "docker", "prune"}, "harness: bench: prune: --isolate is the engine of a bench run; prune's is --engine (podman or docker)\n"},
		{[]string{"bench", "--isolate", "podman", "prune", "--engine", "podman"}, "harness: bench: prune: --isolate is the engine of a bench run; prune's is --engine (podman or docker)\n"},
		{[]string{"bench", "--agents", "claude", "--repeat", "2", "prune"}, "harness: bench: prune: --agents, --repeat: flags of a bench run; prune runs nothing\n"},
	} {
		r := invoke(t, "", c.args...)
		require.Equal(t, exitUsage, r.code, "%q: %s", c.args, r.stderr)
		require.Equal(t, c.want, r.stderr, "%q", c.args)
		require.Empty(t, r.stdout)
	}
}
