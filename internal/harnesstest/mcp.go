package harnesstest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

// MCPText is the text content of an MCP tool result, one line a part.
func MCPText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// MCPStructured is the structured content of an MCP tool result, which
// must have one.
func MCPStructured(t testing.TB, res *mcp.CallToolResult) gjson.Result {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.NotEqual(t, "null", string(b), "no structured content; content: %s", MCPText(res))
	return gjson.ParseBytes(b)
}
