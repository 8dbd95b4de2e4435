package registry

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/internal/fifotest"
)

// TestLoadReadsOnlyARegularCache: a cache that is a named pipe is a
// *CacheError naming it, never opened for reading (its open waited for a
// writer: every command hung), so that the caller falls back to the
// built-in table as for a damaged cache; so is one too large to be a
// models file, and one at the cap is read.
func TestLoadReadsOnlyARegularCache(t *testing.T) {
	t.Parallel()
	t.Run("fifo", func(t *testing.T) {
		t.Parallel()
		cache := filepath.Join(t.TempDir(), "models.toml")
		require.NoError(t, syscall.Mkfifo(cache, 0o600))
		fifotest.Guard(t, cache)
		_, err := Load(cache, nil)
		var ce *CacheError
		require.ErrorAs(t, err, &ce)
		require.Equal(t, cache, ce.Path)
		require.EqualError(t, err, "registry: read model cache: open "+cache+": not a regular file (a FIFO)")
	})
	// Valid TOML padded with blank lines: only its size is wrong.
	padded := func(t *testing.T, size int) string {
		body := []byte(goodModels)
		body = append(body, bytes.Repeat([]byte("\n"), size-len(body))...)
		cache := filepath.Join(t.TempDir(), "models.toml")
		require.NoError(t, os.WriteFile(cache, body, 0o600))
		return cache
	}
	t.Run("too-large", func(t *testing.T) {
		t.Parallel()
		_, err := Load(padded(t, maxModelsFile+1), nil)
		var ce *CacheError
		require.ErrorAs(t, err, &ce)
		require.ErrorContains(t, err, "more than 4194304 bytes")
	})
	t.Run("at-the-cap", func(t *testing.T) {
		t.Parallel()
		m, err := Load(padded(t, maxModelsFile), nil)
		require.NoError(t, err)
		id, ok := m.Resolve("fast", "codex")
		require.True(t, ok)
		require.Equal(t, "gpt-fast", id)
	})
}
