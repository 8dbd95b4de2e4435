package config

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// maxFile bounds a config file: one is a few KB, and anything much larger
// put in its place would otherwise be read whole.
const maxFile = 4 << 20

// readRegular reads path whole if it is a regular file of at most maxFile
// bytes. Anything else is an error and is never read: a named pipe there
// hung every command, waiting in the open for a writer. The open does not
// block (O_NONBLOCK changes nothing of reading a regular file), and the
// file judged is the one opened, not whatever the path named a moment
// before.
func readRegular(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s)", fileKind(st.Mode()))
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err == nil && len(data) > maxFile {
		err = fmt.Errorf("larger than %d MiB: not a config file", maxFile>>20)
	}
	return data, err
}

// fileKind names what a file that is not a regular one is.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "mode " + m.Type().String()
}
