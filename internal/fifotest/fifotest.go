// Package fifotest makes named pipes for the tests of code that must
// never open one for reading (its open waits for a writer), and turns a
// hang in such an open into a test failure. It imports nothing of
// harness, so that the tests of every package, config and registry
// among them, can use it.
package fifotest

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Make makes a named pipe at path (and its missing parents), guarded
// (Guard), and returns path.
func Make(t testing.TB, path string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	Guard(t, path)
	return path
}

// Guard turns a hang on the named pipe at path into a test failure:
// while the test runs, every 20 s it opens the pipe for writing and
// closes it, which releases a reader stuck opening it, and the first time
// fails the test. It guards against a hang, it does not synchronize: code
// that never opens the pipe ends long before.
func Guard(t testing.TB, path string) {
	t.Helper()
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(20 * time.Second)
		defer tick.Stop()
		for first := true; ; first = false {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			if first {
				t.Errorf("still running after 20 s: something opened the pipe %s", path)
			}
			if fd, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				_ = syscall.Close(fd)
			}
		}
	}()
	t.Cleanup(func() {
		close(done)
		<-stopped
	})
}
