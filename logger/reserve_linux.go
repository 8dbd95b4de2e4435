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

// writeBehind starts writing f's pages of [from, to) to the disk and
// drops from the page cache those of [drop, from), whose writing was
// started one call before; it waits for neither. A page still being
// written, or dirty again, stays.
func writeBehind(f *os.File, drop, from, to int64) error {
	c, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := c.Control(func(fd uintptr) {
		ferr = unix.SyncFileRange(int(fd), from, to-from, unix.SYNC_FILE_RANGE_WRITE)
		if ferr == nil && from > drop {
			ferr = unix.Fadvise(int(fd), drop, from-drop, unix.FADV_DONTNEED)
		}
	}); err != nil {
		return err
	}
	return ferr
}
