package harness_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
)

// TestParsePanicLeavesNoReader: a sink that panics, recovered by Parse's
// caller, leaves no goroutine of Parse's reading the caller's pipe, whose
// writer is still there: what it writes next is the caller's to read.
// The reading goroutine was left in its read of an os.Pipe (the deadline
// that ends it was only set at ctx's cancel, and that watch was stopped
// as Parse returned) and took the next line. Not parallel: it looks for
// Parse's goroutines among all.
func TestParsePanicLeavesNoReader(t *testing.T) {
	for _, tc := range []struct {
		name string
		open func(t *testing.T) (r, w *os.File)
	}{
		{"os.Pipe", func(t *testing.T) (r, w *os.File) {
			r, w, err := os.Pipe() // its reads take a deadline: Parse reads it itself
			require.NoError(t, err)
			return r, w
		}},
		{"blocking pipe", blockingPipe}, // as a shell's: reopened through /proc
		{"fifo", func(t *testing.T) (r, w *os.File) {
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
			r, err := os.Open(path) // non-blocking once open: in the poller
			require.NoError(t, err)
			return r, <-opened
		}},
		{"socket", func(t *testing.T) (r, w *os.File) {
			// Read on a goroutine of its own, whose read in flight cannot be
			// ended: it reads once more (the first line written after), and
			// what it reads is dropped; nothing reads after it.
			return blockingSocketPair(t)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, w := tc.open(t)
			t.Cleanup(func() { _ = w.Close(); _ = r.Close() })
			_, err := w.WriteString(usageLines)
			require.NoError(t, err)
			require.PanicsWithValue(t, "a bug in the sink", func() {
				_, _ = harness.Parse(context.Background(), r, "claude", func(ev event.Event) {
					panic("a bug in the sink")
				}, harness.ParseOptions{})
			})
			want := "next\n"
			if tc.name == "socket" {
				// Parse has returned: no read starts now, and one in flight
				// (the reader may have been between two) has its goroutine.
				if !goroutineIn("harness.(*abandoning).Read.func1") {
					want = "dropped\n" + want // nobody took it: the caller's
				}
				_, err := w.WriteString("dropped\n")
				require.NoError(t, err)
				waitGone(t, "harness.(*abandoning).Read.func1") // the read in flight took it
			}
			waitGone(t, "adapters.parseBatches", "adapters.Normalize.func")
			// Given the time to take what comes next, had a read of Parse's
			// been left behind (it was, parked in the poller before this
			// line was written, and so first to it).
			time.Sleep(50 * time.Millisecond)
			_, err = w.WriteString("next\n")
			require.NoError(t, err)
			got := make(chan string, 1)
			go func() {
				b, _ := io.ReadAll(io.LimitReader(r, int64(len(want)))) // no deadline: Parse left none
				got <- string(b)
			}()
			select {
			case s := <-got:
				require.Equal(t, want, s, "the caller reads on where Parse's reading stopped")
			case <-time.After(5 * time.Second): // a bound on a hang, not a wait
				_ = w.Close() // ends the caller's read
				t.Fatalf("the caller's read got %q: a read of Parse's left behind took the line", <-got)
			}
		})
	}
}

// goroutineIn reports whether a goroutine runs the function named.
func goroutineIn(fn string) bool {
	buf := make([]byte, 1<<20)
	return bytes.Contains(buf[:runtime.Stack(buf, true)], []byte(fn))
}

// waitGone waits (a few seconds at most) until no goroutine runs one of
// the functions named.
func waitGone(t *testing.T, funcs ...string) {
	t.Helper()
	buf := make([]byte, 1<<20)
	for deadline := time.Now().Add(5 * time.Second); ; {
		stacks := buf[:runtime.Stack(buf, true)]
		found := ""
		for _, fn := range funcs {
			if bytes.Contains(stacks, []byte(fn)) {
				found = fn
			}
		}
		if found == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a goroutine of Parse's is left in %s:\n%s", found, stacks)
		}
		time.Sleep(10 * time.Millisecond) // polling for a condition
	}
}
