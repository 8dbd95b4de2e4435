package harness_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
)

// TestParseCancelEndsABlockingRead: a cancelled ctx ends Parse while it
// waits for the writer of a file whose reads take no deadline (os.Stdin
// as a shell hands it on, a FIFO opened blocking, a socket), with the
// events of what was read before; the caller's pipe is left as it was:
// blocking, and no read of Parse's left behind takes what comes next.
func TestParseCancelEndsABlockingRead(t *testing.T) {
	t.Parallel()
	for name, open := range map[string]func(t *testing.T) (r, w *os.File){
		"pipe": blockingPipe,
		"fifo": func(t *testing.T) (r, w *os.File) {
			path := filepath.Join(t.TempDir(), "fifo")
			require.NoError(t, syscall.Mkfifo(path, 0o600))
			opened := make(chan *os.File, 1)
			go func() {
				f, err := os.OpenFile(path, os.O_WRONLY, 0)
				if err != nil {
					t.Error(err)
				}
				opened <- f
			}()
			fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0) // blocking: not in the poller
			require.NoError(t, err)
			return os.NewFile(uintptr(fd), path), <-opened
		},
		"socket": blockingSocketPair,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r, w := open(t)
			t.Cleanup(func() { _ = w.Close(); _ = r.Close() })
			require.Error(t, r.SetReadDeadline(time.Time{}), "the case is a file whose reads take no deadline")
			_, err := w.WriteString(strings.SplitAfter(usageLines, "\n")[0])
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			started := make(chan struct{})
			type parsed struct {
				res *event.Result
				err error
			}
			done := make(chan parsed, 1)
			go func() {
				res, err := harness.Parse(ctx, r, "claude", func(ev event.Event) {
					if ev.Type == event.TypeSessionStart {
						close(started)
					}
				}, harness.ParseOptions{})
				done <- parsed{res, err}
			}()
			<-started // the line read: Parse waits for the next
			cancel()
			select {
			case p := <-done:
				require.ErrorIs(t, p.err, context.Canceled)
				require.NotNil(t, p.res)
			case <-time.After(10 * time.Second): // only a hang's bound: the cancel ends it at once
				t.Fatal("Parse went on waiting for the writer after its ctx was cancelled")
			}
			if name == "socket" {
				return // read on a goroutine left to its read: what it reads next is dropped
			}
			fl, err := fcntl(r.Fd(), syscall.F_GETFL)
			require.NoError(t, err)
			require.Zero(t, fl&syscall.O_NONBLOCK, "the caller's file is still blocking")
			_, err = w.WriteString("next\n")
			require.NoError(t, err)
			buf := make([]byte, 16)
			n, err := r.Read(buf)
			require.NoError(t, err)
			require.Equal(t, "next\n", string(buf[:n]), "the caller reads on where Parse stopped")
		})
	}
}

func fcntl(fd uintptr, cmd int) (int, error) {
	v, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, uintptr(cmd), 0)
	if errno != 0 {
		return 0, errno
	}
	return int(v), nil
}
