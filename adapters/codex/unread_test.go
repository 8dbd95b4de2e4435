package codex

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/linescan"
)

// TestAppServerAgentThatDoesNotRead: a Codex whose stdin takes no more
// of harness's answers (requests answered at once: approvals not asked of
// the caller, a method harness does not answer) ends the session with a
// protocol error, as ACP's does, rather than flood on unanswered (a
// warning a line for a method harness does not answer).
func TestAppServerAgentThatDoesNotRead(t *testing.T) {
	t.Parallel()
	for name, request := range map[string]string{
		"approval": `{"method":"item/commandExecution/requestApproval","id":%d,"params":{"itemId":"call_%[1]d","turnId":"t1","command":"ls"}}`,
		"unknown":  `{"method":"item/tool/call","id":%d,"params":{"tool":"x"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			s := adaptertest.Stream(Agent, false, &out)
			stdin := &adaptertest.FullStdin{N: 5} // initialize, initialized, thread/start, turn/start, the first answer
			c := NewAppServer()
			c.Converse(false)
			require.NoError(t, c.Begin(stdin, adapters.Task{Cwd: "/w"}))
			lines := fmt.Sprintf("%s\n%s\n{\"id\":3,\"result\":{\"turn\":{\"id\":\"t1\"}}}\n%s\n%s\n", initAnswer, threadAnswer,
				fmt.Sprintf(request, 0), fmt.Sprintf(request, 1))
			_, err := c.Prompt("go")
			require.NoError(t, err)
			var last []event.Body
			_ = linescan.Scan(bytes.NewReader([]byte(lines)), 0, func(line []byte, _ int64) error {
				require.False(t, c.Done())
				var known bool
				last, known = c.Parse(nil, line)
				s.Line(event.StreamStdout, line, !known, last)
				return nil
			})
			require.True(t, c.Done(), "the session is over")
			e, ok := last[len(last)-2].(*event.Error)
			require.True(t, ok, "%#v", last)
			require.True(t, e.Fatal)
			require.Equal(t, event.ClassProtocol, e.Class)
			require.Contains(t, e.Message, "does not read")
			require.IsType(t, &event.Result{}, last[len(last)-1])
			s.Emit(c.Flush(nil)...)
			s.Finish(event.Outcome{NoProcess: true})
			adaptertest.CheckStream(t, out.Bytes())
		})
	}
}
