package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/mockmodel"
)

// TestMCPResumeRealClaude: over 'harness mcp --mock converse', the real
// Claude Code answers the converse scenario's second prompt in the first
// run's conversation when run_agent resumes the first run's session (its
// summary's session_id); given the same prompt without resume, the
// scripted model finds the conversation lacks the first prompt.
func TestMCPResumeRealClaude(t *testing.T) {
	claude := realClaude(t)
	home := isolate(t)
	// The CLI keeps its conversations in its config directory, by cwd:
	// the runs share both (the scripted model gives each run a fresh
	// home).
	work, config := filepath.Join(home, "work"), filepath.Join(home, "claude-config")
	require.NoError(t, os.Mkdir(work, 0o755))
	require.NoError(t, os.Mkdir(config, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(home, "harness.toml"),
		fmt.Appendf(nil, "[agents.claude]\nbinary = %q\nenv = { CLAUDE_CONFIG_DIR = %q }\n", claude, config), 0o644))

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr bytes.Buffer
	code := make(chan int, 1)
	go func() {
		c := run([]string{"mcp", "--mock", "converse", "--no-log", "--root", work}, inR, outW, &stderr)
		outW.Close()
		code <- c
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).
		Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	require.NoError(t, err)
	call := func(args map[string]any) (string, string) {
		t.Helper()
		args["agent"] = "claude"
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_agent", Arguments: args})
		require.NoError(t, err)
		require.False(t, res.IsError, harnesstest.MCPText(res))
		s := harnesstest.MCPStructured(t, res)
		require.Equal(t, "success", s.Get("state").String(), s.Raw)
		return s.Get("text").String(), s.Get("summary.session_id").String()
	}

	text, sid := call(map[string]any{"prompt": mockmodel.ConversePrompt1})
	require.Equal(t, "DONE: first file", text)
	require.NotEmpty(t, sid)
	text, again := call(map[string]any{"prompt": mockmodel.ConversePrompt2, "resume": sid})
	require.Equal(t, "DONE: second file", text, "the resumed run holds the first run's conversation")
	require.Equal(t, sid, again, "the same session")
	b, err := os.ReadFile(filepath.Join(work, mockmodel.ConverseSecond))
	require.NoError(t, err)
	require.Equal(t, "second\n", string(b))
	text, _ = call(map[string]any{"prompt": mockmodel.ConversePrompt2})
	require.Contains(t, text, mockmodel.ContextMissing, "a run not resumed starts a new conversation")

	require.NoError(t, cs.Close())
	inW.Close()
	select {
	case c := <-code:
		require.Equal(t, 0, c, stderr.String())
	case <-time.After(time.Minute):
		t.Fatal("harness mcp did not exit once its client went away")
	}
}
