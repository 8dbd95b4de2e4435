package acp

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
)

// TestAskAnswersNotRead: with permissions ask, an answer to a permission
// request that the agent's stdin does not take (the queue in front of it
// full) ends the session with the protocol error of an agent that does
// not read, as harness's other answers do: the caller's (Answer) at
// once, in the bodies Answer returns (it comes from no line; it waited
// for the agent's next line, which a silent agent never sent; expired,
// whose panic harness contains, is the timers'), and the cancelled
// ones of the requests a turn's end leaves waiting. Their write errors
// were dropped: the session went on, the agent waiting for answers it
// would never have.
func TestAskAnswersNotRead(t *testing.T) {
	open := func(t *testing.T) *Client {
		t.Helper()
		stdin := &adaptertest.FullStdin{N: 3} // initialize, session/new, the prompt (id 3)
		c := NewParser()
		c.Converse(true)
		c.BoundSetup(time.Hour, func(...event.Body) { t.Error("expired is the timers' alone") })
		require.NoError(t, c.Begin(stdin, adapters.Task{Cwd: t.TempDir()}))
		adaptertest.ParseLines(c, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}`, `{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}`)
		_, err := c.Prompt("go")
		require.NoError(t, err)
		out, _ := c.Parse(nil, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":900,"method":"session/request_permission","params":{"sessionId":"s1",`+
			`"toolCall":{"toolCallId":"p1","kind":"execute"},"options":[{"optionId":"y","kind":"allow_once"},{"optionId":"n","kind":"reject_once"}]}}`))
		require.IsType(t, &event.PermissionRequest{}, out[len(out)-1], "the caller's to answer")
		return c
	}
	check := func(t *testing.T, c *Client, out []event.Body) {
		t.Helper()
		e := lastFatal(t, out)
		require.Equal(t, event.ClassProtocol, e.Class)
		require.Contains(t, e.Message, "does not read")
		require.True(t, c.Done(), "the session is over")
	}
	t.Run("caller-answers", func(t *testing.T) {
		c := open(t)
		answered, ended := c.Answer("p1", true)
		require.True(t, answered)
		check(t, c, ended)
		out, _ := c.Parse(nil, chunk("going on"))
		require.Empty(t, out, "nothing after the session's end")
	})
	t.Run("turn-ends-with-a-request-waiting", func(t *testing.T) {
		c := open(t)
		out, _ := c.Parse(nil, answer(3, `{"stopReason":"end_turn"}`))
		check(t, c, out)
	})
}
