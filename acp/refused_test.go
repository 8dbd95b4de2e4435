package acp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/event"
)

// geminiClient is a Client of gemini --acp (agentInfo gemini-cli, its
// modes), a live session when conv, else a run whose prompt is sent.
func geminiClient(t *testing.T, w *bytes.Buffer, conv, ask bool, permissions string) *Client {
	t.Helper()
	c := NewParser()
	if conv {
		c.Converse(ask)
	}
	require.NoError(t, c.Begin(w, adapters.Task{Prompt: "do it", Cwd: t.TempDir(), Permissions: permissions}))
	c.Parse(nil, []byte(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentInfo":{"name":"gemini-cli","version":"0.61.0"}}}`))
	var avail []map[string]string
	for _, m := range geminiModes {
		avail = append(avail, map[string]string{"id": m, "name": m})
	}
	line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "result": map[string]any{"sessionId": "s1",
		"modes": map[string]any{"currentModeId": "default", "availableModes": avail}}})
	c.Parse(nil, line)
	if id, ok := sent(w, "session/set_mode"); ok {
		c.Parse(nil, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":{}}`, id))
	}
	return c
}

const geminiWrite = "write_file__write_file_1795469496809_0"

// geminiAsk is Gemini's request to write /w/out.txt: it asks before it
// reports the call (no tool_call first), with ACP's kind edit, the
// file's location and the diff; a call refused it reports no more of.
var geminiAsk = `{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s1","options":[` +
	`{"optionId":"proceed_once","name":"Allow","kind":"allow_once"},{"optionId":"cancel","name":"Reject","kind":"reject_once"}],` +
	`"toolCall":{"toolCallId":"` + geminiWrite + `","status":"pending","title":"Writing to out.txt",` +
	`"content":[{"type":"diff","path":"/w/out.txt","oldText":"","newText":"x\n","_meta":{"kind":"add"}}],` +
	`"locations":[{"path":"/w/out.txt"}],"kind":"edit"}}}`

func chunk(text string) []byte {
	return update(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + text + `"}}`)
}

// messages are the texts of the messages among bodies.
func messages(bodies []event.Body) []string {
	var texts []string
	for _, b := range bodies {
		if m, ok := b.(*event.Message); ok {
			texts = append(texts, m.Text)
		}
	}
	return texts
}

// TestRefusedGeminiCallLeavesATrace: Gemini asks for a call before it
// reports it, and reports nothing of a call refused: it answers the
// model's next response. The request starts the call, so the text before
// it is an interim message, not part of the answer, and the refused call
// ends denied before what the agent says next — whether harness refused
// it (read-only) or the caller did (ask). It used to leave no trace, and
// the answer was "I'll run the command.DONE: file written".
func TestRefusedGeminiCallLeavesATrace(t *testing.T) {
	check := func(t *testing.T, out []event.Body) {
		t.Helper()
		var kinds []string
		for _, b := range out {
			if _, delta := b.(*event.TextDelta); !delta {
				kinds = append(kinds, string(b.EventType()))
			}
		}
		require.Equal(t, []string{"message", "tool_start", "tool_end", "message", "result"}, kinds)
		require.Equal(t, []string{"I'll write it.", "DONE: file written"}, messages(out))
		end := endsOf(out)
		require.Len(t, end, 1)
		require.Equal(t, event.StatusDenied, end[0].Status)
		require.Equal(t, []string{"/w/out.txt"}, end[0].Paths)
	}
	t.Run("read-only-run", func(t *testing.T) {
		var w bytes.Buffer
		c := geminiClient(t, &w, false, false, adapters.ReadOnly)
		id, ok := sent(&w, "session/prompt")
		require.True(t, ok)
		var out []event.Body
		for _, l := range [][]byte{chunk("I'll write it."), []byte(geminiAsk), chunk("DONE: file written"), answer(id, `{"stopReason":"end_turn"}`)} {
			out, _ = c.Parse(out, l)
		}
		require.Contains(t, w.String(), `"optionId":"cancel"`)
		check(t, out)
		require.Equal(t, "DONE: file written", out[len(out)-1].(*event.Result).Text)
	})
	for _, answered := range []bool{true, false} {
		t.Run(fmt.Sprintf("ask-session/answered=%v", answered), func(t *testing.T) {
			var w bytes.Buffer
			c := geminiClient(t, &w, true, true, "")
			id, _ := turn(t, c, &w, "do it")
			var out []event.Body
			for _, l := range [][]byte{chunk("I'll write it."), []byte(geminiAsk)} {
				out, _ = c.Parse(out, l)
			}
			require.IsType(t, &event.PermissionRequest{}, out[len(out)-1])
			// Denied by the caller, or by the session when its deadline
			// passed: the same Answer.
			answered, _ := c.Answer(geminiWrite, false)
			require.True(t, answered)
			for _, l := range [][]byte{chunk("DONE: file written"), answer(id, `{"stopReason":"end_turn"}`)} {
				out, _ = c.Parse(out, l)
			}
			var rest []event.Body
			for _, b := range out {
				if _, ok := b.(*event.PermissionRequest); !ok {
					rest = append(rest, b)
				}
			}
			// The turn's end is made of the result.
			var end *event.TurnEnd
			for _, b := range rest {
				if v, ok := b.(*event.TurnEnd); ok {
					end = v
				}
			}
			require.NotNil(t, end)
			require.Equal(t, "DONE: file written", end.Text)
			require.Equal(t, []string{"I'll write it.", "DONE: file written"}, messages(rest))
			ends := endsOf(rest)
			require.Len(t, ends, 1)
			require.Equal(t, event.StatusDenied, ends[0].Status)
		})
	}
}

// TestPermissionRequestSaysWhatTheCallDoes: the permission_request of a
// Gemini write_file has the kind and path its tool_start has (write,
// /w/out.txt), as a full-access run's call has: not ACP's "edit" with no
// path. An allowed call then ends ok, once.
func TestPermissionRequestSaysWhatTheCallDoes(t *testing.T) {
	var w bytes.Buffer
	c := geminiClient(t, &w, true, true, "")
	id, _ := turn(t, c, &w, "do it")
	out, _ := c.Parse(nil, []byte(geminiAsk))
	require.Len(t, out, 2)
	st, ok := out[0].(*event.ToolStart)
	require.True(t, ok, "%#v", out)
	r, ok := out[1].(*event.PermissionRequest)
	require.True(t, ok, "%#v", out)
	require.Equal(t, event.KindWrite, st.Kind)
	require.Equal(t, st.Kind, r.Kind)
	require.Equal(t, "/w/out.txt", st.Path)
	require.Equal(t, st.Path, r.Path)
	require.Equal(t, st.CallID, r.CallID)

	// The same call in full-access (Gemini's yolo: no request, an
	// in_progress tool_call) starts the same.
	var w2 bytes.Buffer
	full := geminiClient(t, &w2, false, false, adapters.FullAccess)
	out2, _ := full.Parse(nil, update(`{"sessionUpdate":"tool_call","toolCallId":"`+geminiWrite+`","status":"in_progress","title":"Writing to out.txt","content":[],"locations":[{"path":"/w/out.txt"}],"kind":"edit"}`))
	require.Len(t, out2, 1)
	st2 := out2[0].(*event.ToolStart)
	require.Equal(t, st2.Kind, r.Kind)
	require.Equal(t, st2.Path, r.Path)

	answered, _ := c.Answer(geminiWrite, true)
	require.True(t, answered)
	out, _ = c.Parse(nil, update(`{"sessionUpdate":"tool_call_update","toolCallId":"`+geminiWrite+`","status":"completed","title":"Writing to out.txt","content":[],"locations":[{"path":"/w/out.txt"}],"kind":"edit"}`))
	out, _ = c.Parse(out, answer(id, `{"stopReason":"end_turn"}`))
	ends := endsOf(out)
	require.Len(t, ends, 1)
	require.Equal(t, event.StatusOK, ends[0].Status)
	require.Equal(t, event.KindWrite, ends[0].Kind)
	for _, b := range out {
		require.NotEqual(t, event.TypeToolStart, b.EventType(), "started once")
	}
}

// TestClaudeRefusalReportedLate: a call whose refusal ended it denied
// (the agent went on) and that the agent then reports failed is not a
// second end, nor worth a warning.
func TestClaudeRefusalReportedLate(t *testing.T) {
	var w bytes.Buffer
	c := liveClient(t, &w, adapters.ReadOnly)
	var out []event.Body
	for _, l := range editCall {
		out, _ = c.Parse(out, []byte(l))
	}
	out, _ = c.Parse(out, chunk("I may not."))
	out, _ = c.Parse(out, update(`{"sessionUpdate":"tool_call_update","toolCallId":"e1","status":"failed"}`))
	out, _ = c.Parse(out, answer(3, `{"stopReason":"end_turn"}`))
	ends := endsOf(out)
	require.Len(t, ends, 1)
	require.Equal(t, event.StatusDenied, ends[0].Status)
	for _, b := range out {
		require.NotEqual(t, event.TypeWarning, b.EventType(), "%#v", b)
	}
}

// TestPermissionRequestNamesAnArgvCommand: a shell call whose rawInput
// command is an argv array asks with the command its tool_start has
// ("ls -l"), not none: the caller decides on it. It was read as a string
// only.
func TestPermissionRequestNamesAnArgvCommand(t *testing.T) {
	var w bytes.Buffer
	c, _ := conv(t, &w, true, adapters.FullAccess, nil, "")
	turn(t, c, &w, "list")
	out, _ := c.Parse(nil, update(`{"sessionUpdate":"tool_call","toolCallId":"x1","title":"ls","kind":"execute","status":"pending","rawInput":{"command":["ls","-l"]}}`))
	out, _ = c.Parse(out, []byte(`{"jsonrpc":"2.0","id":900,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"x1"},"options":[{"optionId":"y","kind":"allow_once"},{"optionId":"n","kind":"reject_once"}]}}`))
	require.Len(t, out, 2)
	st, ok := out[0].(*event.ToolStart)
	require.True(t, ok, "%#v", out)
	r, ok := out[1].(*event.PermissionRequest)
	require.True(t, ok, "%#v", out)
	require.Equal(t, "ls -l", st.Command)
	require.Equal(t, st.Command, r.Command)
}

// TestPermissionForAnEndedCall: a session/request_permission for a call
// whose end the agent already reported is late news, as a late
// tool_call_update is: it opens no second call (each call starts once,
// ends once), whether harness refuses it (read-only) or asks the caller.
// It started the call again, a second tool_start ended denied.
func TestPermissionForAnEndedCall(t *testing.T) {
	request := `{"jsonrpc":"2.0","id":7,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"e1","kind":"edit","title":"Edit"},` +
		`"options":[{"optionId":"y","kind":"allow_once"},{"optionId":"n","kind":"reject_once"}]}}`
	check := func(t *testing.T, c *Client) {
		t.Helper()
		out, _ := c.Parse(nil, update(`{"sessionUpdate":"tool_call","toolCallId":"e1","title":"Edit","kind":"edit","status":"pending"}`))
		out, _ = c.Parse(out, update(`{"sessionUpdate":"tool_call_update","toolCallId":"e1","status":"completed"}`))
		out, _ = c.Parse(out, []byte(request))
		out, _ = c.Parse(out, chunk("done"))
		var starts, ends int
		for _, b := range out {
			switch b.(type) {
			case *event.ToolStart:
				starts++
			case *event.ToolEnd:
				ends++
			}
		}
		require.Equal(t, [2]int{1, 1}, [2]int{starts, ends}, "%#v", out)
	}
	t.Run("read-only", func(t *testing.T) {
		var w bytes.Buffer
		c := geminiClient(t, &w, false, false, adapters.ReadOnly)
		check(t, c)
		id, ok := sent(&w, "session/prompt")
		require.True(t, ok)
		out, _ := c.Parse(nil, answer(id, `{"stopReason":"end_turn"}`))
		require.Equal(t, event.ResultSuccess, out[len(out)-1].(*event.Result).Status, "%#v", out)
	})
	t.Run("ask", func(t *testing.T) {
		var w bytes.Buffer
		c, _ := conv(t, &w, true, adapters.FullAccess, nil, "")
		turn(t, c, &w, "edit")
		check(t, c)
	})
}
