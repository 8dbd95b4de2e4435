package harness_test

import (
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// blockingPipe is a pipe as a shell hands it on: blocking, out of Go's
// poller. Close-on-exec is set under the fork lock, as os.Pipe does where
// pipe2 is missing (macOS), so no child spawned meanwhile inherits it.
func blockingPipe(t *testing.T) (r, w *os.File) {
	var p [2]int
	syscall.ForkLock.RLock()
	err := syscall.Pipe(p[:])
	if err == nil {
		syscall.CloseOnExec(p[0])
		syscall.CloseOnExec(p[1])
	}
	syscall.ForkLock.RUnlock()
	require.NoError(t, err)
	return os.NewFile(uintptr(p[0]), "|0"), os.NewFile(uintptr(p[1]), "|1")
}

// blockingSocketPair is a connected pair of Unix stream sockets, blocking,
// close-on-exec as blockingPipe's ends.
func blockingSocketPair(t *testing.T) (r, w *os.File) {
	syscall.ForkLock.RLock()
	p, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(p[0])
		syscall.CloseOnExec(p[1])
	}
	syscall.ForkLock.RUnlock()
	require.NoError(t, err)
	return os.NewFile(uintptr(p[0]), "sock0"), os.NewFile(uintptr(p[1]), "sock1")
}
