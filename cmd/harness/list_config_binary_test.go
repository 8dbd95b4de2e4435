package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/internal/execfile"
)

// TestListUsesConfiguredBinary: an agent whose [agents.NAME] binary
// names its CLI is installed for 'harness list', at that path and with
// its version, as 'run' and 'check' find it; it was "not installed",
// list looking only at the pinned installs and PATH. A binary of another
// protocol's command ([agents.NAME] protocol = "acp") is not the CLI, as
// for check.
func TestListUsesConfiguredBinary(t *testing.T) {
	home := isolate(t)
	t.Setenv("PATH", t.TempDir()) // no agent on PATH
	t.Setenv("HARNESS_AGENTS_DIR", t.TempDir())
	bin := filepath.Join(home, "tools", "my-claude")
	require.NoError(t, os.MkdirAll(filepath.Dir(bin), 0o755))
	require.NoError(t, execfile.Write(bin, []byte("#!/bin/sh\necho '9.9.9 (Claude Code)'\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(home, "harness.toml"), []byte(
		"[agents.claude]\nbinary = \"tools/my-claude\"\n"+ // relative: the file's directory
			"[agents.codex]\nprotocol = \"acp\"\nbinary = \"tools/my-claude\"\n"), 0o644))
	r := invoke(t, "", "list", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var rows []agentStatus
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rows))
	got := map[string]agentStatus{}
	for _, row := range rows {
		got[row.ID] = row
	}
	require.Equal(t, agentStatus{ID: "claude", Name: got["claude"].Name, Installed: true, Path: bin, Version: "9.9.9 (Claude Code)"}, got["claude"])
	require.False(t, got["codex"].Installed, "an ACP command's binary is not codex's CLI")
}
