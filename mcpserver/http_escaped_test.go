//go:build !race

package mcpserver_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/mcpserver"
)

// TestHTTPEscapedPrompt: over HTTP too, a prompt whose every byte the
// client escapes ("\u0001", six bytes a byte) reaches run_agent's own
// check: a request may be as long as a stdio line. Not under the race
// detector, as TestStdioEscapedPrompt.
func TestHTTPEscapedPrompt(t *testing.T) {
	_, ts := newFixtureHTTP(t, nil)
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL,
		HTTPClient: &http.Client{Transport: bearer{httpToken, http.DefaultTransport}}, DisableStandaloneSSE: true}, nil)
	require.NoError(t, err)
	defer cs.Close()
	prompt := strings.Repeat("\x01", mcpserver.MaxPromptBytes+1)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_agent",
		Arguments: map[string]any{"agent": "claude", "prompt": prompt}})
	require.NoError(t, err)
	require.True(t, res.IsError)
	require.Contains(t, harnesstest.MCPText(res), fmt.Sprintf("the prompt is %d bytes, over the 16 MiB limit", len(prompt)))
}
