package bench_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/bench"
)

// TestHarborLinkedEnvironmentHashed: an environment/ that is a symbolic
// link staying in the task's directory is followed (docs/bench.md), so
// what it leads to is the task's environment: a change of its Dockerfile
// changes the plan id and the image's tag, as for an environment/ that
// is a directory. Before, both hashed the link itself (filepath.WalkDir
// does not follow a root that is a link): the plan id stayed, a results
// directory of the old environment was resumed as this plan's, and
// podman found the old image under the unchanged tag and never rebuilt.
func TestHarborLinkedEnvironmentHashed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "task")
	copyDir(t, filepath.Join(harborSuite, "create-file"), dir)
	require.NoError(t, os.Rename(filepath.Join(dir, "environment"), filepath.Join(dir, "env")))
	require.NoError(t, os.Symlink("env", filepath.Join(dir, "environment")))
	hashes := func() (string, []string) {
		tasks, err := bench.LoadTasks(dir)
		require.NoError(t, err)
		tags, err := bench.ImageTags(tasks)
		require.NoError(t, err)
		require.Len(t, tags, 1)
		return bench.Plan{Tasks: tasks, Agents: []string{"oracle"}}.ID(), tags
	}
	id, tags := hashes()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "env", "Dockerfile"),
		[]byte("FROM localhost/harness-base:bookworm-2\nRUN touch /marker\nWORKDIR /app\n"), 0o644))
	id2, tags2 := hashes()
	require.NotEqual(t, id, id2, "the plan id hashes the environment the link leads to")
	require.NotEqual(t, tags, tags2, "the image's tag hashes the build context the link leads to")
}
