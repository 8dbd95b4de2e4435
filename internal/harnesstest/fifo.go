package harnesstest

import (
	"syscall"
	"testing"
	"time"
)

// GuardFIFO turns a hang on the named pipe at path into a test failure:
// while the test runs, every 20 s it opens the pipe for writing and
// closes it, which releases a reader stuck opening it, and the first time
// fails the test. It guards against a hang, it does not synchronize: a
// harness that never opens the pipe ends long before.
func GuardFIFO(t *testing.T, path string) {
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
