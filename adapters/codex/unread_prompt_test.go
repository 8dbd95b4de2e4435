package codex

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
)

// TestAppServerPromptNotRead: a turn/start that a Codex no longer reading
// its stdin cannot take ends the session with the protocol error of an
// agent that does not read, whether the prompt waited for the turn
// before it (the error ends the line that ended that turn) or went at
// once (Prompt returns the bodies, with its error: it has no line, and
// expired, whose panic harness contains, is the timers'). The prompt was dropped:
// the session stayed between turns, idle until the hard budget, and
// Prompt said it was over though it went on.
func TestAppServerPromptNotRead(t *testing.T) {
	t.Parallel()
	const completed = `{"method":"turn/completed","params":{"threadId":"x","turn":{"id":"t1","items":[],"status":"completed"}}}`
	begin := func(t *testing.T) *Client {
		c := NewAppServer()
		c.Converse(false)
		c.BoundSetup(time.Hour, func(...event.Body) { t.Error("expired is the timers' alone") })
		// initialize, initialized, thread/start, the first turn/start
		require.NoError(t, c.Begin(&adaptertest.FullStdin{N: 4}, adapters.Task{Cwd: "/w"}))
		exchange(c, initAnswer, threadAnswer)
		_, err := c.Prompt("one")
		require.NoError(t, err)
		exchange(c, `{"id":3,"result":{"turn":{"id":"t1"}}}`)
		return c
	}
	requireBroken := func(t *testing.T, bodies []event.Body) {
		t.Helper()
		require.GreaterOrEqual(t, len(bodies), 2, "%#v", bodies)
		e, ok := bodies[len(bodies)-2].(*event.Error)
		require.True(t, ok, "%#v", bodies)
		require.True(t, e.Fatal)
		require.Equal(t, event.ClassProtocol, e.Class)
		require.Contains(t, e.Message, "does not read")
		require.IsType(t, &event.Result{}, bodies[len(bodies)-1])
	}
	t.Run("queued", func(t *testing.T) {
		t.Parallel()
		c := begin(t)
		_, err := c.Prompt("two") // waits for the turn in flight
		require.NoError(t, err)
		bodies, _ := exchange(c, completed)
		require.True(t, c.Done(), "the session is over")
		requireBroken(t, bodies)
	})
	t.Run("at-once", func(t *testing.T) {
		t.Parallel()
		c := begin(t)
		exchange(c, completed)
		ended, err := c.Prompt("two")
		require.Error(t, err)
		require.True(t, c.Done(), "the session is over")
		requireBroken(t, ended)
	})
}
