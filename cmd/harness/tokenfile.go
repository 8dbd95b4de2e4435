package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
)

// readTokenFile reads a bearer token file the way ssh reads a key: one
// that others may write is refused (anyone could put their own token in
// it), one that others may read is used with a warning on stderr. The
// mode is read from the open file, so the checked file is the read one.
// Only a regular file is read: the open does not block (O_NONBLOCK), as
// the open of a FIFO would wait for a writer, and the command with it,
// before it could say anything.
func readTokenFile(cmd, path string, stderr io.Writer) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() {
		return "", usageErrorf("%s: --token-file %s is %s, not a regular file", cmd, path, fileKind(st.Mode()))
	}
	perm := st.Mode().Perm()
	if perm&0o022 != 0 {
		return "", usageErrorf("%s: --token-file %s is writable by other users (mode %04o): chmod 600 it", cmd, path, perm)
	}
	if perm&0o044 != 0 {
		fmt.Fprintf(stderr, "harness %s: warning: --token-file %s is readable by other users (mode %04o): chmod 600 it\n", cmd, path, perm)
	}
	b, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

func fileKind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	}
	return "a special file"
}
