package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/internal/execfile"
)

// TestConformProbesABinaryOnce: gemini is one binary over the CLI and
// ACP, so --protocol all asks it --version once and both targets take
// its answer: a hanging one is not run over either, having cost one
// probe bound. Before, it was asked twice, a bound each (2 min).
func TestConformProbesABinaryOnce(t *testing.T) {
	home := isolate(t)
	shortProbe(t, 200*time.Millisecond)
	playNothing(t)
	agents := filepath.Join(home, "agents")
	t.Setenv("HARNESS_AGENTS_DIR", agents)
	bin, starts := filepath.Join(agents, "node_modules", ".bin", "gemini"), filepath.Join(home, "starts")
	require.NoError(t, os.MkdirAll(filepath.Dir(bin), 0o755))
	require.NoError(t, execfile.Write(bin, []byte("#!/bin/sh\necho \"$*\" >>"+starts+"\nexec sleep 300\n"), 0o755))
	r := invoke(t, "", "conform", "--agent", "gemini", "--protocol", "all", "--scenario", "text")
	require.Equal(t, exitAgentFailed, r.code, r.stdout+r.stderr)
	for _, p := range []string{"cli", "acp"} {
		require.Contains(t, r.stdout, "gemini over "+p+": not run: "+bin+" does not answer: --version did not finish within 200ms; scenarios not played: text\n")
	}
	data, err := os.ReadFile(starts)
	require.NoError(t, err)
	require.Equal(t, "--version\n", string(data), "the binary was asked more than once")
}
