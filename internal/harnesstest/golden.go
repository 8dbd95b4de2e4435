package harnesstest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Golden holds got to the golden file path, or with update (the package's
// -update flag) writes it there instead.
func Golden(t testing.TB, path string, got []byte, update bool) {
	t.Helper()
	if update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update")
	require.Equal(t, string(want), string(got))
}
