package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/agentharness/harness/internal/regfile"
)

// readTokenFile reads a bearer token file the way ssh reads a key: one
// that others may write is refused (anyone could put their own token in
// it), one that others may read is used with a warning on stderr. The
// mode is read from the open file, so the checked file is the read one.
// Only a regular file is read (regfile): the open of a FIFO would wait
// for a writer, and the command with it, before it could say anything.
func readTokenFile(cmd, path string, stderr io.Writer) (string, error) {
	f, err := regfile.Open(path)
	if errors.Is(err, regfile.ErrNotRegular) {
		return "", usageErrorf("%s: --token-file %s: %v", cmd, path, errors.Unwrap(err))
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
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
	tok := strings.TrimSpace(string(b))
	if tok == "" { // said so, not "give --token-file": it was given
		return "", usageErrorf("%s: --token-file %s is empty: put a bearer token in it (for example: head -c 32 /dev/urandom | base64)", cmd, path)
	}
	return tok, nil
}
