package bench_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/bench"
)

// TestHarborBuildFileLinksOut: environment/Dockerfile and the ignore
// files the image build reads, when they are symbolic links out of the
// task's directory, refuse the task at load with one line naming the
// task and the file, as a linked tests/test.sh is refused; a link that
// stays in the task's directory is followed, and an environment/ that
// is a link out is refused as a whole. Before, a Dockerfile linked
// to a host file loaded: bench took its WORKDIR and COPYs from the host
// file and podman build read it as the image's recipe.
func TestHarborBuildFileLinksOut(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "host-file")
	require.NoError(t, os.WriteFile(secret, []byte("FROM x\nWORKDIR /from-the-host\n"), 0o600))
	base := map[string]string{
		"instruction.md":         "Do it.\n",
		"task.toml":              "[verifier]\ntimeout_sec = 10.0\n",
		"environment/Dockerfile": "FROM x\nWORKDIR /app\n",
		"tests/test.sh":          "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n",
		"shared/Dockerfile":      "FROM x\nWORKDIR /shared\n",
	}
	makeTask := func(t *testing.T, link, target string) string {
		t.Helper()
		task := filepath.Join(t.TempDir(), "built")
		writeFiles(t, task, base)
		full := filepath.Join(task, filepath.FromSlash(link))
		require.NoError(t, os.RemoveAll(full))
		require.NoError(t, os.Symlink(target, full))
		return task
	}
	for _, link := range []string{
		"environment/Dockerfile",
		"environment/.dockerignore", "environment/.containerignore",
		"environment/Dockerfile.dockerignore", "environment/Dockerfile.containerignore",
	} {
		for name, target := range map[string]string{"absolute": secret, "relative": "../../host.txt"} {
			t.Run(filepath.Base(link)+"/"+name, func(t *testing.T) {
				task := makeTask(t, link, target)
				// ../../ from environment/ is the suite's directory, beside the task.
				require.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(task), "host.txt"), []byte("FROM x\n"), 0o600))
				for _, dir := range []string{task, filepath.Dir(task)} {
					_, err := bench.LoadTasks(dir)
					require.Error(t, err, dir)
					require.ErrorContains(t, err, task, "names the task")
					require.ErrorContains(t, err, link+": a symbolic link out of the task's directory")
					require.NotContains(t, err.Error(), "\n")
				}
			})
		}
	}
	t.Run("environment-dir-out", func(t *testing.T) {
		ctx := filepath.Join(outside, "environment") // a Dockerfile and no COPY
		writeFiles(t, ctx, map[string]string{"Dockerfile": "FROM x\nWORKDIR /from-the-host\n"})
		task := makeTask(t, "environment", ctx)
		_, err := bench.LoadTasks(task)
		require.ErrorContains(t, err, "environment: a symbolic link out of the task's directory")
		require.ErrorContains(t, err, task)
	})
	t.Run("Dockerfile-in-task", func(t *testing.T) {
		task := makeTask(t, "environment/Dockerfile", "../shared/Dockerfile")
		tasks, err := bench.LoadTasks(task)
		require.NoError(t, err)
		require.Equal(t, "/shared", tasks[0].Harbor.Workdir)
	})
	t.Run("Dockerfile-dangling", func(t *testing.T) {
		_, err := bench.LoadTasks(makeTask(t, "environment/Dockerfile", "../nowhere"))
		require.ErrorContains(t, err, "environment/Dockerfile: a symbolic link to nothing")
	})
}
