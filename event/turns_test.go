package event

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// checkTurns wraps bodies in a valid envelope and checks them, the
// result's usage and stats filled in as the stream would.
func checkTurns(status string, bodies ...Body) error {
	evs := []Event{{Body: &SessionStart{Agent: "a", Argv: []string{}}}}
	r := &Result{Status: status}
	for _, b := range bodies {
		evs = append(evs, Event{Body: b})
		switch v := b.(type) {
		case *Usage:
			r.Usage.Add(*v)
		case *ToolStart:
			r.Stats.ToolCalls++
		}
	}
	evs = append(evs, Event{Body: r})
	for i := range evs {
		evs[i].V, evs[i].Run, evs[i].Seq, evs[i].TS, evs[i].Type = Version, testRun, int64(i+1), 1, evs[i].Body.EventType()
	}
	r.Stats.Events = int64(len(evs))
	return Check(evs)
}

func TestCheckTurns(t *testing.T) {
	t.Parallel()
	u1, u2 := &Usage{InputTokens: 10, OutputTokens: 2}, &Usage{InputTokens: 5, OutputTokens: 1, CacheReadTokens: 7}
	start := func(id string) *TurnStart { return &TurnStart{TurnID: id, Prompt: "p"} }
	end := func(id string, u Usage) *TurnEnd { return &TurnEnd{TurnID: id, Status: ResultSuccess, Usage: u} }
	tool := &ToolStart{CallID: "c", Name: "Bash", Kind: KindShell, Input: json.RawMessage("{}")}
	toolEnd := &ToolEnd{CallID: "c", Name: "Bash", Kind: KindShell, Status: StatusOK}
	require.NoError(t, checkTurns(ResultSuccess, start("turn_1"), u1, tool, toolEnd, end("turn_1", *u1), start("turn_2"), u2, end("turn_2", *u2)))
	require.NoError(t, checkTurns(ResultSuccess), "a session with no turn")
	own := &TurnStart{TurnID: "agent_1", Origin: OriginAgent}
	require.NoError(t, checkTurns(ResultSuccess, start("turn_1"), end("turn_1", Usage{}), own, u1, end("agent_1", *u1)),
		"a turn the agent began by itself")
	cases := map[string][]Body{
		"turn-never-ends":        {start("turn_1"), u1},
		"end-without-start":      {end("turn_1", Usage{})},
		"end-of-other-turn":      {start("turn_1"), end("turn_2", Usage{})},
		"two-ends":               {start("turn_1"), end("turn_1", Usage{}), end("turn_1", Usage{})},
		"overlap":                {start("turn_1"), start("turn_2"), end("turn_2", Usage{}), end("turn_1", Usage{})},
		"id-reused":              {start("turn_1"), end("turn_1", Usage{}), start("turn_1"), end("turn_1", Usage{})},
		"turn-usage-short":       {start("turn_1"), u1, u2, end("turn_1", *u1)},
		"turn-usage-over":        {start("turn_1"), u1, end("turn_1", Usage{InputTokens: 11, OutputTokens: 2})},
		"usage-between":          {start("turn_1"), u1, end("turn_1", *u1), u2},
		"tool-outlives-turn":     {start("turn_1"), tool, end("turn_1", Usage{}), toolEnd},
		"bad-status":             {start("turn_1"), &TurnEnd{TurnID: "turn_1", Status: "done"}},
		"permission-no-call":     {start("turn_1"), &PermissionRequest{Tool: "Bash", Kind: KindShell}, end("turn_1", Usage{})},
		"cancelled-answers":      {start("turn_1"), &TurnEnd{TurnID: "turn_1", Status: ResultCancelled, Text: "half"}},
		"result-not-last-answer": {start("turn_1"), &TurnEnd{TurnID: "turn_1", Status: ResultSuccess, Text: "done"}},
		"unknown-origin":         {&TurnStart{TurnID: "turn_1", Origin: "user"}, end("turn_1", Usage{})},
	}
	for name, bodies := range cases {
		require.Error(t, checkTurns(ResultSuccess, bodies...), name)
	}
}

// TestStreamTurns: the Stream numbers turns, makes each turn's usage add
// up (one usage event for the agent's turn total), closes a turn's open
// tool calls at its end, drops an end of no turn, and closes a turn left
// open when the session finishes.
func TestStreamTurns(t *testing.T) {
	t.Parallel()
	s, c := newStream(t, false)
	require.NoError(t, s.Emit(&SessionStart{SessionID: "sid"}))
	require.NoError(t, s.Emit(&TurnEnd{Status: ResultSuccess}), "an answer to a turn never sent")
	require.NoError(t, s.Emit(&TurnStart{Prompt: "one"}, &Message{Role: RoleAssistant, Text: "first"},
		&TurnEnd{Status: ResultSuccess, Usage: Usage{InputTokens: 100, OutputTokens: 10}}))
	require.NoError(t, s.Emit(&TurnStart{Prompt: "two"}, &Usage{InputTokens: 40, OutputTokens: 4},
		&ToolStart{CallID: "c", Name: "Bash", Kind: KindShell, Input: json.RawMessage("{}")},
		&TurnEnd{Status: ResultCancelled, Usage: Usage{InputTokens: 50, OutputTokens: 5}}))
	require.NoError(t, s.Emit(&TurnStart{Prompt: "three"}, &TextDelta{Text: "cut"}))
	require.True(t, s.InTurn())
	require.NoError(t, s.Emit(&Result{Status: ResultSuccess}))
	r := s.Finish(Outcome{Status: ResultTimeout})
	require.NoError(t, CheckNDJSON(c.buf.Bytes()))
	require.Equal(t, []Type{TypeSessionStart, TypeTurnStart, TypeMessage, TypeUsage, TypeTurnEnd,
		TypeTurnStart, TypeUsage, TypeToolStart, TypeToolEnd, TypeUsage, TypeTurnEnd,
		TypeTurnStart, TypeTextDelta, TypeTurnEnd, TypeResult}, c.types())
	first := c.evs[4].Body.(*TurnEnd)
	require.Equal(t, "turn_1", first.TurnID)
	require.Equal(t, "first", first.Text)
	require.Equal(t, int64(100), first.Usage.InputTokens)
	second := c.evs[10].Body.(*TurnEnd)
	require.Equal(t, "turn_2", second.TurnID)
	require.Equal(t, StatusCancelled, c.evs[8].Body.(*ToolEnd).Status)
	require.Equal(t, Usage{InputTokens: 10, OutputTokens: 1}, *c.evs[9].Body.(*Usage), "the rest of the turn's total")
	third := c.evs[13].Body.(*TurnEnd)
	require.Equal(t, ResultTimeout, third.Status)
	require.True(t, third.Synthetic)
	require.Empty(t, third.Text, "a turn cut off has no answer")
	require.Equal(t, int64(150), r.Usage.InputTokens)
	require.Equal(t, "sid", r.SessionID)
}

// TestStreamTurnText: a turn that did not complete has no answer, even
// when the agent said something before it was stopped or its own end
// carries text; one the agent completed, even failed, answers by the rules
// of result.text; the session's result.text is its last turn's answer.
func TestStreamTurnText(t *testing.T) {
	t.Parallel()
	said := func() Body { return &Message{Role: RoleAssistant, Text: "working on it"} }
	for _, tc := range []struct {
		name string
		end  *TurnEnd
		want string
	}{
		{"success", &TurnEnd{Status: ResultSuccess}, "working on it"},
		{"error", &TurnEnd{Status: ResultError}, "working on it"},
		{"cancelled", &TurnEnd{Status: ResultCancelled}, ""},
		{"cancelled-agent-text", &TurnEnd{Status: ResultCancelled, Text: "interrupted"}, ""},
		{"timeout", &TurnEnd{Status: ResultTimeout}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, c := newStream(t, false)
			require.NoError(t, s.Emit(&SessionStart{SessionID: "sid"}))
			require.NoError(t, s.Emit(&TurnStart{Prompt: "one"}, &Message{Role: RoleAssistant, Text: "first"}, &TurnEnd{Status: ResultSuccess}))
			require.NoError(t, s.Emit(&TurnStart{Prompt: "two"}, said(), tc.end))
			r := s.Finish(Outcome{Status: ResultSuccess})
			require.NoError(t, CheckNDJSON(c.buf.Bytes()))
			require.Equal(t, tc.want, c.evs[len(c.evs)-2].Body.(*TurnEnd).Text)
			require.Equal(t, tc.want, r.Text, "the session's answer is its last turn's")
		})
	}
}
