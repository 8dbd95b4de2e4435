package process

import (
	"os"
	"syscall"
)

// writeExecutable writes an executable file the test then runs, with
// syscall.ForkLock held for reading: a spawn of a parallel test forked
// while the file was open for writing kept its descriptor until the
// child's exec, and the test's own exec of the file then failed with
// ETXTBSY ("text file busy", seen once in CI). Every spawn here forks
// through syscall.ForkExec, which takes the lock for writing.
func writeExecutable(path string, data []byte) error {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	return os.WriteFile(path, data, 0o755)
}
