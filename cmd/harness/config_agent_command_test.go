package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRunRefusesAnEmptyACPCommand: [agents.goose] protocol = "acp" with
// an empty command was read without a word, and run -a goose then said
// `unknown agent "goose"`; the configuration is refused where it is
// read, exit 2, one line naming the table.
func TestRunRefusesAnEmptyACPCommand(t *testing.T) {
	isolateWith(t, "[agents.goose]\nprotocol = \"acp\"\ncommand = []\n")
	r := invoke(t, "", "run", "-a", "goose", "-p", "x", "--no-log")
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Equal(t, `harness: harness.toml: agents.goose.command: is empty: an agent harness does not know is started by its command (command = ["BINARY", ARGS...])`+"\n", r.stderr)
	r = invoke(t, "", "config", "show")
	require.Equal(t, exitUsage, r.code, "every command reads the configuration: %s", r.stderr)
}
