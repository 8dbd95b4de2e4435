package acp

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/adaptertest"
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

func TestParseCapturedSession(t *testing.T) {
	bodies, _ := adaptertest.ParseLines(NewParser(), strings.Split(strings.TrimSuffix(session, "\n"), "\n")...)
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

// TestCaptures normalizes real ACP sessions (the stdout of claude-agent-acp,
// codex-acp, gemini --acp and opencode acp on the scripted model's tool and
// edit scenarios, captured with harness run --protocol acp --raw) and holds
// them to the invariants.
func TestCaptures(t *testing.T) {
	files, err := filepath.Glob("testdata/*.jsonl")
	require.NoError(t, err)
	require.Len(t, files, 8)
	a, err := Custom("acp", []string{"acp"})
	require.NoError(t, err)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			require.NoError(t, err)
			out := adaptertest.Normalize(a, data, false)
			require.NoError(t, event.CheckNDJSON(out))
			adaptertest.CheckStream(t, out)
			evs, err := event.ReadAll(bytes.NewReader(out))
			require.NoError(t, err)
			res := evs[len(evs)-1].Body.(*event.Result)
			require.Equal(t, event.ResultSuccess, res.Status)
			require.NotEmpty(t, res.SessionID)
			require.True(t, strings.HasPrefix(res.Text, "DONE: file "), res.Text)
			var ends []*event.ToolEnd
			for _, ev := range evs {
				if e, ok := ev.Body.(*event.ToolEnd); ok {
					ends = append(ends, e)
				}
			}
			require.Len(t, ends, 1)
			require.Equal(t, event.StatusOK, ends[0].Status)
			if strings.HasSuffix(file, "-edit.jsonl") && !strings.Contains(file, "opencode") {
				// The file is created: ACP's diff content is the whole file.
				require.Equal(t, "--- /dev/null\n+++ b/tmp/acpw/cap/out.txt\n@@ -0,0 +1 @@\n+hello-from-edit\n", ends[0].Diff)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	adaptertest.Seed(f, "testdata")
	for _, l := range strings.Split(session, "\n") {
		f.Add([]byte(l))
	}
	f.Add([]byte(`{"id":1,"method":"session/request_permission","params":{"options":[{"optionId":"a","kind":"allow_once"}]}}`))
	f.Add([]byte(`{"id":"x","error":{"code":-1,"message":"boom","data":{}}}`))
	a, err := Custom("acp", []string{"acp"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) { adaptertest.Fuzz(t, a, data) })
}

// TestLateAnswerAfterTheDeadline: once initialize's deadline has passed, the
// session is over; an answer that comes after starts nothing.
func TestLateAnswerAfterTheDeadline(t *testing.T) {
	emitted := make(chan []event.Body, 1)
	c := NewParser()
	c.BoundSetup(20*time.Millisecond, func(b ...event.Body) { emitted <- b })
	var w bytes.Buffer // written by Begin only: the timer writes nothing
	require.NoError(t, c.Begin(&w, adapters.Task{Prompt: "x", Cwd: t.TempDir()}))
	bodies := <-emitted
	require.Len(t, bodies, 2)
	require.Equal(t, event.ClassProtocol, bodies[0].(*event.Error).Class)
	require.Equal(t, event.ResultError, bodies[1].(*event.Result).Status)
	require.True(t, c.Done(), "the session is over: the harness closes stdin")
	out, known := c.Parse(nil, []byte(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}`))
	require.True(t, known)
	require.Empty(t, out)
	require.Equal(t, 1, strings.Count(w.String(), "\n"), "only initialize was sent: %s", w.String())
	require.False(t, c.Cancel(), "no prompt to cancel")
}
