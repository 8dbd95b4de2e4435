package config

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// guardFIFO turns a hang opening the named pipe at path into a test
// failure: if the test is still running after 20 s, it fails it and opens
// the pipe for writing (again and again, without blocking), which lets a
// reader stuck in its open go on. It guards, it does not synchronize: a
// Load that never opens the pipe ends long before.
func guardFIFO(t *testing.T, path string) {
	t.Helper()
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		select {
		case <-done:
			return
		case <-time.After(20 * time.Second):
		}
		t.Errorf("still running after 20 s: something opened the pipe %s", path)
		for {
			if fd, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				_ = syscall.Close(fd)
			}
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() {
		close(done)
		<-stopped
	})
}

// mkfifo makes a named pipe at path.
func mkfifo(t *testing.T, path string) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, syscall.Mkfifo(path, 0o600))
	guardFIFO(t, path)
	return path
}

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
		mkfifo(t, filepath.Join(dir, ProjectFileName))
		_, _, err := Load(LoadOptions{Cwd: dir})
		var ce *Error
		require.ErrorAs(t, err, &ce)
		require.EqualError(t, err, "harness.toml: not a regular file (a FIFO)")
	})
	t.Run("project-fifo-given", func(t *testing.T) {
		t.Parallel()
		p := mkfifo(t, filepath.Join(t.TempDir(), "custom.toml"))
		_, _, err := Load(LoadOptions{ProjectFile: p})
		require.EqualError(t, err, p+": not a regular file (a FIFO)")
	})
	t.Run("user-fifo", func(t *testing.T) {
		t.Parallel()
		p := mkfifo(t, filepath.Join(t.TempDir(), "harness", "config.toml"))
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
