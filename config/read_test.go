package config

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/internal/fifotest"
)

// TestLoadReadsOnlyRegularFiles: a named pipe where a config file is
// looked for (the project's harness.toml, found or given, and the user's
// config) is a config error naming it, never opened for reading (its
// open waited for a writer: every command hung); nor is a file too large
// to be a config read whole.
func TestLoadReadsOnlyRegularFiles(t *testing.T) {
	t.Parallel()
	t.Run("project-fifo-found", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		fifotest.Make(t, filepath.Join(dir, ProjectFileName))
		_, _, err := Load(LoadOptions{Cwd: dir})
		var ce *Error
		require.ErrorAs(t, err, &ce)
		require.EqualError(t, err, "harness.toml: not a regular file (a FIFO)")
	})
	t.Run("project-fifo-given", func(t *testing.T) {
		t.Parallel()
		p := fifotest.Make(t, filepath.Join(t.TempDir(), "custom.toml"))
		_, _, err := Load(LoadOptions{ProjectFile: p})
		require.EqualError(t, err, p+": not a regular file (a FIFO)")
	})
	t.Run("user-fifo", func(t *testing.T) {
		t.Parallel()
		p := fifotest.Make(t, filepath.Join(t.TempDir(), "harness", "config.toml"))
		_, _, err := Load(LoadOptions{UserFile: p})
		require.EqualError(t, err, p+": not a regular file (a FIFO)")
	})
	// Valid TOML padded with blank lines: only its size is wrong.
	padded := func(t *testing.T, size int) string {
		body := []byte("linger = \"1s\"\n")
		body = append(body, bytes.Repeat([]byte("\n"), size-len(body))...)
		return write(t, filepath.Join(t.TempDir(), ProjectFileName), string(body))
	}
	t.Run("too-large", func(t *testing.T) {
		t.Parallel()
		_, _, err := Load(LoadOptions{ProjectFile: padded(t, maxFile+1)})
		require.ErrorContains(t, err, ": more than 4194304 bytes")
	})
	t.Run("regular-at-the-cap", func(t *testing.T) {
		t.Parallel()
		c, _, err := Load(LoadOptions{ProjectFile: padded(t, maxFile)})
		require.NoError(t, err)
		require.Equal(t, time.Second, c.Linger.D())
	})
}
