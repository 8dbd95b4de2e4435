package otlp

import (
	"testing"

	"github.com/agentharness/harness/event"
)

// TestTraceOfTwoResults: a log with two results (not harness's stream,
// which has one, last) gives one run's span, ended and described by the
// last result, as the session list and the ATIF export take it, each
// attribute once: a second result prepended its attributes to the
// first's, so the span had every key twice, and kept the first's ERROR.
func TestTraceOfTwoResults(t *testing.T) {
	run := "run_01JTWORESULTS0000000000000"
	evs := []event.Event{
		{V: 1, Type: event.TypeSessionStart, Run: run, Seq: 1, TS: 1000, Body: &event.SessionStart{Agent: "claude", AgentVersion: "2.0"}},
		{V: 1, Type: event.TypeResult, Run: run, Seq: 2, TS: 1001, Body: &event.Result{Status: event.ResultError}},
		{V: 1, Type: event.TypeResult, Run: run, Seq: 3, TS: 1002, Body: &event.Result{Status: event.ResultSuccess}},
	}
	tr := TraceOf(RunInfo{Run: run, Agent: "claude"}, false, evs, nil, "test", "")
	if len(tr.Spans) != 1 {
		t.Fatalf("%d spans, want the run's", len(tr.Spans))
	}
	root := tr.Spans[0]
	seen := map[string]bool{}
	for _, kv := range root.Attributes {
		if seen[kv.Key] {
			t.Errorf("attribute %s twice", kv.Key)
		}
		seen[kv.Key] = true
	}
	got := spanAttrs(root)
	if got["harness.result.status"] != event.ResultSuccess || got[AttrErrorType] != nil || root.Status.Code != StatusUnset ||
		root.End != ms(1002) || got[AttrAgentVersion] != "2.0" || got["harness.seq.last"] != int64(3) {
		t.Errorf("run's span: %v, status %+v, end %d: want the last result's (success, no error, ended at 1002), the agent's version",
			got, root.Status, root.End)
	}
}
