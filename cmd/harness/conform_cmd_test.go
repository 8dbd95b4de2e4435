package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/conform"
	"github.com/agentharness/harness/internal/execfile"
)

// TestConformVerdictNamesThePin: a failing CLI that is not the version
// agents.lock pins is told which version harness reads and how to install
// it; the pinned version failing gets no such advice.
func TestConformVerdictNamesThePin(t *testing.T) {
	failed := &conform.Run{Scenario: "text", Checks: []conform.Check{{Name: conform.CheckAnswer, Status: conform.Fail, Detail: "wrong"}}}
	for _, tc := range []struct{ version, verdict string }{
		{"9.9.9 (Claude Code)", "claude over cli: checks fail: harness does not read this version exactly; it was measured on 2.1.329 (agents.lock): npm i -g @anthropic-ai/claude-code@2.1.329\n"},
		{"", "claude over cli: checks fail: harness does not read this version exactly; it was measured on 2.1.329 (agents.lock): npm i -g @anthropic-ai/claude-code@2.1.329\n"},
		{"2.1.329 (Claude Code)", "claude over cli: checks fail: harness does not read this version exactly\n"},
	} {
		var out bytes.Buffer
		rep := conformReport{Checks: conform.Checks, Targets: []*conformTarget{{Agent: "claude", Protocol: conform.CLI,
			Version: tc.version, Binary: "/bin/claude", Pinned: "2.1.329", npm: "@anthropic-ai/claude-code", Runs: []*conform.Run{failed}}}}
		require.NoError(t, printConform(&env{Stdout: &out}, rep))
		require.True(t, bytes.HasSuffix(out.Bytes(), []byte(tc.verdict)), out.String())
	}
}

// TestConformScenarioGivenTwice: a scenario named twice, in one value or
// two, is a usage error (exit 2) naming it, before anything is probed or
// played. Before, it was played twice, in two rows of the same name.
func TestConformScenarioGivenTwice(t *testing.T) {
	home := isolate(t)
	playNothing(t)
	bin := filepath.Join(home, "claude")
	require.NoError(t, execfile.Write(bin, []byte("#!/bin/sh\necho 9.9.9\n"), 0o755))
	for _, args := range [][]string{{"--scenario", "text,hang,text"}, {"--scenario", "text", "--scenario", "text"}} {
		r := invoke(t, "", append([]string{"conform", "--agent", "claude", "--binary", bin}, args...)...)
		require.Equal(t, exitUsage, r.code, r.stdout+r.stderr)
		require.Equal(t, "harness: conform: scenario \"text\" given twice\n", r.stderr)
		require.Empty(t, r.stdout)
	}
}

// TestConformUnknownAgent: an unknown agent is a usage error (exit 2)
// prefixed "conform:" as conform's other errors are. Before, it lacked
// the prefix.
func TestConformUnknownAgent(t *testing.T) {
	isolate(t)
	playNothing(t)
	r := invoke(t, "", "conform", "--agent", "nope")
	require.Equal(t, exitUsage, r.code, r.stdout+r.stderr)
	require.True(t, strings.HasPrefix(r.stderr, "harness: conform: unknown agent \"nope\""), r.stderr)
	require.Empty(t, r.stdout)
}
