package claude

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/adaptertest"
	"github.com/agentharness/harness/event"
)

// TestLivePromptCancelledBeforeStart: a prompt the CLI reports
// cancelled (command_lifecycle) before it started it gets no turn, and
// harness waits for it no more: the next prompt goes, and a session
// ended then is done, not held busy until the idle watchdog fires.
func TestLivePromptCancelledBeforeStart(t *testing.T) {
	t.Parallel()
	const (
		init1  = `{"type":"system","subtype":"init","session_id":"s1","model":"m"}`
		result = `{"type":"result","subtype":"success","is_error":false,"result":"hi","session_id":"s1","usage":{"input_tokens":7,"output_tokens":3}}`
	)
	c := NewConversation()
	c.prefix = testPrefix
	c.Converse(false)
	var in bytes.Buffer
	require.NoError(t, c.Begin(&in, adapters.Task{}))
	_, err := c.Prompt("one")
	require.NoError(t, err)
	adaptertest.Bodies(c, `{"type":"command_lifecycle","command_uuid":"`+c.uuid(1)+`","state":"started"}`, init1, result)
	_, err = c.Prompt("two") // written: the CLI owes it its turn
	require.NoError(t, err)
	_, err = c.Prompt("three") // held behind it
	require.NoError(t, err)
	require.Equal(t, 2, strings.Count(in.String(), `"type":"user"`))

	bodies := adaptertest.Bodies(c, `{"type":"command_lifecycle","command_uuid":"`+c.uuid(2)+`","state":"cancelled"}`)
	require.Equal(t, 3, strings.Count(in.String(), `"type":"user"`), "the next prompt went")
	require.Len(t, bodies, 1)
	require.Equal(t, event.WarnAgentWarning, bodies[0].(*event.Warning).Code)
	bodies = adaptertest.Bodies(c, `{"type":"command_lifecycle","command_uuid":"`+c.uuid(3)+`","state":"cancelled"}`)
	require.Len(t, bodies, 1)
	require.False(t, c.PendingStart(), "no prompt waits for its turn")
	require.False(t, c.Busy(), "the CLI owes nothing")
	c.End()
	require.True(t, c.Done())
}
