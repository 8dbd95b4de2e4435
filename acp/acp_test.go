package acp

import (
	"bufio"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/event"
)

// session is a captured ACP session (the agent's lines), as a reparse
// sees it: no writer, the answers named by their shapes.
const session = `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}
{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hm"}}}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Let me."}}}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Write a.txt","kind":"edit","status":"pending","locations":[{"path":"a.txt"}]}}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed","content":[{"type":"diff","path":"a.txt","oldText":null,"newText":"x\n"}]}}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"c2","title":"ls","kind":"execute","status":"in_progress","rawInput":{"command":["ls","-l"]}}}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c2","status":"failed","content":[{"type":"content","content":{"type":"text","text":"no"}}]}}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Done."}}}}
{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn","usage":{"inputTokens":110,"outputTokens":5,"cachedReadTokens":100,"totalTokens":115}}}
`

func parseAll(t testing.TB, p *Client, text string) []event.Body {
	var out []event.Body
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		out, _ = p.Parse(out, sc.Bytes())
	}
	return p.Flush(out)
}

func TestParseCapturedSession(t *testing.T) {
	bodies := parseAll(t, NewParser(), session)
	var types []event.Type
	for _, b := range bodies {
		types = append(types, b.EventType())
	}
	require.Equal(t, []event.Type{event.TypeSessionStart, event.TypeReasoningDelta, event.TypeTextDelta,
		event.TypeReasoning, event.TypeMessage, event.TypeToolStart, event.TypeToolEnd, event.TypeToolStart, event.TypeToolEnd,
		event.TypeTextDelta, event.TypeMessage, event.TypeResult}, types)
	end := bodies[6].(*event.ToolEnd)
	require.Equal(t, "--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+x\n", end.Diff)
	require.Equal(t, "ls -l", bodies[7].(*event.ToolStart).Command)
	require.Equal(t, event.StatusError, bodies[8].(*event.ToolEnd).Status)
	res := bodies[11].(*event.Result)
	require.Equal(t, event.ResultSuccess, res.Status)
	require.Equal(t, "Done.", res.Text)
	// OpenAI-style: the input includes the cache read (total = in + out).
	require.Equal(t, event.Usage{InputTokens: 10, OutputTokens: 5, CacheReadTokens: 100}, res.Usage)
}

func FuzzParse(f *testing.F) {
	for _, l := range strings.Split(session, "\n") {
		f.Add(l)
	}
	f.Add(`{"id":1,"method":"session/request_permission","params":{"options":[{"optionId":"a","kind":"allow_once"}]}}`)
	f.Add(`{"id":"x","error":{"code":-1,"message":"boom","data":{}}}`)
	f.Fuzz(func(t *testing.T, line string) {
		p := NewParser()
		var out []event.Body
		for _, l := range strings.Split(line, "\n") {
			out, _ = p.Parse(out, []byte(l))
		}
		out = p.Flush(out)
		for _, b := range out {
			if b == nil {
				t.Fatal("nil body")
			}
		}
	})
}
