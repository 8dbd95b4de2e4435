// Package regfile opens and reads the files harness expects to be
// regular files (configuration, caches, session logs, bench tasks and
// results, token files). Anything else found in such a place, a FIFO, a
// device, a directory, is refused without blocking and without being
// read: the open of a FIFO waits for a writer, and a device may never
// end. What is read is capped. It also writes such files whole or not at
// all (Replace).
package regfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// ErrNotRegular is why a file that is not a regular file is refused.
var ErrNotRegular = errors.New("not a regular file")

// TooLargeError is a file over the size its reader takes, in the
// *fs.PathError of the read.
type TooLargeError struct{ Max int64 }

func (e *TooLargeError) Error() string { return fmt.Sprintf("more than %d bytes", e.Max) }

// The open does not block (a FIFO opens at once instead of waiting for a
// writer; it changes nothing of reading a regular file) and takes no
// terminal as the controlling one.
const flags = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY

// Open opens path for reading if it is a regular file (a symbolic link
// is followed). The type is read from the open file, so a file replaced
// between a look and the open is judged as what was opened. Anything else
// is an *fs.PathError, as the open's own errors are, wrapping
// ErrNotRegular and saying what the file is.
func Open(path string) (*os.File, error) { return regular(os.OpenFile(path, flags, 0)) }

// OpenIn is Open of name under root: a symbolic link is followed only
// while it stays inside root.
func OpenIn(root *os.Root, name string) (*os.File, error) {
	return regular(root.OpenFile(name, flags, 0))
}

// OpenInDir is Open of name, a file of directory dir, where a symbolic
// link is followed only while it stays inside dir (OpenIn): one that
// leads out of it, or is absolute, is refused as ErrNotRegular is, as
// "a symbolic link out of its directory". Whoever can write in dir (an
// agent, in a sandbox that hides the rest of the host) could otherwise
// have its reader, outside that sandbox, read any file of the host.
// Errors name dir/name, as Open's name its path.
func OpenInDir(dir, name string) (*os.File, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close() // the file opened keeps no hold on it
	f, err := OpenIn(root, name)
	if err == nil {
		return f, nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == name {
		// os.Root names the name only, as "openat", and says "path
		// escapes from parent" of a link out (no error value to test).
		pe = &fs.PathError{Op: "open", Path: filepath.Join(dir, name), Err: pe.Err}
		if strings.Contains(pe.Err.Error(), "escapes") {
			pe.Err = fmt.Errorf("%w (a symbolic link out of its directory)", ErrNotRegular)
		}
		return nil, pe
	}
	return nil, err
}

func regular(f *os.File, err error) (*os.File, error) {
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = &fs.PathError{Op: "open", Path: f.Name(), Err: fmt.Errorf("%w (%s)", ErrNotRegular, Kind(st.Mode()))}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ReadFile reads the regular file path whole (Open), at most max bytes:
// a longer one is an *fs.PathError holding a *TooLargeError.
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	return readAll(f, max)
}

// ReadFileIn is ReadFile of name under root (OpenIn).
func ReadFileIn(root *os.Root, name string, max int64) ([]byte, error) {
	f, err := OpenIn(root, name)
	if err != nil {
		return nil, err
	}
	return readAll(f, max)
}

// readAll reads f whole, at most max bytes, and closes it. A file whose
// size already says it is too large is not read.
func readAll(f *os.File, max int64) ([]byte, error) {
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > max {
		return nil, &fs.PathError{Op: "read", Path: f.Name(), Err: &TooLargeError{Max: max}}
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1)) // it may have grown since
	if err == nil && int64(len(data)) > max {
		err = &fs.PathError{Op: "read", Path: f.Name(), Err: &TooLargeError{Max: max}}
	}
	return data, err
}

// Kind names what a file that is not a regular file is.
func Kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	}
	return "a special file"
}
