package config

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestProjectAddsToUserACPAgent: a project's [agents.goose] that only
// sets model, env or args for an ACP agent the user's file defines was
// refused as "not a known agent": the check read that one file's table,
// not the merged one. The agent is known once an earlier file defines
// it; a table that adds to an agent no file defines stays refused.
func TestProjectAddsToUserACPAgent(t *testing.T) {
	t.Parallel()
	noEnv := func(string) string { return "" }
	userDir, projDir := t.TempDir(), t.TempDir()
	user := filepath.Join(userDir, "config.toml")
	project := filepath.Join(projDir, ProjectFileName)
	write(t, user, "[agents.goose]\nprotocol = \"acp\"\ncommand = [\"goose\", \"acp\"]\n")
	write(t, project, "[agents.goose]\nmodel = \"x\"\nargs = [\"--quiet\"]\n[agents.goose.env]\nGOOSE_MODE = \"auto\"\n")

	c, _, err := Load(LoadOptions{Cwd: projDir, UserFile: user, Getenv: noEnv})
	require.NoError(t, err)
	require.Equal(t, AgentConfig{
		Model:    "x",
		Args:     []string{"--quiet"},
		Env:      map[string]string{"GOOSE_MODE": "auto"},
		Protocol: "acp",
		Command:  []string{"goose", "acp"},
	}, c.Agents["goose"])

	t.Run("no-file-defines-it", func(t *testing.T) {
		t.Parallel()
		_, _, err := Load(LoadOptions{Cwd: projDir, Getenv: noEnv})
		require.ErrorContains(t, err, `harness.toml: agents.goose: "goose" is not a known agent`)
	})
	t.Run("project-turns-it-to-cli", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		write(t, filepath.Join(dir, ProjectFileName), "[agents.goose]\nprotocol = \"cli\"\n")
		_, _, err := Load(LoadOptions{Cwd: dir, UserFile: user, Getenv: noEnv})
		require.ErrorContains(t, err, `harness.toml: agents.goose: "goose" is not a known agent`)
	})
	t.Run("project-empties-its-command", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		write(t, filepath.Join(dir, ProjectFileName), "[agents.goose]\ncommand = []\n")
		_, _, err := Load(LoadOptions{Cwd: dir, UserFile: user, Getenv: noEnv})
		require.EqualError(t, err, `harness.toml: agents.goose.command: is empty: an agent harness does not know is started by its command (command = ["BINARY", ARGS...])`)
	})
}
