package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A directory named harness.toml where the walk up looks stops harness,
// exit 2, as one at the user's config.toml does: before, it was skipped
// and the settings of a harness.toml further up (or none) were used.
func TestConfigFileThatIsADirectory(t *testing.T) {
	home := isolate(t)
	project := filepath.Join(home, "project")
	require.NoError(t, os.MkdirAll(filepath.Join(project, "harness.toml"), 0o755))
	t.Chdir(project)
	r := invoke(t, "", "run", "-a", "nop", "-p", "x", "--no-log")
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Equal(t, "harness: harness.toml: not a regular file (a directory)\n", r.stderr)
	require.NoError(t, os.Remove(filepath.Join(project, "harness.toml")))

	user := filepath.Join(home, ".config", "harness", "config.toml")
	require.NoError(t, os.MkdirAll(user, 0o755))
	r = invoke(t, "", "run", "-a", "nop", "-p", "x", "--no-log")
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Equal(t, "harness: "+user+": not a regular file (a directory)\n", r.stderr)
}
