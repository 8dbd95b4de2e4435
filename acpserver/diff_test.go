package acpserver

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/internal/fifotest"
)

// The diff sent to the editor names a file that is a named pipe by then
// (the agent swapped it after the call): the pipe is never opened, and
// the editor gets the diff's text, never a guessed before.
func TestACPServerDiffOfAPipeIsItsText(t *testing.T) {
	dir := t.TempDir()
	pipe := filepath.Join(dir, "out.txt")
	require.NoError(t, syscall.Mkfifo(pipe, 0o600))
	fifotest.Guard(t, pipe)
	f := &forwarder{cwd: dir}
	contents := f.diffs("--- a/out.txt\n+++ b/out.txt\n@@ -1 +1 @@\n-a\n+b\n")
	require.Len(t, contents, 1)
	require.Nil(t, contents[0].Diff)
	require.NotNil(t, contents[0].Content)
	st, err := os.Lstat(pipe)
	require.NoError(t, err)
	require.Equal(t, os.ModeNamedPipe, st.Mode().Type())
}
