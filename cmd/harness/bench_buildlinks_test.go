package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBenchHarborDockerfileLinkOut: a Harbor task whose
// environment/Dockerfile is a symbolic link to a host file is refused
// before anything runs, exit 2, one line naming the task and the file;
// nothing of the host file is shown. Before, it loaded (exit 0 under
// --isolate none) and podman build read the host file.
func TestBenchHarborDockerfileLinkOut(t *testing.T) {
	home := isolate(t)
	secret := filepath.Join(home, "host-file")
	require.NoError(t, os.WriteFile(secret, []byte("HARNESS-DOCKERFILE-SECRET\n"), 0o600))
	task := filepath.Join(home, "linked")
	for p, content := range map[string]string{
		"instruction.md": "Do it.\n",
		"task.toml":      "[verifier]\ntimeout_sec = 10.0\n",
		"tests/test.sh":  "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n",
	} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(task, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(task, p), []byte(content), 0o755))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(task, "environment"), 0o755))
	require.NoError(t, os.Symlink(secret, filepath.Join(task, "environment", "Dockerfile")))
	r := invoke(t, "", "bench", "--agents", "oracle", "--tasks", task, "--isolate", "none", "--report", "json", "--no-store")
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Empty(t, r.stdout)
	require.Equal(t, "harness: bench: harbor task "+task+": environment/Dockerfile: a symbolic link out of the task's directory (to "+secret+"): not followed\n", r.stderr)
}
