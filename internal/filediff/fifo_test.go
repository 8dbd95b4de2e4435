// An external test: harnesstest imports the harness, which imports filediff.
package filediff_test

import (
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/fifotest"
	"github.com/agentharness/harness/internal/filediff"
)

// Only regular files are opened: a named pipe (directly or through a
// symbolic link), a device, a socket and a directory get not_regular, and
// opening none of them blocks.
func TestLiveDiffNeverOpensWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	fifotest.Guard(t, fifo)
	require.NoError(t, os.Symlink(fifo, filepath.Join(dir, "link-to-fifo")))
	sock, err := net.Listen("unix", filepath.Join(dir, "sock"))
	require.NoError(t, err)
	defer sock.Close()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	d := filediff.New(dir)
	for _, p := range []string{"fifo", "link-to-fifo", "sock", "sub", os.DevNull} {
		t.Run(filepath.Base(p), func(t *testing.T) {
			end := &event.ToolEnd{CallID: "c-" + p, Name: "Write", Kind: event.KindWrite, Status: event.StatusOK, Paths: []string{p}, Diff: "--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+x\n"}
			d.Arrived(time.Now())
			d.Observe([]event.Body{&event.ToolStart{CallID: "c-" + p, Name: "Write", Kind: event.KindWrite, Path: p}})
			d.Observe([]event.Body{end})
			require.Empty(t, end.Diff)
			require.Equal(t, event.DiffSkippedNotRegular, end.DiffSkipped)
		})
	}
	_, err = filediff.ReadRegularFile(fifo, filediff.MaxFileBytes)
	require.ErrorIs(t, err, filediff.ErrNotRegular)
}
