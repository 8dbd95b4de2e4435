package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/internal/execfile"
	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/internal/harnesstest"
)

// escapeScript is an agent (run by the oracle) that tries to change the
// host: ~/.bashrc, /etc, a file outside its working directory, a daemon;
// and does its work in the working directory.
const escapeScript = `#!/bin/bash
echo 'echo escaped' >> ~/.bashrc
echo escaped > /etc/harness-run-escape
echo escaped > "$ESCAPE_TARGET"
setsid sleep 3129 </dev/null >/dev/null 2>&1 &
nohup sleep 3129 </dev/null >/dev/null 2>&1 &
echo inside > inside.txt
`

// harness run --isolate: the agent changes its working directory and
// nothing else, and leaves no process (nor container) behind.
func TestRunIsolated(t *testing.T) {
	for _, engine := range []string{"bwrap", "podman"} {
		t.Run(engine, func(t *testing.T) {
			home := isolate(t)
			bashrc := filepath.Join(home, ".bashrc")
			require.NoError(t, os.WriteFile(bashrc, []byte("# mine\n"), 0o644))
			ws := filepath.Join(home, "ws")
			require.NoError(t, os.Mkdir(ws, 0o755))
			script := filepath.Join(ws, "escape.sh")
			require.NoError(t, execfile.Write(script, []byte(escapeScript), 0o755))
			outside := filepath.Join(t.TempDir(), "outside")
			args := []string{"run", "--agent", "oracle", "-p", "run", "--no-log", "--cwd", ws, "--isolate", engine,
				"--env", "ESCAPE_TARGET=" + outside}
			if engine == "podman" {
				args = append(args, "--image", "localhost/harness-base:bookworm-2")
			}
			r := invoke(t, "", append(args, "--", script)...)
			require.Equal(t, 0, r.code, r.stderr)
			got, err := os.ReadFile(filepath.Join(ws, "inside.txt"))
			require.NoError(t, err, "the working directory is the agent's")
			require.Equal(t, "inside\n", string(got))
			b, _ := os.ReadFile(bashrc)
			require.Equal(t, "# mine\n", string(b), "~/.bashrc unchanged")
			for _, p := range []string{"/etc/harness-run-escape", outside} {
				_, err := os.Lstat(p)
				require.True(t, os.IsNotExist(err), "%s was written on the host", p)
			}
			require.Empty(t, harnesstest.ProcsNamed("sleep 3129"), "a process the run left behind")
			if engine == "podman" {
				require.Empty(t, harnesstest.ContainersUnder(t, ws), "the container was not removed")
			}
		})
	}
}

func TestRunIsolateUsage(t *testing.T) {
	isolate(t)
	r := invoke(t, "", "run", "--agent", "nop", "-p", "x", "--isolate", "podman")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "--isolate podman needs --image")
	r = invoke(t, "", "run", "--agent", "nop", "-p", "x", "--isolate", "bwrap", "--image", "x")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "--image is for --isolate podman or docker")
}

// A bench killed with SIGKILL in the middle of a run under --isolate
// podman leaves no container and no process of the run behind: the
// container waits for EOF on the stdin harness holds.
func TestBenchPodmanKilledLeavesNothing(t *testing.T) {
	src, err := filepath.Abs("../../bench/testdata/harbor/create-file")
	require.NoError(t, err)
	home := isolate(t)
	task := filepath.Join(home, "long")
	out, err := exec.Command("cp", "-a", src, task).CombinedOutput()
	require.NoError(t, err, string(out))
	require.NoError(t, execfile.Write(filepath.Join(task, "solution", "solve.sh"), []byte("#!/bin/bash\nexec sleep 3128\n"), 0o755))
	tmp := filepath.Join(home, "tmp")
	require.NoError(t, os.Mkdir(tmp, 0o755))
	cmd, _, errb := harnessProc(t, []string{"TMPDIR=" + tmp}, "bench", "--tasks", task, "--agents", "oracle",
		"--isolate", "podman", "--no-progress", "--no-log", "--timeout", "10m")
	require.Eventually(t, func() bool { return len(harnesstest.ProcsNamed("sleep 3128")) > 0 }, 2*time.Minute, 20*time.Millisecond,
		"the solution never started: %s", errb)
	require.NotEmpty(t, harnesstest.ContainersUnder(t, tmp), "the run's container")
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	require.Eventually(t, func() bool {
		return len(harnesstest.ContainersUnder(t, tmp)) == 0 && len(harnesstest.ProcsNamed("sleep 3128")) == 0
	},
		time.Minute, 50*time.Millisecond, "a container or the solution outlived the bench")
}

// harness run --isolate bwrap of an agent installed in the user's HOME
// (and so under /tmp here): the sandbox's private HOME and /tmp would hide
// it; its install is bound in read-only at its path.
func TestRunIsolatedAgentInHome(t *testing.T) {
	home := isolate(t)
	exe, err := os.Executable()
	require.NoError(t, err)
	data, err := os.ReadFile(exe)
	require.NoError(t, err)
	bin := filepath.Join(home, ".local", "bin", "fake-claude")
	require.NoError(t, os.MkdirAll(filepath.Dir(bin), 0o755))
	require.NoError(t, execfile.Write(bin, data, 0o755))
	ws := filepath.Join(home, "ws")
	require.NoError(t, os.Mkdir(ws, 0o755))
	r := invoke(t, "", "run", "--agent", "claude", "--binary", bin, "--env", fakeagent.EnvVar+"=prompt-echo",
		"--no-log", "--linger", "100ms", "--cwd", ws, "--isolate", "bwrap", "-p", "go")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, `"text":"stdin=0:`, "the fake ran in the sandbox")
}
