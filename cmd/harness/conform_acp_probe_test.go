package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/conform"
	"github.com/agentharness/harness/internal/execfile"
)

// TestConformACPAdapterThatDoesNotAnswer: over ACP the adapter's binary
// (here given by --binary, as claude-agent-acp) is probed as a CLI is: one
// whose --version does not finish within the probe's bound is reported
// not run, by name, with every scenario not played, exit 1. Before, it
// was never probed and each scenario waited out its idle budget.
func TestConformACPAdapterThatDoesNotAnswer(t *testing.T) {
	home := isolate(t)
	shortProbe(t, 200*time.Millisecond)
	playNothing(t)
	bin, starts := filepath.Join(home, "claude-agent-acp"), filepath.Join(home, "starts")
	require.NoError(t, execfile.Write(bin, []byte("#!/bin/sh\necho \"$*\" >>"+starts+"\nexec sleep 300\n"), 0o755))
	r := invoke(t, "", "conform", "--agent", "claude", "--protocol", "acp", "--binary", bin, "--scenario", "hang,text")
	require.Equal(t, exitAgentFailed, r.code, r.stderr)
	require.Equal(t, "claude over acp, version unknown ("+bin+")\n"+
		"claude over acp: not run: "+bin+" does not answer: --version did not finish within 200ms; scenarios not played: hang, text\n", r.stdout)
	data, err := os.ReadFile(starts)
	require.NoError(t, err)
	require.Equal(t, "--version\n", string(data), "a scenario was played")
}

// TestConformACPProbeKeepsRunVersion: an ACP adapter that answers
// --version is played; what it printed is not the header's version,
// which over ACP stays the run's session_start's (docs/conform.md). One
// whose --version fails is not run.
func TestConformACPProbeKeepsRunVersion(t *testing.T) {
	home := isolate(t)
	for name, tc := range map[string]struct{ script, notRun string }{
		"answers": {"#!/bin/sh\necho 0.101.0\n", ""},
		"fails":   {"#!/bin/sh\necho 'Error: Cannot find module' >&2\nexit 1\n", " --version failed: exit status 1: Error: Cannot find module"},
	} {
		t.Run(name, func(t *testing.T) {
			bin := filepath.Join(home, name)
			require.NoError(t, execfile.Write(bin, []byte(tc.script), 0o755))
			ct := &conformTarget{Agent: "claude", Protocol: conform.ACP, Binary: bin}
			require.NoError(t, ct.probe(nil))
			require.Empty(t, ct.Version)
			want := ""
			if tc.notRun != "" {
				want = bin + tc.notRun
			}
			require.Equal(t, want, ct.NotRun)
		})
	}
}
