package mcpserver_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/mcpserver"
)

// TestHandlerPanicAnswered: a panic in a tool call's handler (here in
// the caller's Setup, on a goroutine of the SDK's) answers that call
// with an internal error, and the server goes on: its runs too, until
// the session's end ends them and nothing of them is left.
func TestHandlerPanicAnswered(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(o *mcpserver.Options) {
		setup := o.Setup
		o.Setup = func(tk *harness.Task) (harness.Observer, error) {
			if tk.Prompt == "panic" {
				panic("setup exploded")
			}
			return setup(tk)
		}
	})
	id := startInterruptible(t, f)
	_, err := f.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_agent",
		Arguments: map[string]any{"agent": "claude", "prompt": "panic"}})
	var we *jsonrpc.Error
	require.ErrorAs(t, err, &we)
	require.Equal(t, int64(jsonrpc.CodeInternalError), we.Code)
	require.Contains(t, we.Message, "setup exploded")
	st := harnesstest.MCPStructured(t, f.call(t, "run_status", map[string]any{"run_id": id}, nil))
	require.Equal(t, "running", st.Get("state").String(), "the server and its run go on")
}
