package registry

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestUpdateCacheWriteError: a good models file whose cache cannot be
// written (a file where the cache's directory belongs, a name the
// temporary file cannot take; a full disk or a read-only directory alike)
// is a *CacheWriteError naming the cache, which the CLI makes exit 1: it
// was a plain error, and the CLI's usage error (exit 2). Its one line
// names the cache, and a parent directory only when that is what failed.
func TestUpdateCacheWriteError(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "src.toml")
	require.NoError(t, os.WriteFile(src, []byte(goodModels), 0o600))

	t.Run("directory-is-a-file", func(t *testing.T) {
		t.Parallel()
		blocker := filepath.Join(t.TempDir(), "harness")
		require.NoError(t, os.WriteFile(blocker, nil, 0o600))
		cache := filepath.Join(blocker, "models.toml")
		_, err := Update(src, cache, nil)
		var we *CacheWriteError
		require.ErrorAs(t, err, &we)
		require.Equal(t, cache, we.Path)
		require.ErrorIs(t, err, syscall.ENOTDIR)
		require.EqualError(t, err, "registry: update: cannot write the model cache "+cache+": mkdir "+blocker+": not a directory")
	})
	t.Run("temporary-file", func(t *testing.T) {
		t.Parallel()
		// The name fits, ".NAME.123.tmp" does not: CreateTemp fails in
		// the cache's own directory, as in a read-only one.
		cache := filepath.Join(t.TempDir(), strings.Repeat("m", 250))
		_, err := Update(src, cache, nil)
		var we *CacheWriteError
		require.ErrorAs(t, err, &we)
		require.ErrorIs(t, err, syscall.ENAMETOOLONG)
		require.EqualError(t, err, "registry: update: cannot write the model cache "+cache+": file name too long")
		_, err = os.Stat(cache)
		require.ErrorIs(t, err, os.ErrNotExist)
	})
	t.Run("bad-file-is-not-one", func(t *testing.T) {
		t.Parallel()
		bad := filepath.Join(t.TempDir(), "bad.toml")
		require.NoError(t, os.WriteFile(bad, []byte("not toml"), 0o600))
		_, err := Update(bad, filepath.Join(t.TempDir(), "models.toml"), nil)
		require.Error(t, err)
		var we *CacheWriteError
		require.NotErrorAs(t, err, &we)
	})
}
