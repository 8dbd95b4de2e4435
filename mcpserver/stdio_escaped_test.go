//go:build !race

package mcpserver_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/mcpserver"
)

// TestStdioEscapedPrompt: so does a prompt whose every byte the client
// escapes ("\u0001", six bytes a byte on the wire, the most JSON takes):
// ServeStdio's cap has room for MaxPromptBytes of them. Not under the race
// detector, where the SDK takes over 30 s to handle the 96 MiB request:
// make test runs it in a pass of its own without it.
func TestStdioEscapedPrompt(t *testing.T) {
	b, err := json.Marshal("\x01")
	require.NoError(t, err)
	require.Equal(t, `"\u0001"`, string(b))
	head, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": "run_agent", "arguments": map[string]any{"agent": "claude", "prompt": ""}}})
	require.NoError(t, err)
	require.Less(t, len(head)+6*(mcpserver.MaxPromptBytes+1), mcpserver.MaxLine)
	f := newFixtureStdio(t, nil)
	prompt := strings.Repeat("\x01", mcpserver.MaxPromptBytes+1)
	res := f.call(t, "run_agent", map[string]any{"agent": "claude", "prompt": prompt}, nil)
	require.True(t, res.IsError)
	require.Contains(t, harnesstest.MCPText(res), fmt.Sprintf("the prompt is %d bytes, over the 16 MiB limit", len(prompt)))
}
