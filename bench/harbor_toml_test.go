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

// TestHarborSizeSuffixes: memory and storage are read as Harbor's
// _parse_size_to_mb reads them: a number, then G, M or K (any case).
// Before, "512K" was refused, and "1024" (no unit), "2GB" and "2GGG",
// which Harbor refuses, were read as sizes.
func TestHarborSizeSuffixes(t *testing.T) {
	for size, want := range map[string]int{"2G": 2048, "1.5g": 1536, " 512M ": 512, "2048K": 2, "512k": 0, "3 G": 3072} {
		h, err := loadHarborTOML(t, "[verifier]\n[environment]\nmemory = \""+size+"\"\nstorage = \""+size+"\"\n")
		require.NoError(t, err, size)
		require.Equal(t, want, h.MemoryMB, size)
		require.Equal(t, want, h.StorageMB, size)
	}
	for _, size := range []string{"1024", "2GB", "2GGG", "512MB", "G", "", "0x1p4G", "1T"} {
		_, err := loadHarborTOML(t, "[verifier]\n[environment]\nmemory = \""+size+"\"\n")
		require.ErrorContains(t, err, "environment.memory = "+size+": want a size such as", size)
		_, err = loadHarborTOML(t, "[verifier]\n[environment]\nstorage = \""+size+"\"\n")
		require.ErrorContains(t, err, "environment.storage = "+size+": want a size such as", size)
	}
}

// TestHarborZeroTimeoutRefused: a [verifier].timeout_sec or
// [environment].build_timeout_sec of 0 is refused with its reason.
// Harbor waits 0 s for the verifier (or the build), so every trial of
// the task ends in a timeout; bench read 0 as Harbor's default, 600 s,
// and gave the task a verdict Harbor never gives.
func TestHarborZeroTimeoutRefused(t *testing.T) {
	for toml, want := range map[string]string{
		"[verifier]\ntimeout_sec = 0\n":                        "task.toml: verifier.timeout_sec = 0: Harbor times the verifier out at once; want more than 0 seconds",
		"[verifier]\n[environment]\nbuild_timeout_sec = 0.0\n": "task.toml: environment.build_timeout_sec = 0: Harbor times the build out at once; want more than 0 seconds",
	} {
		_, err := loadHarborTOML(t, toml)
		require.ErrorContains(t, err, want, toml)
	}
}

// TestHarborArtifactFieldTypes: an artifact's destination that is not a
// string, or exclude that is not a list of strings, is refused, as
// Harbor's ArtifactConfig refuses it. Before, bench dropped it without a
// word: the artifact went to its default place, or whole.
func TestHarborArtifactFieldTypes(t *testing.T) {
	for _, artifact := range []string{
		`{ source = "/app/out", destination = 5 }`,
		`{ source = "/app/out", exclude = "*.log" }`,
		`{ source = "/app/out", exclude = ["*.log", 1] }`,
	} {
		_, err := loadHarborTOML(t, "artifacts = ["+artifact+"]\n[verifier]\n")
		require.ErrorContains(t, err, "task.toml: artifacts[0]: want", artifact)
	}
	h, err := loadHarborTOML(t, "artifacts = [{ source = \"/app/out\", destination = \"o\", exclude = [\"*.log\"] }]\n[verifier]\n")
	require.NoError(t, err)
	require.Equal(t, []bench.Artifact{{Source: "/app/out", Destination: "o", Exclude: []string{"*.log"}}}, h.Artifacts)
}
