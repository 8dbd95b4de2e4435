package regfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// requireOnly fails unless dir holds exactly names: no temporary file is
// left.
func requireOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	require.ElementsMatch(t, names, got)
}

func requireFile(t *testing.T, path, content string, perm os.FileMode) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, content, string(data))
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, perm, st.Mode().Perm())
}

func TestReplace(t *testing.T) {
	t.Parallel()
	t.Run("new-file", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		path := filepath.Join(dir, "f.json")
		var tmp string
		require.NoError(t, Replace(path, 0o644, func(f *os.File) error {
			tmp = filepath.Base(f.Name())
			_, err := f.WriteString("new")
			return err
		}))
		require.True(t, strings.HasPrefix(tmp, ".f.json.") && strings.HasSuffix(tmp, ".tmp"), tmp)
		requireFile(t, path, "new", 0o644) // not CreateTemp's 0600
		requireOnly(t, dir, "f.json")
	})
	t.Run("replaces-with-mode", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		path := filepath.Join(dir, "f")
		require.NoError(t, os.WriteFile(path, []byte("old content, longer"), 0o644))
		require.NoError(t, WriteFile(path, []byte("new"), 0o600, Synced()))
		requireFile(t, path, "new", 0o600)
		requireOnly(t, dir, "f")
	})
	t.Run("write-fails", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		path := filepath.Join(dir, "f")
		require.NoError(t, os.WriteFile(path, []byte("old"), 0o644))
		errWrite := errors.New("write failed")
		err := Replace(path, 0o600, func(f *os.File) error {
			_, _ = f.WriteString("half")
			return errWrite
		})
		require.ErrorIs(t, err, errWrite)
		requireFile(t, path, "old", 0o644)
		requireOnly(t, dir, "f")
	})
	t.Run("write-panics", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		path := filepath.Join(dir, "f")
		require.Panics(t, func() {
			_ = Replace(path, 0o600, func(*os.File) error { panic("write") })
		})
		requireOnly(t, dir)
	})
	t.Run("rename-fails", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		path := filepath.Join(dir, "d")
		require.NoError(t, os.MkdirAll(filepath.Join(path, "in"), 0o700)) // a file is not renamed over a directory
		err := WriteFile(path, []byte("new"), 0o600)
		var le *os.LinkError
		require.ErrorAs(t, err, &le)
		require.Equal(t, path, le.New)
		requireOnly(t, dir, "d")
		requireOnly(t, path, "in")
	})
	t.Run("no-directory", func(t *testing.T) {
		t.Parallel()
		called := false
		err := Replace(filepath.Join(t.TempDir(), "missing", "f"), 0o600, func(*os.File) error {
			called = true
			return nil
		})
		require.ErrorIs(t, err, fs.ErrNotExist)
		require.False(t, called, "write is called only once the temporary file exists")
	})
	t.Run("temp-pattern", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		var tmp string
		require.NoError(t, Replace(filepath.Join(dir, "f"), 0o444, func(f *os.File) error {
			tmp = filepath.Base(f.Name())
			_, err := f.WriteString("obj")
			return err
		}, TempPattern("tmp_obj_")))
		require.True(t, strings.HasPrefix(tmp, "tmp_obj_"), tmp)
		requireFile(t, filepath.Join(dir, "f"), "obj", 0o444)
		requireOnly(t, dir, "f")
	})
}
