package acp

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/event"
)

// TestRefusedBetweenTurnsOpensNoCall: in a live session under
// --permissions ask or read-only, a session/request_permission refused
// with no turn in flight opens no tool call: one opened there was of no
// turn (outside every turn_start/turn_end), held the per-tool budget in
// place of the idle watchdog from the next turn's start, and was ended
// denied by the agent's first update in that turn, as if the turn's.
// The refusal still goes to the agent.
func TestRefusedBetweenTurnsOpensNoCall(t *testing.T) {
	for name, tc := range map[string]struct {
		ask         bool
		permissions string
	}{
		"ask":       {true, adapters.FullAccess},
		"read-only": {false, adapters.ReadOnly},
	} {
		t.Run(name, func(t *testing.T) {
			var w bytes.Buffer
			c, _ := conv(t, &w, tc.ask, tc.permissions, nil, "")
			id, _ := turn(t, c, &w, "one")
			c.Parse(nil, answer(id, `{"stopReason":"end_turn"}`))
			w.Reset()
			out, _ := c.Parse(nil, []byte(`{"jsonrpc":"2.0","id":900,"method":"session/request_permission","params":{"sessionId":"s1",`+
				`"toolCall":{"toolCallId":"p1","kind":"execute","title":"rm -rf x"},"options":[{"optionId":"y","kind":"allow_once"},{"optionId":"n","kind":"reject_once"}]}}`))
			require.Contains(t, w.String(), `"optionId":"n"`, "refused")
			id, start := turn(t, c, &w, "two")
			out = append(out, start...)
			out, _ = c.Parse(out, chunk("hello"))
			out, _ = c.Parse(out, answer(id, `{"stopReason":"end_turn"}`))
			for _, b := range out {
				require.NotContains(t, []event.Type{event.TypeToolStart, event.TypeToolEnd}, b.EventType(), "a call of no turn: %#v", b)
			}
		})
	}
}
