package bench

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/isolate"
)

// TestHarborBuildRechecksLinks: a task's Dockerfile or ignore file
// swapped for a symbolic link out of the task after it loaded is refused
// by buildImage, one line naming the task and the file, before the
// engine is asked anything (its binary does not exist here). Before,
// only the load checked, and podman build read the host file.
func TestHarborBuildRechecksLinks(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "host-file")
	require.NoError(t, os.WriteFile(secret, []byte("FROM x\nWORKDIR /from-the-host\n"), 0o600))
	eng := &isolate.Engine{Name: isolate.Podman, Bin: filepath.Join(t.TempDir(), "no-engine")}
	for _, link := range []string{"environment/Dockerfile", "environment/.containerignore"} {
		t.Run(filepath.Base(link), func(t *testing.T) {
			task := filepath.Join(t.TempDir(), "swapped")
			for rel, body := range map[string]string{
				"instruction.md":               "Do it.\n",
				"task.toml":                    "[verifier]\ntimeout_sec = 10.0\n",
				"environment/Dockerfile":       "FROM x\nWORKDIR /app\n",
				"environment/.containerignore": "*.log\n",
				"tests/test.sh":                "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n",
			} {
				p := filepath.Join(task, filepath.FromSlash(rel))
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
				require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
			}
			loaded, err := harborTask(task)
			require.NoError(t, err)
			full := filepath.Join(task, filepath.FromSlash(link))
			require.NoError(t, os.Remove(full))
			require.NoError(t, os.Symlink(secret, full))
			_, err = buildImage(context.Background(), eng, loaded.Name, loaded.Harbor)
			require.ErrorContains(t, err, link+": a symbolic link out of the task's directory")
			require.ErrorContains(t, err, task, "names the task")
			require.NotContains(t, err.Error(), "\n")
		})
	}
}
