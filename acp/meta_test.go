package acp

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/event"
)

// TestUpdateMetaOfAnotherShape: _meta is free-form (ACP's extension
// point): one of a shape harness does not read (a number, a field of
// another type) is no data, and the update's other fields map as ever.
// It made the whole session/update an unparsed line.
func TestUpdateMetaOfAnotherShape(t *testing.T) {
	for name, meta := range map[string]string{
		"number":           `5`,
		"string":           `"x"`,
		"tool-name-number": `{"claudeCode":{"toolName":7}}`,
		"exit-code-string": `{"terminal_exit":{"exit_code":"1"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			c := NewParser()
			out, known := c.Parse(nil, update(`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"ls","kind":"execute","status":"completed","rawOutput":"a.txt","_meta":`+meta+`}`))
			require.True(t, known, "the update is read")
			require.Len(t, out, 2, "%#v", out)
			end, ok := out[1].(*event.ToolEnd)
			require.True(t, ok, "%#v", out)
			require.Equal(t, "a.txt", end.Output)
		})
	}
	t.Run("message-chunk", func(t *testing.T) {
		c := NewParser()
		out, known := c.Parse(nil, update(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"},"_meta":5}`))
		require.True(t, known)
		require.Equal(t, []event.Body{&event.TextDelta{Text: "hi"}}, out)
	})
	t.Run("diff-content", func(t *testing.T) {
		// Gemini's diff content carries _meta.kind: one of another shape
		// leaves the diff as a creation's, not the call without content.
		c := NewParser()
		out, known := c.Parse(nil, update(`{"sessionUpdate":"tool_call","toolCallId":"w1","title":"write","kind":"edit","status":"completed",`+
			`"content":[{"type":"diff","path":"/w/new.txt","newText":"x\n","_meta":{"kind":3}}]}`))
		require.True(t, known)
		end, ok := out[len(out)-1].(*event.ToolEnd)
		require.True(t, ok, "%#v", out)
		require.Contains(t, end.Diff, "+x")
	})
}
