package config

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAgentCommandThatStartsNothing: an [agents.NAME] table of an ACP
// agent harness does not know, whose command is empty or has an empty
// binary, was accepted; the run then said `unknown agent "NAME"` (or the
// ACP adapter's "empty command"). Load refuses it, naming the table and
// what is missing. A known agent's empty command is its own ACP command.
func TestAgentCommandThatStartsNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, ProjectFileName)
	noEnv := func(string) string { return "" }
	for _, c := range []struct{ name, toml, want string }{
		{"empty", "command = []", `harness.toml: agents.goose.command: is empty: an agent harness does not know is started by its command (command = ["BINARY", ARGS...])`},
		{"missing", "", `harness.toml: agents.goose: has protocol = "acp" but no command: an agent harness does not know is started by its command (command = ["BINARY", ARGS...])`},
		{"empty-binary", `command = [""]`, `harness.toml: agents.goose.command: has an empty binary (its first element)`},
		{"blank-binary", `command = [" ", "acp"]`, `harness.toml: agents.goose.command: has an empty binary (its first element)`},
	} {
		write(t, path, "[agents.goose]\nprotocol = \"acp\"\n"+c.toml+"\n")
		_, _, err := Load(LoadOptions{Cwd: dir, ProjectFile: path, Getenv: noEnv})
		require.EqualError(t, err, c.want, c.name)
		var ce *Error
		require.ErrorAs(t, err, &ce, c.name)
	}

	write(t, path, "[agents.opencode]\nprotocol = \"acp\"\ncommand = [\"\"]\n")
	_, _, err := Load(LoadOptions{Cwd: dir, ProjectFile: path, Getenv: noEnv})
	require.EqualError(t, err, `harness.toml: agents.opencode.command: has an empty binary (its first element)`)
	write(t, path, "[agents.opencode]\nprotocol = \"acp\"\ncommand = []\n")
	c, _, err := Load(LoadOptions{Cwd: dir, ProjectFile: path, Getenv: noEnv})
	require.NoError(t, err, "a known agent's empty command is its own")
	require.Empty(t, c.Agents["opencode"].Command)
}
