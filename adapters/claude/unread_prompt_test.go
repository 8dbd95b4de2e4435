package claude

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
)

// TestLivePromptNotRead: a prompt that a CLI no longer reading its stdin
// cannot take ends the session with the protocol error of a CLI that
// does not read, whether it waited for the turn before it (the error
// ends the line that ended that turn) or went at once (Prompt returns the
// bodies, with its error: it has no line, and expired, whose panic
// harness contains, is the timers'). The session was over without a word: no error,
// and the bodies Prompt made were thrown away. The error has a hint and
// the result the session's id, as Codex's and ACP's do.
func TestLivePromptNotRead(t *testing.T) {
	t.Parallel()
	const result = `{"type":"result","subtype":"success","is_error":false,"result":"hi","session_id":"s1","usage":{"input_tokens":7,"output_tokens":3}}`
	begin := func(t *testing.T) *Conversation {
		c := NewConversation()
		c.Converse(false)
		c.BoundSetup(time.Hour, func(...event.Body) { t.Error("expired is the timers' alone") })
		require.NoError(t, c.Begin(&adaptertest.FullStdin{N: 1}, adapters.Task{})) // the first prompt
		_, err := c.Prompt("one")
		require.NoError(t, err)
		adaptertest.Bodies(c, `{"type":"system","subtype":"init","session_id":"s1","model":"m"}`)
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
		require.Contains(t, e.Hint, "claude --version", "as Codex's and ACP's, it says what to look at")
		r, ok := bodies[len(bodies)-1].(*event.Result)
		require.True(t, ok, "%#v", bodies)
		require.Equal(t, "s1", r.SessionID, "the session the CLI named")
	}
	t.Run("queued", func(t *testing.T) {
		t.Parallel()
		c := begin(t)
		_, err := c.Prompt("two") // waits for the turn in flight
		require.NoError(t, err)
		bodies := adaptertest.Bodies(c, result)
		require.True(t, c.Done(), "the session is over")
		requireBroken(t, bodies)
	})
	t.Run("at-once", func(t *testing.T) {
		t.Parallel()
		c := begin(t)
		adaptertest.Bodies(c, result)
		ended, err := c.Prompt("two")
		require.Error(t, err)
		require.True(t, c.Done(), "the session is over")
		requireBroken(t, ended)
	})
}
