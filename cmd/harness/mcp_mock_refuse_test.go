package main

import (
	"context"
	"io"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/internal/harnesstest"
)

// TestMCPMockRefusesUnpointable: under mcp --mock, run_agent of an agent
// the scripted model cannot drive (Cursor) ran it unpointed, against its
// own service (the pointing error was dropped). It is refused with why,
// in run --mock's words, and list_agents says so on its line.
func TestMCPMockRefusesUnpointable(t *testing.T) {
	isolate(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	code := make(chan int, 1)
	go func() {
		c := run([]string{"mcp", "--mock", "text", "--no-log"}, inR, outW, io.Discard)
		outW.Close()
		code <- c
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).
		Connect(context.Background(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	require.NoError(t, err)
	t.Cleanup(func() {
		cs.Close()
		inW.Close()
		<-code
	})
	const why = "mock: cursor cannot run on the scripted model (it talks to its own service only)"
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "run_agent", Arguments: map[string]any{"agent": "cursor", "prompt": "x"}})
	require.NoError(t, err)
	require.True(t, res.IsError, harnesstest.MCPText(res))
	require.Equal(t, "run_agent: "+why, harnesstest.MCPText(res))
	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "list_agents", Arguments: map[string]any{}})
	require.NoError(t, err)
	require.Contains(t, harnesstest.MCPText(res), "cursor: "+why)
}
