package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestProjectFileThatIsADirectory: a directory named harness.toml was
// skipped by the walk up, silently taking the harness.toml above it (or
// none), while a directory as the user's file was an error. Both are
// now: a config that is there but is not a regular file stops harness.
func TestProjectFileThatIsADirectory(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write(t, filepath.Join(root, ProjectFileName), "linger = \"1s\"\n")
	sub := filepath.Join(root, "sub")
	require.NoError(t, os.MkdirAll(filepath.Join(sub, ProjectFileName), 0o755))

	_, _, err := Load(LoadOptions{Cwd: sub})
	require.EqualError(t, err, ProjectFileName+": not a regular file (a directory)")
	var ce *Error
	require.ErrorAs(t, err, &ce)
	deeper := filepath.Join(sub, "deeper")
	require.NoError(t, os.MkdirAll(deeper, 0o755))
	_, _, err = Load(LoadOptions{Cwd: deeper})
	require.EqualError(t, err, filepath.Join("..", ProjectFileName)+": not a regular file (a directory)")

	// The same shape as the user's file.
	user := filepath.Join(root, "user", "config.toml")
	require.NoError(t, os.MkdirAll(user, 0o755))
	_, _, err = Load(LoadOptions{UserFile: user})
	require.EqualError(t, err, user+": not a regular file (a directory)")
}
