package bench_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/bench"
)

// loadHarborTOML loads the fixture task create-file with text as its
// task.toml.
func loadHarborTOML(t *testing.T, text string) (*bench.HarborTask, error) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "task")
	copyDir(t, filepath.Join(harborSuite, "create-file"), dir)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "task.toml"), []byte(text), 0o644))
	tasks, err := bench.LoadTasks(dir)
	if err != nil {
		return nil, err
	}
	return tasks[0].Harbor, nil
}

// TestHarborDeprecatedSizeWins: a task.toml giving both the older
// memory (storage) and memory_mb (storage_mb) is read as Harbor's
// EnvironmentConfig reads it: the older field wins. Before, bench took
// memory_mb and storage_mb, and a container Harbor gave 4 GiB got 2.
func TestHarborDeprecatedSizeWins(t *testing.T) {
	h, err := loadHarborTOML(t, "[verifier]\n[environment]\nmemory = \"4G\"\nmemory_mb = 2048\nstorage = \"20G\"\nstorage_mb = 10240\n")
	require.NoError(t, err)
	require.Equal(t, 4096, h.MemoryMB)
	require.Equal(t, 20480, h.StorageMB)
}
