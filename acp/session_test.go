package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
)

// The modes the real adapters offer in session/new (acp/testdata).
var (
	claudeModes = []string{"default", "acceptEdits", "plan", "auto", "bypassPermissions"}
	codexModes  = []string{"read-only", "workspace-write", "agent", "agent-full-access"} // codex-acp 2.6
	geminiModes = []string{"default", "autoEdit", "yolo", "plan"}
	oldCodex    = []string{"read-only", "auto", "full-access"} // codex-acp before 2
)

// TestChooseMode: each real adapter's mode for each permission. codex-acp
// 2's "agent" (its default, "Auto review") asks nothing for work in the
// workspace: ask used to keep it (a denied shell command ran), and so did
// full-access, which never reached "agent-full-access".
func TestChooseMode(t *testing.T) {
	for _, c := range []struct {
		name                string
		modes               []string
		full, ask, readOnly string
	}{
		{"claude-agent-acp", claudeModes, "bypassPermissions", "default", "default"},
		{"codex-acp", codexModes, "agent-full-access", "read-only", "read-only"},
		{"codex-acp-1", oldCodex, "full-access", "read-only", "read-only"},
		{"gemini", geminiModes, "yolo", "default", "default"},
		{"opencode", nil, "", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.full, chooseMode(c.modes, adapters.FullAccess))
			require.Equal(t, c.ask, chooseMode(c.modes, askMode))
			require.Equal(t, c.readOnly, chooseMode(c.modes, adapters.ReadOnly))
		})
	}
}

// TestReplayLegacyMode: the replay of a log written before harness
// recorded its permissions (ReplayLegacy) sets the mode harness set then,
// so the agent's answers keep their ids: codex-acp 2 got none for
// full-access and ask, and an ask session without its mode went on.
func TestReplayLegacyMode(t *testing.T) {
	for _, c := range []struct {
		name                string
		modes               []string
		full, ask, readOnly string
	}{
		{"claude-agent-acp", claudeModes, "bypassPermissions", "default", "default"},
		{"codex-acp", codexModes, "", "", "read-only"},
		{"codex-acp-1", oldCodex, "full-access", "", "read-only"},
		{"gemini", geminiModes, "yolo", "default", "default"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, p := range []struct{ permissions, want string }{
				{adapters.FullAccess, c.full}, {askMode, c.ask}, {adapters.ReadOnly, c.readOnly},
			} {
				var w bytes.Buffer
				cl := NewParser()
				cl.ReplayLegacy()
				ask := p.permissions == askMode
				cl.Converse(ask)
				perm := p.permissions
				if ask {
					perm = adapters.FullAccess // as a session that asks runs the agent
				}
				require.NoError(t, cl.Begin(&w, adapters.Task{Cwd: t.TempDir(), Permissions: perm}))
				out, _ := cl.Parse(nil, []byte(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}`))
				var avail []map[string]string
				for _, m := range c.modes {
					avail = append(avail, map[string]string{"id": m, "name": m})
				}
				line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "result": map[string]any{"sessionId": "s1",
					"modes": map[string]any{"currentModeId": "none", "availableModes": avail}}})
				out, _ = cl.Parse(out, line)
				require.Equal(t, p.want, modeSet(&w), p.permissions)
				require.False(t, cl.Done(), p.permissions)
				require.Len(t, out, 1, "the session start only")
				if id, ok := sent(&w, "session/set_mode"); ok && ask {
					// A refusal then warned, and the session went on.
					out, _ = cl.Parse(nil, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"error":{"code":-32602,"message":"no"}}`, id))
					require.Len(t, out, 1)
					require.IsType(t, &event.Warning{}, out[0])
					_, start := turn(t, cl, &w, "go")
					require.IsType(t, &event.TurnStart{}, start[0])
				}
			}
		})
	}
}

// conv is a Client of a live session over w, set up to the point where
// it waits for a prompt: session/new offered modes (none when nil) with
// current, and a mode change asked was accepted.
func conv(t *testing.T, w *bytes.Buffer, ask bool, permissions string, modes []string, current string) (*Client, []event.Body) {
	t.Helper()
	c, out := opened(t, w, ask, permissions, modes, current)
	if id, ok := sent(w, "session/set_mode"); ok && !c.Done() {
		out, _ = c.Parse(out, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":{}}`, id))
	}
	return c, out
}

// opened is conv up to session/new's answer.
func opened(t *testing.T, w *bytes.Buffer, ask bool, permissions string, modes []string, current string) (*Client, []event.Body) {
	t.Helper()
	c := NewParser()
	c.Converse(ask)
	require.NoError(t, c.Begin(w, adapters.Task{Cwd: t.TempDir(), Permissions: permissions}))
	var out []event.Body
	out, _ = c.Parse(out, []byte(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}`))
	newResult := map[string]any{"sessionId": "s1"}
	if modes != nil {
		var avail []map[string]string
		for _, m := range modes {
			avail = append(avail, map[string]string{"id": m, "name": m})
		}
		newResult["modes"] = map[string]any{"currentModeId": current, "availableModes": avail}
	}
	line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "result": newResult})
	out, _ = c.Parse(out, line)
	return c, out
}

// sent returns the id of the last request of method written to w.
func sent(w *bytes.Buffer, method string) (int, bool) {
	id, ok := 0, false
	sc := bufio.NewScanner(bytes.NewReader(w.Bytes()))
	for sc.Scan() {
		var m struct {
			ID     int    `json:"id"`
			Method string `json:"method"`
		}
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.Method == method {
			id, ok = m.ID, true
		}
	}
	return id, ok
}

// modeSet is the mode session/set_mode asked for, "" for none.
func modeSet(w *bytes.Buffer) string {
	var mode string
	sc := bufio.NewScanner(bytes.NewReader(w.Bytes()))
	for sc.Scan() {
		var m struct {
			Method string `json:"method"`
			Params struct {
				ModeID string `json:"modeId"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.Method == "session/set_mode" {
			mode = m.Params.ModeID
		}
	}
	return mode
}

// turn sends a prompt and returns the id of its session/prompt, and the
// turn's start.
func turn(t *testing.T, c *Client, w *bytes.Buffer, text string) (int, []event.Body) {
	t.Helper()
	start, err := c.Prompt(text)
	require.NoError(t, err)
	id, ok := sent(w, "session/prompt")
	require.True(t, ok)
	return id, start
}

func update(u string) []byte {
	return []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":` + u + `}}`)
}

func answer(id int, result string) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":%s}`, id, result)
}

// lastFatal is the fatal error of bodies, which end with the result.
func lastFatal(t *testing.T, bodies []event.Body) *event.Error {
	t.Helper()
	require.GreaterOrEqual(t, len(bodies), 2)
	require.Equal(t, event.ResultError, bodies[len(bodies)-1].(*event.Result).Status)
	e, ok := bodies[len(bodies)-2].(*event.Error)
	require.True(t, ok, "%#v", bodies)
	require.True(t, e.Fatal)
	return e
}

// TestAskTakesTheModeThatAsks: a session with permissions ask moves
// codex-acp from "agent" (which ran a shell command in the workspace
// unasked, the caller's later denial too late) to "read-only", which asks
// before edits and commands that need more than reading; Claude and
// Gemini stay in their "default". An agent whose modes include none that
// asks, or that refuses the change, is refused ask before any prompt: its
// edits would go unasked. One that offers no modes keeps its own.
func TestAskTakesTheModeThatAsks(t *testing.T) {
	for _, c := range []struct {
		name, current, want string
		modes               []string
	}{
		{"codex-acp", "agent", "read-only", codexModes},
		{"claude-agent-acp", "default", "", claudeModes},
		{"gemini", "default", "", geminiModes},
		{"no-modes", "", "", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			var w bytes.Buffer
			cl, out := conv(t, &w, true, adapters.FullAccess, c.modes, c.current)
			require.Equal(t, c.want, modeSet(&w))
			require.False(t, cl.Done())
			require.Len(t, out, 1, "the session start only")
			_, start := turn(t, cl, &w, "go")
			require.IsType(t, &event.TurnStart{}, start[0])
		})
	}
	t.Run("no-mode-asks", func(t *testing.T) {
		var w bytes.Buffer
		cl, out := conv(t, &w, true, adapters.FullAccess, []string{"workspace-write", "agent", "agent-full-access"}, "agent")
		e := lastFatal(t, out)
		require.Equal(t, event.ErrBadConfig, e.Code)
		require.Contains(t, e.Message, "no mode that asks")
		require.Contains(t, e.Message, "workspace-write, agent, agent-full-access")
		require.True(t, cl.Done(), "the agent is let go")
		require.Empty(t, modeSet(&w))
		_, err := cl.Prompt("go")
		require.Error(t, err)
		_, prompted := sent(&w, "session/prompt")
		require.False(t, prompted)
	})
	t.Run("mode-refused", func(t *testing.T) {
		var w bytes.Buffer
		cl, _ := opened(t, &w, true, adapters.FullAccess, codexModes, "agent")
		id, ok := sent(&w, "session/set_mode")
		require.True(t, ok)
		out, _ := cl.Parse(nil, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"error":{"code":-32602,"message":"no such mode"}}`, id))
		e := lastFatal(t, out)
		require.Equal(t, event.ErrBadConfig, e.Code)
		require.Contains(t, e.Message, "no such mode")
		require.True(t, cl.Done())
		_, prompted := sent(&w, "session/prompt")
		require.False(t, prompted)
	})
	t.Run("full-access", func(t *testing.T) {
		var w bytes.Buffer
		conv(t, &w, false, adapters.FullAccess, codexModes, "agent")
		require.Equal(t, "agent-full-access", modeSet(&w))
	})
}

// editCall announces an edit codex-acp asks for, and its permission
// request (id 900).
var editCall = []string{
	string(update(`{"sessionUpdate":"tool_call","toolCallId":"e1","kind":"edit","title":"Editing files","status":"in_progress","content":[{"type":"diff","oldText":null,"newText":"x\n","path":"/w/out.txt"}]}`)),
	`{"jsonrpc":"2.0","id":900,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"e1","kind":"edit","locations":[{"path":"/w/out.txt"}]},"options":[{"optionId":"allow_once","kind":"allow_once"},{"optionId":"cancel","kind":"reject_once"}]}}`,
}

// endsOf are the tool_ends among bodies.
func endsOf(bodies []event.Body) []*event.ToolEnd {
	var ends []*event.ToolEnd
	for _, b := range bodies {
		if e, ok := b.(*event.ToolEnd); ok {
			ends = append(ends, e)
		}
	}
	return ends
}

// TestRefusedCallEndsDenied: codex-acp reports no end of a call whose
// permission was refused (it ends its turn cancelled instead): the call
// ends denied when the prompt is answered, as the refusal says, in a run
// (harness refused it, read-only) and in a session (the caller did). It
// was left to the turn's end, which closed it cancelled, synthetic.
func TestRefusedCallEndsDenied(t *testing.T) {
	t.Run("read-only-run", func(t *testing.T) {
		var w bytes.Buffer
		c := liveClient(t, &w, adapters.ReadOnly)
		var out []event.Body
		for _, l := range editCall {
			out, _ = c.Parse(out, []byte(l))
		}
		require.Contains(t, w.String(), `"optionId":"cancel"`)
		out, _ = c.Parse(out, []byte(`{"jsonrpc":"2.0","id":3,"result":{"stopReason":"cancelled"}}`))
		ends := endsOf(out)
		require.Len(t, ends, 1)
		require.Equal(t, event.StatusDenied, ends[0].Status)
		require.False(t, ends[0].Synthetic)
		require.Equal(t, []string{"/w/out.txt"}, ends[0].Paths)
		require.Empty(t, c.m.open)
		require.Zero(t, c.m.held)
	})
	t.Run("ask-session", func(t *testing.T) {
		var w bytes.Buffer
		c, _ := conv(t, &w, true, adapters.FullAccess, codexModes, "agent")
		id, _ := turn(t, c, &w, "write it")
		var out []event.Body
		for _, l := range editCall {
			out, _ = c.Parse(out, []byte(l))
		}
		require.IsType(t, &event.PermissionRequest{}, out[len(out)-1])
		answered, _ := c.Answer("e1", false)
		require.True(t, answered)
		out, _ = c.Parse(nil, answer(id, `{"stopReason":"cancelled"}`))
		ends := endsOf(out)
		require.Len(t, ends, 1)
		require.Equal(t, event.StatusDenied, ends[0].Status)
		require.IsType(t, &event.TurnEnd{}, out[len(out)-1], "the call ends before its turn")
	})
}

// TestPromptAnswerWithoutStopReason: an answer to session/prompt without
// its required stopReason breaks the protocol, and says what was missing
// (class protocol, fatal), in a run and in a session. It used to be "the
// agent stopped the turn: " with no reason and no class.
func TestPromptAnswerWithoutStopReason(t *testing.T) {
	for _, result := range []string{`null`, `{}`, `{"stopReason":null}`, `{"stopReason":""}`, `{"usage":{"inputTokens":1}}`} {
		t.Run("run/"+result, func(t *testing.T) {
			var w bytes.Buffer
			c := liveClient(t, &w, "")
			out, known := c.Parse(nil, answer(3, result))
			require.True(t, known)
			e := lastFatal(t, out)
			require.Equal(t, event.ClassProtocol, e.Class)
			require.Contains(t, e.Message, "without a stopReason")
			require.True(t, c.Done())
		})
	}
	t.Run("session", func(t *testing.T) {
		var w bytes.Buffer
		c, _ := conv(t, &w, false, adapters.FullAccess, nil, "")
		id, _ := turn(t, c, &w, "go")
		out, _ := c.Parse(nil, answer(id, `{}`))
		e := lastFatal(t, out)
		require.Equal(t, event.ClassProtocol, e.Class)
		require.Contains(t, e.Message, "without a stopReason")
		require.True(t, c.Done(), "a broken protocol ends the session")
	})
}

// TestLateUpdateOfAClosedCall: a call still running when its turn ended
// was closed with the turn (cancelled, synthetic); its completion
// reported in the next turn is dropped with a warning, not a second call
// "t1#2" with no input that stats.tool_calls counted. Its progress is
// dropped unsaid, and so is an end the agent reports twice. A tool_call
// that announces the id again is a new call.
func TestLateUpdateOfAClosedCall(t *testing.T) {
	var w bytes.Buffer
	c, bodies := conv(t, &w, false, adapters.FullAccess, nil, "")
	parse := func(lines ...[]byte) []event.Body {
		var out []event.Body
		for _, l := range lines {
			out, _ = c.Parse(out, l)
		}
		bodies = append(bodies, out...)
		return out
	}
	id, start := turn(t, c, &w, "one")
	bodies = append(bodies, start...)
	parse(update(`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"sleep","kind":"execute","status":"in_progress","rawInput":{"command":"sleep 1"}}`),
		answer(id, `{"stopReason":"end_turn"}`))
	id, start = turn(t, c, &w, "two")
	bodies = append(bodies, start...)
	out := parse(update(`{"sessionUpdate":"tool_call_update","toolCallId":"t1","_meta":{"terminal_output_delta":{"data":"z"}}}`))
	require.Empty(t, out, "progress of a closed call")
	out = parse(update(`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed","rawOutput":{"exit_code":0,"output":"late"}}`))
	require.Len(t, out, 1)
	require.Contains(t, out[0].(*event.Warning).Message, "t1 completed after it had ended")
	out = parse(update(`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"ls","kind":"execute","status":"in_progress","rawInput":{"command":"ls"}}`),
		update(`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed"}`))
	require.Len(t, out, 2, "a new call under the id")
	require.Equal(t, "ls", out[0].(*event.ToolStart).Command)
	out = parse(update(`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed"}`))
	require.Len(t, out, 1, "an end reported twice")
	require.IsType(t, &event.Warning{}, out[0])
	parse(answer(id, `{"stopReason":"end_turn"}`))

	var evs []event.Event
	s := event.NewStream(event.StreamConfig{Sink: func(ev event.Event) { evs = append(evs, ev) }, Start: event.SessionStart{Agent: "fake"}})
	require.NoError(t, s.Emit(bodies...))
	res := s.Finish(event.Outcome{ExitCode: new(int)})
	require.NoError(t, event.Check(evs))
	require.Equal(t, int64(2), res.Stats.ToolCalls, "t1 and its id's second call")
	var ends []string
	for _, ev := range evs {
		if e, ok := ev.Body.(*event.ToolEnd); ok {
			ends = append(ends, fmt.Sprint(e.CallID, " ", e.Status, " ", e.Synthetic))
		}
	}
	require.Equal(t, []string{"t1 cancelled true", "t1#2 ok false"}, ends)
}

// TestAskAgentThatDoesNotRead: with permissions ask, the requests past
// the caller's queue are refused at once; an agent that does not read
// those answers (the queue in front of its stdin full) ends the session
// with a protocol error, as it does with the other permissions. Its flood
// used to go on unbounded, a call started and ended denied per request.
func TestAskAgentThatDoesNotRead(t *testing.T) {
	full := &stuckWriter{n: 3, err: fmt.Errorf("%w: 4194304 bytes queued unread", errors.New("process: the child does not read its stdin"))}
	c := NewParser()
	c.Converse(true)
	require.NoError(t, c.Begin(full, adapters.Task{Cwd: t.TempDir()}))
	adaptertest.ParseLines(c, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}`, `{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}`)
	_, err := c.Prompt("go")
	require.NoError(t, err)
	require.Equal(t, 3, full.took, "initialize, session/new, the prompt")
	var out []event.Body
	request := func(i int) []byte {
		return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"p%d","kind":"execute"},"options":[{"optionId":"y","kind":"allow_once"},{"optionId":"n","kind":"reject_once"}]}}`, 1000+i, i)
	}
	for i := range maxQueued {
		out, _ = c.Parse(out, request(i))
		require.False(t, c.Done(), "request %d is the caller's to answer", i)
	}
	require.Equal(t, 3, full.took, "the caller's requests wait unanswered")
	out, _ = c.Parse(out, request(maxQueued))
	require.IsType(t, &event.Result{}, out[len(out)-1], "the session ends")
	e := lastFatal(t, out)
	require.Equal(t, event.ClassProtocol, e.Class)
	require.Contains(t, e.Message, "does not read")
	require.True(t, c.Done())
}
