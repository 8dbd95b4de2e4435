package atif_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/atif"
	"github.com/agentharness/harness/atif/atiftest"
	"github.com/agentharness/harness/event"
)

// TestReusedOpenCallID: a log whose second tool_start reuses the id of a
// call still open (hand-made, or not written by harness's stream, which
// drops such a start) gives each call its own step, as Harbor's models
// refuse a step that names a tool_call_id twice: the first call's result
// is cancelled and synthetic (marked id_reused: no tool_end of the
// stream), as the otlp export ends its span, and the tool_end is the
// second's. The step held both calls under one id, and the tool_end was
// the first's.
func TestReusedOpenCallID(t *testing.T) {
	run := "run_reused"
	evs := []event.Event{
		{V: 1, Type: event.TypeSessionStart, Run: run, Seq: 1, TS: 1000, Body: &event.SessionStart{Agent: "claude"}},
		{V: 1, Type: event.TypeToolStart, Run: run, Seq: 2, TS: 1001,
			Body: &event.ToolStart{CallID: "call_1", Name: "Bash", Kind: event.KindShell, Input: json.RawMessage(`{}`)}},
		{V: 1, Type: event.TypeToolStart, Run: run, Seq: 3, TS: 1002,
			Body: &event.ToolStart{CallID: "call_1", Name: "Read", Kind: event.KindRead, Input: json.RawMessage(`{}`)}},
		{V: 1, Type: event.TypeToolEnd, Run: run, Seq: 4, TS: 1003,
			Body: &event.ToolEnd{CallID: "call_1", Name: "Read", Kind: event.KindRead, Status: event.StatusOK, Output: "read"}},
		{V: 1, Type: event.TypeResult, Run: run, Seq: 5, TS: 1004,
			Body: &event.Result{Status: event.ResultSuccess, Stats: event.Stats{ToolCalls: 2}}},
	}
	tr := atif.FromEvents(evs, atif.Meta{Run: run})
	data, err := atif.Marshal(tr)
	require.NoError(t, err)
	_, err = atiftest.Validate(data)
	require.NoError(t, err)
	require.NoError(t, atif.Check(tr, evs))
	type call struct{ name, status, content string }
	var got []call
	for _, s := range tr.Steps {
		for _, c := range s.ToolCalls {
			require.NotNil(t, s.Observation, "step %d", s.StepID)
			for _, r := range s.Observation.Results {
				if r.SourceCallID == c.ToolCallID {
					got = append(got, call{c.FunctionName, r.Extra["status"].(string), r.Content})
				}
			}
		}
	}
	require.Equal(t, []call{{"Bash", event.StatusCancelled, ""}, {"Read", event.StatusOK, "read"}}, got)

	dir := t.TempDir()
	writeLog(t, dir, run, evs)
	streamed, whole := exportBoth(t, dir, run)
	require.Equal(t, whole, streamed)
}

// TestValidateRefusesAnIDTwiceInAStep: a step naming a tool_call_id
// twice is refused, as Harbor's models refuse it (an observation could
// not say which call it is of).
func TestValidateRefusesAnIDTwiceInAStep(t *testing.T) {
	call := atif.ToolCall{ToolCallID: "call_1", FunctionName: "Bash", Arguments: json.RawMessage(`{}`)}
	tr := &atif.Trajectory{Steps: []atif.Step{{StepID: 1, Source: "agent", ToolCalls: []atif.ToolCall{call, call}}}}
	require.ErrorContains(t, atif.Validate(tr), `"call_1" twice`)
}
