package harness_test

import (
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// blockingPipe is a pipe as a shell hands it on: blocking, out of Go's
// poller.
func blockingPipe(t *testing.T) (r, w *os.File) {
	return blockingPair(t, "|0", "|1", syscall.Pipe)
}

// blockingSocketPair is a connected pair of Unix stream sockets, blocking.
func blockingSocketPair(t *testing.T) (r, w *os.File) {
	return blockingPair(t, "sock0", "sock1", func(p []int) error {
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		copy(p, fds[:])
		return err
	})
}

// blockingPair opens two descriptors with open and sets close-on-exec on
// them under the fork lock, as os.Pipe does where pipe2 is missing
// (macOS): no child spawned meanwhile inherits them.
func blockingPair(t *testing.T, name0, name1 string, open func(p []int) error) (r, w *os.File) {
	p := make([]int, 2)
	syscall.ForkLock.RLock()
	err := open(p)
	if err == nil {
		syscall.CloseOnExec(p[0])
		syscall.CloseOnExec(p[1])
	}
	syscall.ForkLock.RUnlock()
	require.NoError(t, err)
	return os.NewFile(uintptr(p[0]), name0), os.NewFile(uintptr(p[1]), name1)
}
