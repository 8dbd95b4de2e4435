package acp

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/event"
)

// TestUpdatesBetweenTurns: in a live session, what the agent sends with
// no turn in flight (after a prompt's answer, before the next prompt) is
// of no turn. Its tool call, thought and plan were mapped outside every
// turn_start … turn_end: the call stayed open into the next turn, which
// closed it cancelled as its own, held that turn's watchdog to its tool
// budget, and its thought became the next turn's reasoning. They are
// dropped, with one warning per gap, as Codex's app-server drops what
// belongs to no turn; the next turn has only its own.
func TestUpdatesBetweenTurns(t *testing.T) {
	var w bytes.Buffer
	c, bodies := conv(t, &w, false, adapters.FullAccess, nil, "")
	parse := func(lines ...[]byte) []event.Body {
		var out []event.Body
		for _, l := range lines {
			var known bool
			out, known = c.Parse(out, l)
			require.True(t, known, "%s", l)
		}
		bodies = append(bodies, out...)
		return out
	}
	id, start := turn(t, c, &w, "one")
	bodies = append(bodies, start...)
	parse(update(`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"sleep","kind":"execute","status":"in_progress"}`),
		chunk("first"), answer(id, `{"stopReason":"end_turn"}`))
	late := parse(update(`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed"}`))
	require.Len(t, late, 1, "late news of the turn's call, as within a turn")
	require.Contains(t, late[0].(*event.Warning).Message, "t1 completed after it had ended")
	between := parse(chunk("late"),
		update(`{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"musing"}}`),
		update(`{"sessionUpdate":"tool_call","toolCallId":"t9","title":"ls","kind":"execute","status":"in_progress","rawInput":{"command":"ls"}}`),
		update(`{"sessionUpdate":"plan","entries":[{"content":"x","priority":"high","status":"pending"}]}`),
		update(`{"sessionUpdate":"tool_call_update","toolCallId":"t9","status":"completed"}`))
	require.Len(t, between, 1, "one warning for the gap: %#v", between)
	warn, ok := between[0].(*event.Warning)
	require.True(t, ok, "%#v", between[0])
	require.Equal(t, event.WarnAgentWarning, warn.Code)
	require.Contains(t, warn.Message, "no turn")
	id, start = turn(t, c, &w, "two")
	bodies = append(bodies, start...)
	parse(chunk("hello"), answer(id, `{"stopReason":"end_turn"}`))
	between = parse(update(`{"sessionUpdate":"tool_call","toolCallId":"t10","title":"ls","kind":"execute","status":"in_progress"}`))
	require.Len(t, between, 1, "the next gap is told again")

	var evs []event.Event
	s := event.NewStream(event.StreamConfig{Sink: func(ev event.Event) { evs = append(evs, ev) }, Start: event.SessionStart{Agent: "fake"}})
	require.NoError(t, s.Emit(bodies...))
	res := s.Finish(event.Outcome{ExitCode: new(int)})
	require.NoError(t, event.Check(evs))
	require.EqualValues(t, 1, res.Stats.ToolCalls, "t1, and no call of no turn")
	inTurn := false
	for _, ev := range evs {
		switch b := ev.Body.(type) {
		case *event.TurnStart:
			inTurn = true
		case *event.TurnEnd:
			inTurn = false
			require.Equal(t, map[string]string{"turn_1": "first", "turn_2": "hello"}[b.TurnID], b.Text)
		case *event.ToolStart, *event.ToolEnd, *event.ReasoningDelta, *event.Reasoning, *event.TextDelta, *event.Message:
			require.True(t, inTurn, "seq %d %s outside every turn", ev.Seq, ev.Type)
		}
	}
}
