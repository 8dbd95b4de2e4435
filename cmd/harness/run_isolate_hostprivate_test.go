package main

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/internal/execfile"
)

// harness run --isolate bwrap does not show the agent the user's SSH
// agent (SSH_AUTH_SOCK), runtime directory (XDG_RUNTIME_DIR: the session
// bus, a keyring, a rootless podman's socket), a container engine's
// socket (DOCKER_HOST's here; root on the host) nor the scripted model's
// homes of other runs ($XDG_CACHE_HOME/harness/mock), where the host's
// HOME and /tmp, which the sandbox hides, do not hold them: a unix
// socket answers on a read-only bind, and the run keeps the network.
// Before, the agent reached all four.
func TestRunIsolatedHidesHostPrivate(t *testing.T) {
	home, base := isolate(t), varTmp(t)
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
	ws := filepath.Join(home, "ws")
	require.NoError(t, os.Mkdir(ws, 0o755))
	require.NoError(t, execfile.Write(filepath.Join(ws, "peek.sh"), []byte(`#!/bin/bash
{
test -S "$SSH_AUTH_SOCK" && echo SSH-AGENT
test -e "$XDG_RUNTIME_DIR/bus" && echo RUNTIME-DIR
test -S "`+docker+`" && echo ENGINE
test -e "`+other+`/session.jsonl" && echo MOCK-HOME
} > peek.txt
true
`), 0o755))
	r := invoke(t, "", "run", "--agent", "oracle", "-p", "run", "--no-log", "--cwd", ws, "--isolate", "bwrap", "--", "./peek.sh")
	require.Equal(t, 0, r.code, r.stderr)
	peek, err := os.ReadFile(filepath.Join(ws, "peek.txt"))
	require.NoError(t, err, "the agent did not run")
	require.Empty(t, string(peek), "the agent reached what the host keeps private")
}
