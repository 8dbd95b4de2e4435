package claude

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
)

// TestLiveAnswerNotRead: the caller's answer (or the ask deadline's
// denial) that a CLI no longer reading its stdin cannot take ends the
// session with the protocol error an answer written at once gives it,
// in the bodies Answer returns (it comes from no line; expired, whose
// panic harness contains, is the timers'), rather than leave the CLI to
// the watchdogs.
func TestLiveAnswerNotRead(t *testing.T) {
	t.Parallel()
	c := NewConversation()
	c.Converse(true)
	c.BoundSetup(time.Hour, func(...event.Body) { t.Error("expired is the timers' alone") })
	require.NoError(t, c.Begin(&adaptertest.FullStdin{N: 2}, adapters.Task{})) // set_permission_mode, the prompt
	_, err := c.Prompt("p")
	require.NoError(t, err)
	bodies := adaptertest.Bodies(c, `{"type":"system","subtype":"init","session_id":"s1","model":"m"}`,
		`{"type":"control_request","request_id":"r1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"ls"},"tool_use_id":"t1"}}`)
	require.IsType(t, &event.PermissionRequest{}, bodies[len(bodies)-1])
	answered, ended := c.Answer("t1", true)
	require.True(t, answered)
	require.True(t, c.Done(), "the session is over")
	require.Len(t, ended, 2)
	e := ended[0].(*event.Error)
	require.True(t, e.Fatal)
	require.Equal(t, event.ClassProtocol, e.Class)
	require.Contains(t, e.Message, "does not read")
	require.IsType(t, &event.Result{}, ended[1])
}
