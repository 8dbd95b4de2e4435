package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/internal/fifotest"
)

// TestConfigAndModelTablesAreTermSafe: escape sequences in a config
// file's keys (the unknown-key warning) and values (config show), and in
// the alias names and model ids of a models table (models list, models
// prices), reached the terminal as they were: a downloaded models file
// could set the window title or clear the screen. Tables print them
// through ansi.TermSafe, a tab or newline in one as a space; JSON escapes them.
func TestConfigAndModelTablesAreTermSafe(t *testing.T) {
	isolateWith(t, `
model = "m\u001b]0;title\u0007"
"bad\u001b[2Jkey" = 1
[models.aliases."evil\u001b[2J"]
claude = "id\u001b[31m\tred"
[models.prices."p\u001b]52;c;eA==\u0007x"]
input = 1
`)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"config", "show"}, "model "},
		{[]string{"models", "list"}, "evil  "},
		{[]string{"models", "prices"}, "px "},
	} {
		r := invoke(t, "", tc.args...)
		require.Equal(t, exitOK, r.code, "%q: %s", tc.args, r.stderr)
		for _, out := range []string{r.stdout, r.stderr} {
			require.NotContains(t, out, "\x1b", "%q", tc.args)
			require.NotContains(t, out, "\a", "%q", tc.args)
		}
		require.Contains(t, r.stdout, tc.want, "%q", tc.args)
		require.Equal(t, "harness: warning: harness.toml: badkey: unknown key (ignored)\n", r.stderr, "%q", tc.args)
	}
	r := invoke(t, "", "models", "list")
	require.Contains(t, r.stdout, "claude=id red")
	r = invoke(t, "", "models", "list", "--json")
	require.Contains(t, r.stdout, `"evil\u001b[2j"`, "JSON keeps the name, escaped")
}

// TestModelsUpdateRefusesAFIFO: models update --from a named pipe opened
// it for reading, which waits for a writer: the command hung. It is a
// usage error, one line, exit 2.
func TestModelsUpdateRefusesAFIFO(t *testing.T) {
	home := isolate(t)
	fifo := fifotest.Make(t, filepath.Join(home, "models.toml"))
	r := invoke(t, "", "models", "update", "--from", fifo)
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Equal(t, "harness: registry: update from "+fifo+": open "+fifo+": not a regular file (a FIFO)\n", r.stderr)
	_, err := os.Stat(filepath.Join(home, ".cache", "harness", "models.toml"))
	require.ErrorIs(t, err, os.ErrNotExist)
	require.Empty(t, strings.TrimSpace(r.stdout))
}
