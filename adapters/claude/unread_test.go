package claude

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
)

// TestLiveCLIThatDoesNotRead: a CLI whose stdin takes no more of
// harness's answers (control requests refused at once: can_use_tool
// outside ask, a subtype harness does not handle) ends the session with
// a protocol error, as ACP's does, rather than flood on unanswered.
func TestLiveCLIThatDoesNotRead(t *testing.T) {
	t.Parallel()
	for name, request := range map[string]string{
		"can-use-tool": `{"type":"control_request","request_id":"r%d","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"ls"},"tool_use_id":"call-%[1]d"}}`,
		"hook":         `{"type":"control_request","request_id":"r%d","request":{"subtype":"hook_callback","callback_id":"x"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			s := adaptertest.Stream(Agent, false, &out)
			stdin := &adaptertest.FullStdin{N: 2} // the prompt, the first answer
			c := NewConversation()
			c.Converse(false)
			require.NoError(t, c.Begin(stdin, adapters.Task{}))
			bodies, err := c.Prompt("go")
			require.NoError(t, err)
			s.Emit(bodies...)
			var last []event.Body
			for _, line := range []string{`{"type":"system","subtype":"init","session_id":"s1","model":"m","cwd":"/w"}`,
				fmt.Sprintf(request, 1), fmt.Sprintf(request, 2)} {
				require.False(t, c.Done())
				var known bool
				last, known = c.Parse(nil, []byte(line))
				s.Line(event.StreamStdout, []byte(line), !known, last)
			}
			require.True(t, c.Done(), "the session is over")
			require.Len(t, last, 2)
			e, ok := last[0].(*event.Error)
			require.True(t, ok, "%#v", last)
			require.True(t, e.Fatal)
			require.Equal(t, event.ClassProtocol, e.Class)
			require.Contains(t, e.Message, "does not read")
			require.IsType(t, &event.Result{}, last[1])
			s.Emit(c.Flush(nil)...)
			s.Finish(event.Outcome{NoProcess: true})
			adaptertest.CheckStream(t, out.Bytes())
		})
	}
}
