package acp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/adapters/opencode"
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
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			evs := normalized(t, file)
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

func FuzzParse(f *testing.F) { fuzzParse(f, false) }

// FuzzParseResumed is FuzzParse with the parser mapping the captures of a
// run that continued a session (ReplayResume, as sessions reparse gives
// it): the opening's answer names no session, and what comes before it
// is session/load's replay.
func FuzzParseResumed(f *testing.F) { fuzzParse(f, true) }

// resumedAdapter is an adapter whose parsers map a resumed run's capture.
type resumedAdapter struct{ adapters.Adapter }

func (r resumedAdapter) NewParser() adapters.Parser {
	p := r.Adapter.NewParser()
	p.(*Client).ReplayResume("sess-1")
	return p
}

func fuzzParse(f *testing.F, resumed bool) {
	adaptertest.Seed(f, "testdata")
	for _, l := range strings.Split(session, "\n") {
		f.Add([]byte(l))
	}
	f.Add([]byte(`{"id":1,"method":"session/request_permission","params":{"options":[{"optionId":"a","kind":"allow_once"}]}}`))
	f.Add([]byte(`{"id":"x","error":{"code":-1,"message":"boom","data":{}}}`))
	// A capture of a session continued by session/load: the replay, then
	// the opening's answer, which names no session.
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"old"}}}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"result":{"modes":{"currentModeId":"default","availableModes":[{"id":"default"}]}}}` + "\n" +
		`{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}`))
	var a adapters.Adapter
	a, err := Custom("acp", []string{"acp"})
	if err != nil {
		f.Fatal(err)
	}
	if resumed {
		a = resumedAdapter{a}
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

// chunkLine is a session/update line of one text chunk of kind.
func chunkLine(kind, text string) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{"sessionId": "s1",
		"update": map[string]any{"sessionUpdate": kind, "content": map[string]string{"type": "text", "text": text}}}})
	return string(b)
}

// liveClient is a Client whose session is live (writing to w) and whose
// prompt is in flight.
func liveClient(t *testing.T, w io.Writer, permissions string) *Client {
	t.Helper()
	c := NewParser()
	require.NoError(t, c.Begin(w, adapters.Task{Prompt: "x", Cwd: t.TempDir(), Permissions: permissions}))
	adaptertest.ParseLines(c, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}`, `{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}`)
	require.Equal(t, phasePrompt, c.phase)
	return c
}

// TestChunksKeptWithinTheTextCap: a message and a thought streamed in
// chunks keep no more than the 256 KiB the Stream emits of them (+1 byte,
// to mark the cut), whatever the agent streams; the deltas all go out. It
// used to keep every chunk (256 MiB of chunks: 1.2 GB).
func TestChunksKeptWithinTheTextCap(t *testing.T) {
	c := NewParser()
	piece := strings.Repeat("é", 32<<10) // 64 KiB, runes of two bytes
	deltas := 0
	for range 64 { // 4 MiB of each
		for _, kind := range []string{"agent_thought_chunk", "agent_message_chunk"} {
			out, known := c.Parse(nil, []byte(chunkLine(kind, piece)))
			require.True(t, known)
			deltas += len(out)
		}
	}
	require.Equal(t, 128, deltas, "every chunk is a delta")
	require.LessOrEqual(t, c.m.text.Len(), event.MaxTextBytes+1)
	require.LessOrEqual(t, c.m.thought.Len(), event.MaxTextBytes+1)

	a, err := Custom("acp", []string{"acp"})
	require.NoError(t, err)
	lines := []string{`{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}`, chunkLine("agent_message_chunk", piece+piece+piece+piece+piece),
		`{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}`}
	evs, err := event.ReadAll(bytes.NewReader(adaptertest.Normalize(a, []byte(strings.Join(lines, "\n")), false)))
	require.NoError(t, err)
	msg := evs[len(evs)-2].Body.(*event.Message)
	require.True(t, msg.Truncated)
	require.Equal(t, strings.Repeat("é", event.MaxTextBytes/2), msg.Text)
}

// TestOpenCallsKeepOnlyWhatIsEmitted: a started call keeps its input only
// when the Stream would emit it whole (256 KiB), its text cut at the
// 64 KiB a tool_end shows (marked), and its diff only for texts the
// harness would diff, all within one budget for the open calls; a diff
// left out says why. Open calls used to keep all of it (60 calls of 4 MB:
// 1.27 GB).
func TestOpenCallsKeepOnlyWhatIsEmitted(t *testing.T) {
	c := NewParser()
	out := strings.Repeat("o", 100<<10)
	call := func(id, input, diff string) string {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{"sessionId": "s1",
			"update": map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": id, "kind": "edit", "status": "in_progress",
				"rawInput": map[string]string{"path": id, "content": input},
				"content": []any{map[string]any{"type": "content", "content": map[string]string{"type": "text", "text": out}},
					map[string]any{"type": "diff", "path": id, "oldText": nil, "newText": diff}}}}})
		return string(b)
	}
	big := strings.Repeat("y", 1<<20+1) // a file the harness does not diff
	mid := strings.Repeat("z", 600<<10) // one it does; 30 of them pass the budget
	const nBig, nMid = 4, 30
	for i := range nBig + nMid {
		input, diff := "small", mid
		if i < nBig {
			input, diff = big, big
		}
		_, known := c.Parse(nil, []byte(call(fmt.Sprint("c", i), input, diff)))
		require.True(t, known)
	}
	kept, withDiff := 0, 0
	for id, tc := range c.m.open {
		if id < fmt.Sprint("c", nBig) && len(id) == 2 {
			require.Zero(t, len(tc.input), "the start had the input, over 256 KiB")
		}
		require.LessOrEqual(t, len(tc.input), event.MaxInputBytes)
		require.LessOrEqual(t, len(tc.out), event.MaxOutputBytes)
		kept += len(tc.input) + len(tc.out)
		for _, d := range tc.diffs {
			kept += len(d.NewText)
			withDiff++
		}
	}
	require.LessOrEqual(t, kept, 16<<20, "all open calls within one budget")
	require.Positive(t, withDiff)
	skipped := map[string]int{}
	for i := range nBig + nMid {
		out, _ := c.Parse(nil, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c%d","status":"completed"}}}`, i)))
		require.Len(t, out, 1)
		end := out[0].(*event.ToolEnd)
		require.True(t, end.OutputTruncated)
		require.Contains(t, []int{event.MaxOutputBytes, 0}, len(end.Output), "cut, or dropped past the budget")
		if end.Diff == "" {
			skipped[end.DiffSkipped]++
		}
		if i < nBig {
			require.Equal(t, event.DiffSkippedTooLarge, end.DiffSkipped, "a file over 1 MiB is not diffed")
		}
	}
	require.Equal(t, nBig, skipped[event.DiffSkippedTooLarge])
	require.Positive(t, skipped[event.DiffSkippedUnknown], "past the budget")
	require.Equal(t, nMid, withDiff+skipped[event.DiffSkippedUnknown])
	require.Empty(t, c.m.open)
	require.Zero(t, c.m.held)
}

// TestNothingAfterTheFatalError: once a protocol error ended the session,
// the agent's later lines become nothing: the fatal error and the result
// are the session's last words. They used to become events after them.
func TestNothingAfterTheFatalError(t *testing.T) {
	var w bytes.Buffer
	c := liveClient(t, &w, "")
	out, _ := c.Parse(nil, []byte(chunkLine("agent_message_chunk", "before")))
	require.Len(t, out, 1)
	out, _ = c.Parse(nil, []byte("this is not JSON"))
	require.Len(t, out, 2)
	require.Equal(t, event.ClassProtocol, out[0].(*event.Error).Class)
	require.IsType(t, &event.Result{}, out[1])
	require.True(t, c.Done())
	for _, l := range []string{chunkLine("agent_message_chunk", "after"), chunkLine("agent_thought_chunk", "hm"),
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"late","kind":"read"}}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}`, "more garbage"} {
		out, known := c.Parse(nil, []byte(l))
		require.Empty(t, out, l)
		require.True(t, known, "dropped, not unparsed: %s", l)
	}
}

// stuckWriter is an agent's stdin that takes the opening requests, then
// fails as a full queue does.
type stuckWriter struct {
	n    int
	err  error
	took int
}

func (s *stuckWriter) Write(b []byte) (int, error) {
	if s.took >= s.n {
		return 0, s.err
	}
	s.took++
	return len(b), nil
}

// TestAgentThatDoesNotRead: an answer the agent's stdin will not take (the
// queue in front of it is full) ends the session with a protocol error;
// an agent that is gone (the pipe closed) is left to its exit status.
func TestAgentThatDoesNotRead(t *testing.T) {
	perm := `{"jsonrpc":"2.0","id":900,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"p1","kind":"execute"},"options":[{"optionId":"y","kind":"allow_once"}]}}`
	full := &stuckWriter{n: 3, err: fmt.Errorf("%w: 4194304 bytes queued unread", errors.New("process: the child does not read its stdin"))}
	c := liveClient(t, full, "")
	out, _ := c.Parse(nil, []byte(perm))
	require.Len(t, out, 2) // the error, the result: an allowed call is the agent's to report
	require.Equal(t, event.ClassProtocol, out[0].(*event.Error).Class)
	require.Contains(t, out[0].(*event.Error).Message, "does not read")
	require.True(t, c.Done())

	gone := &stuckWriter{n: 3, err: &os.PathError{Op: "write", Path: "|1", Err: syscall.EPIPE}}
	c = liveClient(t, gone, "")
	out, _ = c.Parse(nil, []byte(perm))
	require.Empty(t, out)
	require.False(t, c.Done())
}

// TestReadOnlyPermissions: read-only allows what it can tell is a read
// (kind read or search, from the request or the call's announcement), once;
// everything else is rejected: no kind, other, fetch, think, switch_mode,
// an unknown kind. They used to be allowed, other and fetch always.
func TestReadOnlyPermissions(t *testing.T) {
	options := `[{"optionId":"always","kind":"allow_always"},{"optionId":"once","kind":"allow_once"},{"optionId":"no","kind":"reject_once"}]`
	for _, c := range []struct{ kind, announced, want string }{
		{"read", "", "once"}, {"search", "", "once"}, {"", "read", "once"},
		{"", "", "no"}, {"other", "", "no"}, {"fetch", "", "no"}, {"think", "", "no"}, {"switch_mode", "", "no"},
		{"execute", "", "no"}, {"edit", "", "no"}, {"delete", "", "no"}, {"move", "", "no"}, {"launch", "", "no"},
		{"", "edit", "no"}, {"", "fetch", "no"},
	} {
		t.Run(c.kind+"/"+c.announced, func(t *testing.T) {
			var w bytes.Buffer
			cl := liveClient(t, &w, adapters.ReadOnly)
			if c.announced != "" {
				_, _ = cl.Parse(nil, []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"t1","kind":"`+c.announced+`","status":"pending"}}}`))
			}
			kind := ""
			if c.kind != "" {
				kind = `,"kind":"` + c.kind + `"`
			}
			w.Reset()
			_, _ = cl.Parse(nil, []byte(`{"jsonrpc":"2.0","id":900,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"t1"`+kind+`},"options":`+options+`}}`))
			require.Contains(t, w.String(), `"optionId":"`+c.want+`"`)
		})
	}
	var w bytes.Buffer
	cl := liveClient(t, &w, adapters.FullAccess)
	w.Reset()
	_, _ = cl.Parse(nil, []byte(`{"jsonrpc":"2.0","id":900,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"t1"},"options":`+options+`}}`))
	require.Contains(t, w.String(), `"optionId":"always"`, "full-access allows, always")
}

// TestClaudeResultsKeptWithinTheBudget: claude-agent-acp's tool result
// (_meta.claudeCode.toolResponse, the file before the edit) is kept for
// the call's diff only within maxClaudeResponse and the open calls'
// budget; a result left out ends the call with no diff and says why.
func TestClaudeResultsKeptWithinTheBudget(t *testing.T) {
	c := NewParser()
	call := func(id string, original int) string {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{"sessionId": "s1",
			"update": map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": id, "kind": "edit", "status": "in_progress",
				"_meta": map[string]any{"claudeCode": map[string]any{"toolName": "Edit",
					"toolResponse": map[string]any{"filePath": "/w/f", "originalFile": strings.Repeat("x", original)}}}}}})
		return string(b)
	}
	const nHuge, nMid = 3, 20
	for i := range nHuge + nMid {
		size := 1 << 20 // a file the harness diffs; 20 of them pass the budget
		if i < nHuge {
			size = maxClaudeResponse + 1
		}
		_, known := c.Parse(nil, []byte(call(fmt.Sprint("c", i), size)))
		require.True(t, known)
	}
	require.LessOrEqual(t, c.m.held, maxHeld)
	skipped := map[string]int{}
	for i := range nHuge + nMid {
		out, _ := c.Parse(nil, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c%d","status":"completed"}}}`, i)))
		require.Len(t, out, 1)
		skipped[out[0].(*event.ToolEnd).DiffSkipped]++
	}
	require.Equal(t, nHuge, skipped[event.DiffSkippedTooLarge])
	require.Positive(t, skipped[event.DiffSkippedUnknown], "past the budget")
	require.Empty(t, c.m.open)
	require.Zero(t, c.m.held)
}

// TestCreationsWithAFileNoHeaderCanName: a call creating two files, one
// of them named with a tab (which a diff header cannot hold:
// adapters.HeaderName), has no diff, not the other file's alone, and says
// why: no diff alone would say the call changed nothing. So does an edit
// whose texts may be fragments (oldText given).
func TestCreationsWithAFileNoHeaderCanName(t *testing.T) {
	line := func(paths ...string) string {
		var content []any
		for _, p := range paths {
			var old any
			if p == "edited.txt" {
				old = "w\n"
			}
			content = append(content, map[string]any{"type": "diff", "path": p, "oldText": old, "newText": "x\n"})
		}
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{"sessionId": "s1",
			"update": map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "c1", "kind": "edit", "status": "completed", "content": content}}})
		return string(b)
	}
	end := func(l string) *event.ToolEnd {
		bodies, _ := adaptertest.ParseLines(NewParser(), l)
		require.Len(t, bodies, 2)
		return bodies[1].(*event.ToolEnd)
	}
	both := end(line("a.txt", "b.txt"))
	require.Equal(t, "--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+x\n--- /dev/null\n+++ b/b.txt\n@@ -0,0 +1 @@\n+x\n", both.Diff)
	require.Empty(t, both.DiffSkipped)
	for _, paths := range [][]string{{"a.txt", "b\tc.txt"}, {"a.txt", "edited.txt"}, {"edited.txt"}} {
		e := end(line(paths...))
		require.Empty(t, e.Diff, "%q", paths)
		require.Equal(t, event.DiffSkippedUnknown, e.DiffSkipped, "%q", paths)
	}
}

// TestPrivateTmpOverACP: an agent that litters its temporary directory
// (adapters.Agent.PrivateTmp: OpenCode) does so in its ACP mode too, and
// its ACP command asks for a directory of the run's own; a custom ACP
// agent's does not.
func TestPrivateTmpOverACP(t *testing.T) {
	a, err := For("opencode", &opencode.Agent, nil)
	require.NoError(t, err)
	c, err := a.Command("opencode", adapters.Task{Prompt: "x"})
	require.NoError(t, err)
	require.True(t, c.PrivateTmp)

	custom, err := Custom("acp", []string{"acp"})
	require.NoError(t, err)
	c, err = custom.Command("acp", adapters.Task{Prompt: "x"})
	require.NoError(t, err)
	require.False(t, c.PrivateTmp)
}
