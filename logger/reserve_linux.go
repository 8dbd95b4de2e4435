package logger

import (
	"os"

	"golang.org/x/sys/unix"
)

// reserve allocates n bytes of f's blocks from off on, past its end,
// without changing its size (readers see only what was written).
func reserve(f *os.File, off, n int64) error {
	c, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := c.Control(func(fd uintptr) {
		ferr = unix.Fallocate(int(fd), unix.FALLOC_FL_KEEP_SIZE, off, n)
	}); err != nil {
		return err
	}
	return ferr
}
