package harness_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/execfile"
)

// TestPinnedInstallIsFirstOnPath: an agent found in the pinned installs
// runs with that directory first on its PATH, so its `#!/usr/bin/env node`
// finds the node pinned there (claude-agent-acp declares node >= 22); one
// found elsewhere keeps the PATH it was given.
func TestPinnedInstallIsFirstOnPath(t *testing.T) {
	pinned := t.TempDir()
	require.NoError(t, execfile.Write(filepath.Join(pinned, "gemini"), []byte("#!/bin/sh\n"), 0o755))
	other := t.TempDir()
	require.NoError(t, execfile.Write(filepath.Join(other, "gemini"), []byte("#!/bin/sh\n"), 0o755))
	env := func(c *harness.Command) (path string) {
		for _, kv := range c.Env {
			if v, ok := strings.CutPrefix(kv, "PATH="); ok {
				path = v
			}
		}
		return path
	}
	c, err := harness.Prepare(harness.Task{Agent: "gemini", Prompt: "x", SearchDirs: []string{pinned}, BaseEnv: []string{"PATH=/usr/bin:/bin"}})
	require.NoError(t, err)
	require.Equal(t, pinned+":/usr/bin:/bin", env(c))

	c, err = harness.Prepare(harness.Task{Agent: "gemini", Prompt: "x", SearchDirs: []string{t.TempDir()}, BaseEnv: []string{"PATH=" + other}})
	require.NoError(t, err)
	require.Equal(t, filepath.Join(other, "gemini"), c.Binary)
	require.Equal(t, other, env(c), "a binary from the PATH changes nothing")
}

// TestBinaryThatCannotRun: a --binary that exists but cannot be run says
// what is wrong with it, not that the agent is not installed; a directory
// named twice in PATH is tried once.
func TestBinaryThatCannotRun(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "claude")
	require.NoError(t, execfile.Write(plain, []byte("#!/bin/sh\n"), 0o644))
	for bin, want := range map[string]string{
		dir:   "claude: " + dir + " (--binary) is a directory, not an executable",
		plain: "claude: " + plain + " (--binary) is not executable (chmod +x)",
	} {
		c, err := harness.Prepare(harness.Task{Agent: "claude", Prompt: "x", Binary: bin})
		require.NoError(t, err)
		require.EqualError(t, c.NotInstalled, want)
	}

	empty := t.TempDir()
	c, err := harness.Prepare(harness.Task{Agent: "codex", Prompt: "x", BaseEnv: []string{"PATH=" + empty + ":" + empty + "/"}})
	require.NoError(t, err)
	require.EqualError(t, c.NotInstalled, "codex is not installed: tried "+filepath.Join(empty, "codex"))
}
