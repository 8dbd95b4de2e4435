package acp

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/event"
)

// TestAskBetweenTurns: with permissions ask, a session/request_permission
// that comes with no turn in flight waits for no turn of the caller's: it
// is refused at once, as over Claude Code and Codex, and nothing waits
// for Answer. It was a permission_request whose ask deadline kept the
// session's idle watchdog off in the next turn.
func TestAskBetweenTurns(t *testing.T) {
	var w bytes.Buffer
	c, _ := conv(t, &w, true, adapters.FullAccess, nil, "")
	id, _ := turn(t, c, &w, "one")
	c.Parse(nil, answer(id, `{"stopReason":"end_turn"}`))
	w.Reset()
	out, _ := c.Parse(nil, []byte(`{"jsonrpc":"2.0","id":900,"method":"session/request_permission","params":{"sessionId":"s1",`+
		`"toolCall":{"toolCallId":"p1","kind":"execute"},"options":[{"optionId":"y","kind":"allow_once"},{"optionId":"n","kind":"reject_once"}]}}`))
	for _, b := range out {
		require.NotEqual(t, event.TypePermissionRequest, b.EventType(), "no turn to ask in: %#v", out)
	}
	require.Contains(t, w.String(), `"optionId":"n"`, "refused")
	answered, _ := c.Answer("p1", true)
	require.False(t, answered, "nothing waits for the caller")
}
