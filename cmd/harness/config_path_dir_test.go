package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestConfigPathRefusesADirectory: config path showed a directory named
// harness.toml (or config.toml) as the file harness reads, while run and
// every other command refuse it (exit 2); it says what they say now.
func TestConfigPathRefusesADirectory(t *testing.T) {
	home := isolate(t)
	project := filepath.Join(home, "project")
	require.NoError(t, os.MkdirAll(filepath.Join(project, "harness.toml"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(project, "sub"), 0o755))
	t.Chdir(filepath.Join(project, "sub"))
	r := invoke(t, "", "config", "path")
	require.Equal(t, exitUsage, r.code, r.stdout)
	require.Empty(t, r.stdout)
	require.Equal(t, "harness: "+filepath.Join(project, "harness.toml")+": not a regular file (a directory)\n", r.stderr)
	require.NoError(t, os.Remove(filepath.Join(project, "harness.toml")))

	user := filepath.Join(home, ".config", "harness", "config.toml")
	require.NoError(t, os.MkdirAll(user, 0o755))
	r = invoke(t, "", "config", "path")
	require.Equal(t, exitUsage, r.code, r.stdout)
	require.Equal(t, "harness: "+user+": not a regular file (a directory)\n", r.stderr)
	require.NoError(t, os.Remove(user))

	r = invoke(t, "", "config", "path")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "project  "+filepath.Join(project, "sub", "harness.toml")+" (not present)\n")
}
