package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestConfigInitRefusesAFIFO: config init --force opened a named pipe at
// harness.toml to write, which waits for a reader: the command hung. It
// is refused with one line, exit 2, and without --force it exists.
func TestConfigInitRefusesAFIFO(t *testing.T) {
	home := isolate(t)
	fifo := filepath.Join(home, "harness.toml")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"config", "init", "--force"}, "harness: config init: harness.toml is not a regular file (a FIFO)\n"},
		{[]string{"config", "init"}, "harness: config init: harness.toml exists (use --force to overwrite)\n"},
	} {
		done := make(chan result, 1)
		go func() { done <- invoke(t, "", tc.args...) }()
		var r result
		select {
		case r = <-done:
		case <-time.After(30 * time.Second): // a deadline, not a measure: it hangs for good
			// A reader lets the stuck open return, so the command ends.
			f, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
			require.NoError(t, err)
			r = <-done
			f.Close()
			t.Fatalf("%q hung opening the FIFO to write", tc.args)
		}
		require.Equal(t, exitUsage, r.code, "%q: %s", tc.args, r.stderr)
		require.Equal(t, tc.want, r.stderr)
		require.Empty(t, r.stdout)
	}
	// A regular file is still overwritten.
	require.NoError(t, os.Remove(fifo))
	require.NoError(t, os.WriteFile(fifo, []byte("old"), 0o644))
	r := invoke(t, "", "config", "init", "--force")
	require.Equal(t, exitOK, r.code, r.stderr)
	data, err := os.ReadFile(fifo)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(data), "# harness.toml"))
}

// TestUserConfigThatCannotBeLookedAt: a user config behind a symbolic
// link loop was skipped by every command and shown "(not present)" by
// config path, its settings silently dropped (a project file so was exit
// 2). Both stop with one line, exit 2; a user file that does not exist
// is still "(not present)".
func TestUserConfigThatCannotBeLookedAt(t *testing.T) {
	home := isolate(t)
	r := invoke(t, "", "config", "path")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "config.toml (not present)\n")

	user := filepath.Join(home, ".config", "harness", "config.toml")
	require.NoError(t, os.MkdirAll(filepath.Dir(user), 0o755))
	require.NoError(t, os.Symlink("config.toml", user))
	for _, args := range [][]string{{"config", "path"}, {"config", "show"}, {"models", "list"}} {
		r := invoke(t, "", args...)
		require.Equal(t, exitUsage, r.code, "%q: %s", args, r.stderr)
		require.Equal(t, "harness: "+user+": too many levels of symbolic links\n", r.stderr, "%q", args)
		require.Empty(t, r.stdout, "%q", args)
	}
}

// TestLogDirTildeIsHome: log_dir = "~/harness-logs", the value the example
// shows, made a directory named "~" in the working directory of every
// run; the logs go to the home directory's harness-logs.
func TestLogDirTildeIsHome(t *testing.T) {
	home := isolateWith(t, "log_dir = \"~/harness-logs\"\n")
	sub := filepath.Join(home, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	t.Chdir(sub)
	r := invoke(t, "", "run", "-a", "nop", "-p", "hi")
	require.Equal(t, exitOK, r.code, r.stderr)
	_, err := os.Stat(filepath.Join(sub, "~"))
	require.ErrorIs(t, err, os.ErrNotExist, "no directory named ~")
	logs, err := filepath.Glob(filepath.Join(home, "harness-logs", "*.ndjson"))
	require.NoError(t, err)
	require.Len(t, logs, 1)
}
