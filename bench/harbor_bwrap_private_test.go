package bench_test

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/bench"
	"github.com/agentharness/harness/internal/execfile"
	"github.com/agentharness/harness/isolate"
)

// TestHarborBwrapHidesHostPrivate: under bwrap neither the agent nor the
// verifier reaches the user's SSH agent (SSH_AUTH_SOCK), runtime
// directory (XDG_RUNTIME_DIR: the session bus, a keyring, a rootless
// podman's socket), a container engine's socket (DOCKER_HOST's here;
// root on the host) or the scripted model's homes of other runs (in
// $XDG_CACHE_HOME/harness/mock): a unix socket is reached on a read-only
// bind and across --unshare-net. They lie under /var/tmp here, which
// the sandbox's own /tmp and HOME do not hide. Before, each showed.
func TestHarborBwrapHidesHostPrivate(t *testing.T) {
	base, err := os.MkdirTemp("/var/tmp", "harness-bwrap-private-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	sock, runtimeDir, cache := filepath.Join(base, "ssh", "agent.sock"), filepath.Join(base, "run"), filepath.Join(base, "cache")
	docker := filepath.Join(base, "docker", "docker.sock")
	other := filepath.Join(cache, "harness", "mock", "run-other", "home-1")
	for _, d := range []string{filepath.Dir(sock), filepath.Dir(docker), runtimeDir, other} {
		require.NoError(t, os.MkdirAll(d, 0o700))
	}
	require.NoError(t, os.WriteFile(filepath.Join(runtimeDir, "bus"), nil, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(other, "session.jsonl"), nil, 0o600))
	for _, s := range []string{sock, docker} {
		l, err := net.Listen("unix", s)
		require.NoError(t, err)
		t.Cleanup(func() { l.Close() })
	}
	t.Setenv("SSH_AUTH_SOCK", sock)
	t.Setenv("DOCKER_HOST", "unix://"+docker)
	t.Setenv("XDG_RUNTIME_DIR", runtimeDir)
	t.Setenv("XDG_CACHE_HOME", cache)
	task := filepath.Join(base, "suite", "private")
	copyDir(t, filepath.Join(harborSuite, "create-file"), task)
	peek := `test -S "$SSH_AUTH_SOCK" && echo SSH-AGENT
test -e "$XDG_RUNTIME_DIR/bus" && echo RUNTIME-DIR
test -S "` + docker + `" && echo ENGINE
test -e "` + other + `/session.jsonl" && echo MOCK-HOME
`
	require.NoError(t, execfile.Write(filepath.Join(task, "solution", "solve.sh"), []byte("#!/bin/bash\n{\n"+peek+"} > /app/peek.txt\necho 'Hello, world!' > /app/hello.txt\n"), 0o755))
	require.NoError(t, execfile.Write(filepath.Join(task, "tests", "test.sh"), []byte("#!/bin/bash\n"+peek+"echo 1 > /logs/verifier/reward.txt\n"), 0o755))
	tasks, err := bench.LoadTasks(task)
	require.NoError(t, err)
	rep, err := bench.Run(t.Context(), bench.Plan{Tasks: tasks, Agents: []string{"oracle"}, Isolate: isolate.Bwrap},
		bench.Options{Dir: t.TempDir(), Keep: true, Parallel: 1})
	require.NoError(t, err)
	r := rep.Runs[0]
	require.NotNil(t, r.Check, r.Error)
	require.True(t, r.Check.Passed, r.Check.Output)
	agent, err := os.ReadFile(filepath.Join(r.Tree, "peek.txt"))
	require.NoError(t, err)
	for phase, out := range map[string]string{"agent": string(agent), "verifier": r.Check.Output} {
		for _, w := range []string{"SSH-AGENT", "RUNTIME-DIR", "ENGINE", "MOCK-HOME"} {
			require.False(t, strings.Contains(out, w), "%s reached %s:\n%s", phase, w, out)
		}
	}
}
