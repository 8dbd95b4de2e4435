// Package execfile writes the executable files tests then run (fake
// agents, scripts), so that running them never fails with ETXTBSY ("text
// file busy"): a fork of the same process while the file is open for
// writing keeps the descriptor in the child until its exec, and an exec
// of the file meanwhile fails. CI saw it once in the process package's
// parallel spawns.
package execfile

import (
	"os"
	"syscall"
)

// Write writes data to path with perm, holding syscall.ForkLock for
// reading while the file is open: every fork of a Go program
// (syscall.ForkExec, os/exec) takes it for writing.
func Write(path string, data []byte, perm os.FileMode) error {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	return os.WriteFile(path, data, perm)
}
