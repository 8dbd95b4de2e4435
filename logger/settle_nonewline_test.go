package logger

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentharness/harness/event"
	"github.com/stretchr/testify/require"
)

// TestSettleNoNewlineReadsTail: a run whose meta says running and whose
// log does not end with a newline (a writer is at its last line, or died
// in it) has no result to settle on, so Load reads the log's last byte
// and not its head: it read 1 MiB of a log with no newline looking for a
// first line only a run without a meta uses. Without a meta, the first
// line is looked for up to the stream's line cap, and no further.
func TestSettleNoNewlineReadsTail(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions")
	const run = "run_01NONEWLINE000000000000000"
	require.NoError(t, os.MkdirAll(dir, 0o700))
	log := bytes.Repeat([]byte("x"), 3*event.MaxLineBytes)
	require.NoError(t, os.WriteFile(Path(dir, run, ExtEvents), log, 0o600))

	t.Run("meta-running", func(t *testing.T) {
		writeMetaFile(t, dir, Meta{Run: run, Agent: "claude", Status: StatusRunning})
		before := procBytesRead(t)
		m, err := Load(dir, run)
		read := procBytesRead(t) - before
		require.NoError(t, err)
		require.Equal(t, "claude", m.Agent)
		require.Less(t, read, int64(64<<10), "bytes read to load a running run whose log has no newline")
	})
	t.Run("no-meta", func(t *testing.T) {
		require.NoError(t, os.Remove(Path(dir, run, ExtMeta)))
		before := procBytesRead(t)
		_, err := Load(dir, run)
		read := procBytesRead(t) - before
		require.NoError(t, err)
		require.Less(t, read, int64(event.MaxLineBytes+128<<10), "a first line is looked for up to the line cap")
	})
}
