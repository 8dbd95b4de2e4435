package codex

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
)

// TestAppServerLateWritesNotRead: the writes harness makes later than
// the line that asked for them — the caller's answer to an approval (or
// the ask deadline's denial), a turn/interrupt held until the turn's id
// was known — that a Codex no longer reading its stdin cannot take end
// the session with the protocol error an answer written at once gives
// it, rather than leave Codex to the watchdogs.
func TestAppServerLateWritesNotRead(t *testing.T) {
	t.Parallel()
	begin := func(t *testing.T, ask bool) *Client {
		c := NewAppServer()
		c.Converse(ask)
		c.BoundSetup(time.Hour, func(...event.Body) { t.Error("expired is the timers' alone") })
		// initialize, initialized, thread/start, turn/start
		require.NoError(t, c.Begin(&adaptertest.FullStdin{N: 4}, adapters.Task{Cwd: "/w"}))
		exchange(c, initAnswer, threadAnswer)
		_, err := c.Prompt("go")
		require.NoError(t, err)
		return c
	}
	requireBroken := func(t *testing.T, bodies []event.Body) {
		t.Helper()
		require.GreaterOrEqual(t, len(bodies), 2)
		e := bodies[len(bodies)-2].(*event.Error)
		require.True(t, e.Fatal)
		require.Equal(t, event.ClassProtocol, e.Class)
		require.Contains(t, e.Message, "does not read")
		require.IsType(t, &event.Result{}, bodies[len(bodies)-1])
	}
	t.Run("answer", func(t *testing.T) {
		t.Parallel()
		c := begin(t, true)
		bodies, _ := exchange(c, `{"id":3,"result":{"turn":{"id":"t1"}}}`,
			`{"method":"item/commandExecution/requestApproval","id":0,"params":{"itemId":"call_1","turnId":"t1","command":"ls"}}`)
		require.IsType(t, &event.PermissionRequest{}, bodies[len(bodies)-1])
		answered, ended := c.Answer("call_1", true)
		require.True(t, answered)
		require.True(t, c.Done(), "the session is over")
		requireBroken(t, ended)
	})
	t.Run("held-interrupt", func(t *testing.T) {
		t.Parallel()
		c := begin(t, false)
		require.True(t, c.Cancel(), "held until the turn's id is known")
		bodies, _ := exchange(c, `{"id":3,"result":{"turn":{"id":"t1"}}}`)
		require.True(t, c.Done(), "the session is over")
		requireBroken(t, bodies)
	})
}
