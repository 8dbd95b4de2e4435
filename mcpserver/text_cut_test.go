package mcpserver_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/harnesstest"
	"github.com/agentharness/harness/mcpserver"
)

// An answer over the stream's cap on a text (event.MaxTextBytes) reaches
// the client cut, as result.text is: the result says so, as the stream's
// text_truncated does. It said nothing, and the calling agent took the
// first 256 KiB for the whole answer.
func TestRunAgentTextCut(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	answer := strings.Repeat("all work and no play. ", (event.MaxTextBytes/22)+100)
	out := filepath.Join(dir, "out.jsonl")
	lines := []string{
		`{"type":"system","subtype":"init","cwd":"/tmp","session_id":"s-1","tools":[],"model":"m"}`,
		`{"type":"assistant","message":{"id":"msg_1","role":"assistant","content":[{"type":"text","text":"` + answer + `"}]},"session_id":"s-1"}`,
		`{"type":"result","subtype":"success","is_error":false,"result":"` + answer + `","session_id":"s-1","num_turns":1,"duration_ms":12,"usage":{"input_tokens":1,"output_tokens":1}}`,
	}
	require.NoError(t, os.WriteFile(out, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	agent := filepath.Join(dir, "agent")
	require.NoError(t, os.WriteFile(agent, []byte("#!/bin/sh\nexec cat "+out+"\n"), 0o700))
	f := newFixture(t, func(o *mcpserver.Options) {
		o.Roots = []string{dir}
		o.Setup = func(tk *harness.Task) (harness.Observer, error) {
			tk.Binary = agent
			return harness.Observer{}, nil
		}
	})
	res := f.call(t, "run_agent", map[string]any{"agent": "claude", "prompt": "answer at length"}, nil)
	require.False(t, res.IsError, harnesstest.MCPText(res))
	text := res.Content[0].(*mcp.TextContent).Text
	require.Less(t, len(text), len(answer), "the answer is cut")
	require.True(t, strings.HasPrefix(answer, text))
	s := harnesstest.MCPStructured(t, res)
	require.Equal(t, text, s.Get("text").String())
	require.True(t, s.Get("text_truncated").Bool(), "the structured result says the text is cut")
	require.Contains(t, res.Content[1].(*mcp.TextContent).Text, "answer cut", "so does its summary line")
}
