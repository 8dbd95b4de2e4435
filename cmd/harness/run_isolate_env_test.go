package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/internal/execfile"
)

// harness run --isolate podman carries into the container what the
// caller hands the agent (--env, the configuration's env table) whatever
// its name, and of what it inherits keeps out only what describes the
// host: the Go toolchain's own variables, not every GO*. Before, every
// variable starting with GO was dropped, GOOGLE_API_KEY with the rest.
func TestRunPodmanCarriesGivenEnv(t *testing.T) {
	home := isolateWith(t, "[agents.oracle.env]\nGOOGLE_CLOUD_PROJECT = \"cfg-proj\"\n")
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", "/inherited/creds.json") // not the toolchain's
	t.Setenv("GOFLAGS", "-mod=mod")                                     // the host's Go
	t.Setenv("GOTOOLCHAIN", "local")
	ws := filepath.Join(home, "ws")
	require.NoError(t, os.Mkdir(ws, 0o755))
	script := filepath.Join(ws, "env.sh")
	require.NoError(t, execfile.Write(script, []byte("#!/bin/bash\nenv > env.txt\n"), 0o755))
	r := invoke(t, "", "run", "--agent", "oracle", "-p", "run", "--no-log", "--cwd", ws,
		"--isolate", "podman", "--image", "localhost/harness-base:bookworm-2",
		"--env", "GOOGLE_API_KEY=gk", "--env", "MY_TOKEN=tok", "--env", "GOPATH=/given/gopath",
		"--env", "PATH=/usr/bin:/bin:/given/bin", "--", script)
	require.Equal(t, 0, r.code, r.stderr)
	data, err := os.ReadFile(filepath.Join(ws, "env.txt"))
	require.NoError(t, err)
	got := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			got[k] = v
		}
	}
	for k, v := range map[string]string{"GOOGLE_API_KEY": "gk", "MY_TOKEN": "tok", "GOPATH": "/given/gopath",
		"GOOGLE_CLOUD_PROJECT": "cfg-proj", "GOOGLE_APPLICATION_CREDENTIALS": "/inherited/creds.json",
		"PATH": "/usr/bin:/bin:/given/bin", "HARNESS_CONTAINER_AGENT": "1"} {
		require.Equal(t, v, got[k], "%s in the container", k)
	}
	for _, k := range []string{"GOFLAGS", "GOTOOLCHAIN"} {
		require.NotContains(t, got, k, "the host's Go toolchain in the container")
	}
}
