package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRunOutputFileLeftWhenRefused: a run refused as a usage error once
// its settings are in (a budget or turn count the adapter refuses, a
// resume id that is a flag, a Prepare TaskError) leaves an existing -o
// file as it was: it was created, so truncated, before the task was
// checked.
func TestRunOutputFileLeftWhenRefused(t *testing.T) {
	for name, args := range map[string][]string{
		"max-turns":   {"-a", "claude", "--max-turns=-3"},
		"resume":      {"-a", "codex", "--resume=-x"},
		"prepare-err": {"-a", "claude", "--otlp", "http://127.0.0.1:9", "--", "--settings", "settings.json"},
	} {
		t.Run(name, func(t *testing.T) {
			home := isolate(t)
			out := filepath.Join(home, "out.ndjson")
			require.NoError(t, os.WriteFile(out, []byte("keep\n"), 0o644))
			r := invoke(t, "", append([]string{"run", "-p", "hi", "--binary", "/bin/true", "-o", out}, args...)...)
			require.Equal(t, exitUsage, r.code, r.stderr)
			data, err := os.ReadFile(out)
			require.NoError(t, err)
			require.Equal(t, "keep\n", string(data), "the refused run truncated -o")
		})
	}
}

// TestRunOutputFileIsPrivate: -o FILE is 0600 also when it existed with
// another mode (OpenFile's mode is only a new file's), and holds the
// stream alone; what is not a regular file (a FIFO, /dev/null) keeps its
// mode.
func TestRunOutputFileIsPrivate(t *testing.T) {
	home := isolate(t)
	out := filepath.Join(home, "out.ndjson")
	require.NoError(t, os.WriteFile(out, []byte(strings.Repeat("old\n", 1000)), 0o644))
	r := runFake(t, "echo-env", "-o", out)
	require.Equal(t, 0, r.code, r.stderr)
	fi, err := os.Stat(out)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	require.Equal(t, r.stdout, string(data))

	// Not /dev/null: a fault here would change the machine's.
	fifo := filepath.Join(home, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	read := make(chan []byte)
	go func() {
		data, _ := os.ReadFile(fifo)
		read <- data
	}()
	r = runFake(t, "echo-env", "-o", fifo)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, r.stdout, string(<-read))
	fi, err = os.Stat(fifo)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o644), fi.Mode().Perm(), "-o FIFO changed its mode")
}
