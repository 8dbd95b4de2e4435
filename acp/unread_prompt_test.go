package acp

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
)

// TestPromptNotRead: a session/prompt that an agent no longer reading
// its stdin cannot take ends the session with the protocol error of an
// agent that does not read, whether it waited for the turn before it
// (the error ends the line that ended that turn) or went at once
// (Prompt returns the bodies, with its error: it has no line, and
// expired, whose panic harness contains, is its timers'). The prompt was
// dropped: the session stayed between turns, idle until the hard budget.
func TestPromptNotRead(t *testing.T) {
	begin := func(t *testing.T) *Client {
		c := NewParser()
		c.Converse(false)
		c.BoundSetup(time.Hour, func(...event.Body) { t.Error("expired is the timers' alone") })
		stdin := &adaptertest.FullStdin{N: 3} // initialize, session/new, the first prompt (id 3)
		require.NoError(t, c.Begin(stdin, adapters.Task{Cwd: t.TempDir()}))
		adaptertest.ParseLines(c, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}`, `{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}`)
		_, err := c.Prompt("one")
		require.NoError(t, err)
		return c
	}
	check := func(t *testing.T, c *Client, bodies []event.Body) {
		t.Helper()
		e := lastFatal(t, bodies)
		require.Equal(t, event.ClassProtocol, e.Class)
		require.Contains(t, e.Message, "does not read")
		require.True(t, c.Done(), "the session is over")
	}
	t.Run("queued", func(t *testing.T) {
		c := begin(t)
		_, err := c.Prompt("two") // waits for the turn in flight
		require.NoError(t, err)
		out, _ := c.Parse(nil, answer(3, `{"stopReason":"end_turn"}`))
		check(t, c, out)
	})
	t.Run("at-once", func(t *testing.T) {
		c := begin(t)
		c.Parse(nil, answer(3, `{"stopReason":"end_turn"}`))
		ended, err := c.Prompt("two")
		require.Error(t, err)
		check(t, c, ended)
	})
}
