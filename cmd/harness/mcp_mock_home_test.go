package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/internal/fakeagent"
	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/mockmodel"
)

// mcpMock serves 'harness mcp --mock SCENARIO --no-log --root root' in
// process, and returns its client's run_agent as call (which requires a
// successful run and returns its text and session id). The server must
// exit 0 once the client goes away.
func mcpMock(t *testing.T, scenario, root string) (call func(map[string]any) (text, sid string)) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr bytes.Buffer
	code := make(chan int, 1)
	go func() {
		c := run([]string{"mcp", "--mock", scenario, "--no-log", "--root", root}, inR, outW, &stderr)
		outW.Close()
		code <- c
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).
		Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	require.NoError(t, err)
	t.Cleanup(func() {
		defer cancel()
		require.NoError(t, cs.Close())
		inW.Close()
		select {
		case c := <-code:
			require.Equal(t, 0, c, stderr.String())
		case <-time.After(time.Minute):
			t.Fatal("harness mcp did not exit once its client went away")
		}
	})
	return func(args map[string]any) (string, string) {
		t.Helper()
		args["agent"] = "claude"
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_agent", Arguments: args})
		require.NoError(t, err)
		require.False(t, res.IsError, harnesstest.MCPText(res))
		s := harnesstest.MCPStructured(t, res)
		require.Equal(t, "success", s.Get("state").String(), s.Raw)
		return s.Get("text").String(), s.Get("summary.session_id").String()
	}
}

// TestMCPMockHomePerCwd: 'harness mcp --mock' gives the runs of one
// agent in one cwd one home, the same config directory (where Claude
// Code keeps the conversations a later run resumes), and a run in
// another cwd another. Each run had a home of its own, so a resume found
// no conversation unless the configuration set CLAUDE_CONFIG_DIR.
func TestMCPMockHomePerCwd(t *testing.T) {
	argv, _ := fakeagent.Command("echo-env")
	home := isolateWith(t, fmt.Sprintf("[agents.claude]\nbinary = %q\nenv = { %s = \"echo-env\", %s = \"CLAUDE_CONFIG_DIR,HOME\" }\n",
		argv[0], fakeagent.EnvVar, fakeagent.EchoVars))
	work, other := filepath.Join(home, "work"), filepath.Join(home, "work", "other")
	require.NoError(t, os.MkdirAll(other, 0o755))
	call := mcpMock(t, "text", work)

	dirs := regexp.MustCompile(`CLAUDE_CONFIG_DIR=(\S+) HOME=(\S+)`)
	homeOf := func(args map[string]any) []string {
		t.Helper()
		text, _ := call(args)
		m := dirs.FindStringSubmatch(text)
		require.NotNil(t, m, text)
		return m[1:]
	}
	first := homeOf(map[string]any{"prompt": "one"})
	require.NotEqual(t, filepath.Join(home, ".claude"), first[0], "the user's own config directory is not used")
	require.Equal(t, first, homeOf(map[string]any{"prompt": "two", "resume": "sess-0123"}), "a resume in the same cwd has the first run's home")
	require.Equal(t, first, homeOf(map[string]any{"prompt": "three", "cwd": work}))
	again := homeOf(map[string]any{"prompt": "four", "cwd": other})
	require.NotEqual(t, first[0], again[0], "another cwd has a home of its own")
	require.NotEqual(t, first[1], again[1])
}

// TestMCPMockResumeRealClaude: over 'harness mcp --mock converse', with
// no CLAUDE_CONFIG_DIR in the configuration, the real Claude Code resumes
// the first run's conversation (TestMCPResumeRealClaude sets one). The
// resume failed: "No conversation found with session ID".
func TestMCPMockResumeRealClaude(t *testing.T) {
	claude := realClaude(t)
	home := isolateWith(t, fmt.Sprintf("[agents.claude]\nbinary = %q\n", claude))
	work := filepath.Join(home, "work")
	require.NoError(t, os.Mkdir(work, 0o755))
	call := mcpMock(t, "converse", work)

	text, sid := call(map[string]any{"prompt": mockmodel.ConversePrompt1})
	require.Equal(t, "DONE: first file", text)
	require.NotEmpty(t, sid)
	text, again := call(map[string]any{"prompt": mockmodel.ConversePrompt2, "resume": sid})
	require.Equal(t, "DONE: second file", text, "the resumed run holds the first run's conversation")
	require.Equal(t, sid, again, "the same session")
}
