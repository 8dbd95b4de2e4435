package regfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// A FIFO (which no one writes: its blocking open would never return), a
// directory and a device are refused without being read, each said; a
// regular file is read up to the cap, and one over it is refused.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	for path, kind := range map[string]string{fifo: "a FIFO", dir: "a directory", "/dev/null": "a device"} {
		_, err := ReadFile(path, 10)
		require.ErrorIs(t, err, ErrNotRegular)
		var pe *fs.PathError
		require.ErrorAs(t, err, &pe)
		require.Equal(t, "open "+path+": not a regular file ("+kind+")", err.Error())
	}
	file := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(file, []byte("0123456789"), 0o600))
	b, err := ReadFile(file, 10)
	require.NoError(t, err)
	require.Equal(t, "0123456789", string(b))
	_, err = ReadFile(file, 9)
	var tl *TooLargeError
	require.ErrorAs(t, err, &tl)
	require.Equal(t, "read "+file+": more than 9 bytes", err.Error())
	_, err = ReadFile(filepath.Join(dir, "missing"), 10)
	require.ErrorIs(t, err, fs.ErrNotExist)
}

// Under a root, a link that stays inside is followed and one that leaves
// is refused.
func TestReadFileIn(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(outside, []byte("secret"), 0o600))
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "in"), []byte("in"), 0o600))
	require.NoError(t, os.Symlink("in", filepath.Join(dir, "inner")))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "out")))
	root, err := os.OpenRoot(dir)
	require.NoError(t, err)
	defer root.Close()
	b, err := ReadFileIn(root, "inner", 10)
	require.NoError(t, err)
	require.Equal(t, "in", string(b))
	_, err = ReadFileIn(root, "out", 10)
	require.Error(t, err)
	require.True(t, strings.Contains(err.Error(), "escapes"), err)
	require.False(t, errors.Is(err, ErrNotRegular))
}
