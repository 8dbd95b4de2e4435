package bench

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/internal/fifotest"
	"github.com/agentharness/harness/internal/regfile"
)

// TestCopyFileRefusesFIFO: copyFile (a Harbor task's tests/test.sh or
// solution/solve.sh, a starting tree's files) refuses a file that became
// a FIFO since it was looked at, at once. Before, its open waited for a
// writer for ever.
func TestCopyFileRefusesFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := fifotest.Make(t, filepath.Join(dir, "test.sh"))
	err := copyFile(fifo, filepath.Join(dir, "copy.sh"), 0o755)
	require.ErrorIs(t, err, regfile.ErrNotRegular)
	require.NoFileExists(t, filepath.Join(dir, "copy.sh"))
}
