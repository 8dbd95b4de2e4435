package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/internal/harnesstest"
)

// TestMCPStdio drives 'harness mcp' in-process over pipes with the SDK's
// client: the configuration picks the agent's binary (a fake), the run
// writes a session log, and the session ends when the client goes away.
func TestMCPStdio(t *testing.T) {
	isolateWith(t, fakeClaude("slow-drip")+"[mcp]\nidle_min = \"5s\"\nhard_min = \"1s\"\n")

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr bytes.Buffer
	status := make(chan int, 1)
	go func() {
		status <- run([]string{"mcp", "--progress-interval", "20ms"}, inR, outW, &stderr)
		outW.Close()
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_agent",
		Arguments: map[string]any{"agent": "claude-code", "prompt": "say done", "idle_timeout_ms": 1, "hard_timeout_ms": 8000}})
	require.NoError(t, err)
	require.False(t, res.IsError, "%s", harnesstest.MCPText(res))
	s := harnesstest.MCPStructured(t, res)
	require.Equal(t, "success", s.Get("state").String())
	require.Equal(t, "done", s.Get("text").String())
	require.EqualValues(t, 5000, s.Get("budgets.idle_timeout_ms").Int(), "the config's mcp.idle_min is the floor")
	require.EqualValues(t, 8000, s.Get("budgets.hard_timeout_ms").Int())
	require.Len(t, s.Get("budgets.clamped").Array(), 1)
	logPath := s.Get("summary.session_log").String()
	require.NotEmpty(t, logPath)
	events, err := os.ReadFile(logPath)
	require.NoError(t, err, "the run's session log")
	require.Contains(t, string(events), `"type":"result"`)

	// The server's directory (home here) bounds where a client may run.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_agent",
		Arguments: map[string]any{"agent": "claude", "prompt": "x", "cwd": "../../../../etc"}})
	require.NoError(t, err)
	require.True(t, res.IsError)
	require.Contains(t, harnesstest.MCPText(res), "outside the directories this server runs agents in")

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_agents", Arguments: map[string]any{}})
	require.NoError(t, err)
	exe, _ := fakeagent.Command("slow-drip")
	require.Equal(t, exe[0], harnesstest.MCPStructured(t, res).Get(`agents.#(id=="claude").binary`).String())

	require.NoError(t, cs.Close())
	inW.Close()
	select {
	case code := <-status:
		require.Equal(t, 0, code, stderr.String())
	case <-time.After(20 * time.Second):
		t.Fatal("harness mcp did not end when its client went away")
	}
}
