package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/conform"
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
