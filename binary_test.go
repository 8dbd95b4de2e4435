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
