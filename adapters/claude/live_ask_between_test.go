package claude

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/adaptertest"
)

// TestLiveAskBetweenTurns: a can_use_tool with no turn in progress waits
// for no turn of the caller's: it is denied at once, as one not asked,
// and nothing waits for Answer (which would keep the session's idle
// watchdog off in the next turn).
func TestLiveAskBetweenTurns(t *testing.T) {
	t.Parallel()
	c := NewConversation()
	c.Converse(true)
	var in bytes.Buffer
	require.NoError(t, c.Begin(&in, adapters.Task{}))
	_, err := c.Prompt("one")
	require.NoError(t, err)
	adaptertest.Bodies(c, `{"type":"system","subtype":"init","session_id":"s1","model":"m"}`,
		`{"type":"result","subtype":"success","is_error":false,"result":"hi","session_id":"s1","usage":{"input_tokens":7,"output_tokens":3}}`)
	bodies := adaptertest.Bodies(c, `{"type":"control_request","request_id":"r1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"ls"},"tool_use_id":"t1"}}`)
	require.Empty(t, bodies, "no permission_request")
	require.False(t, c.Asking("t1"))
	require.Contains(t, in.String(), `"behavior":"deny"`)
}
