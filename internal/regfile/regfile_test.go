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

// OpenInDir follows a link that stays inside the directory, and refuses
// one out of it, or absolute, as it refuses a FIFO: not a regular file,
// naming the file in the directory; a dangling link is a missing file.
func TestOpenInDir(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(outside, []byte("secret"), 0o600))
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "in"), []byte("in"), 0o600))
	require.NoError(t, os.Symlink("in", filepath.Join(dir, "inner")))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "out")))
	require.NoError(t, os.Symlink("../"+filepath.Base(filepath.Dir(outside))+"/secret", filepath.Join(dir, "up")))
	require.NoError(t, os.Symlink(filepath.Join(dir, "in"), filepath.Join(dir, "abs")))
	require.NoError(t, os.Symlink("nothing", filepath.Join(dir, "dangling")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600))

	for _, name := range []string{"in", "inner"} {
		f, err := OpenInDir(dir, name)
		require.NoError(t, err, name)
		require.Equal(t, filepath.Join(dir, name), f.Name())
		f.Close()
	}
	for _, name := range []string{"out", "up", "abs"} {
		_, err := OpenInDir(dir, name)
		require.ErrorIs(t, err, ErrNotRegular, name)
		require.Equal(t, "open "+filepath.Join(dir, name)+": not a regular file (a symbolic link out of its directory)", err.Error())
	}
	_, err := OpenInDir(dir, "fifo")
	require.Equal(t, "open "+filepath.Join(dir, "fifo")+": not a regular file (a FIFO)", err.Error())
	for _, name := range []string{"dangling", "missing"} {
		_, err := OpenInDir(dir, name)
		require.ErrorIs(t, err, fs.ErrNotExist, name)
		require.Equal(t, "open "+filepath.Join(dir, name)+": no such file or directory", err.Error())
	}
	_, err = OpenInDir(filepath.Join(dir, "nodir"), "in")
	require.ErrorIs(t, err, fs.ErrNotExist)
}
