package otlp

import (
	"encoding/json"
	"testing"

	"github.com/agentharness/harness/event"
)

// spanAttrs is a span's attributes by key.
func spanAttrs(s Span) map[string]any {
	got := map[string]any{}
	for _, kv := range s.Attributes {
		got[kv.Key] = kv.Value.Get()
	}
	return got
}

// TestTraceOfAReusedOpenCallID: a log whose second tool_start reuses the
// id of a call still open (hand-made, or not written by harness's stream,
// which drops such a start) gives a span for each call: the first ends
// where the second starts, cancelled and synthetic, as a call the stream
// closes; the tool_end ends the second. The first call's span was
// dropped.
func TestTraceOfAReusedOpenCallID(t *testing.T) {
	run := "run_01JREUSEDCALL00000000000000"
	evs := []event.Event{
		{V: 1, Type: event.TypeSessionStart, Run: run, Seq: 1, TS: 1000, Body: &event.SessionStart{Agent: "claude"}},
		{V: 1, Type: event.TypeToolStart, Run: run, Seq: 2, TS: 1001,
			Body: &event.ToolStart{CallID: "call_1", Name: "Bash", Kind: event.KindShell, Input: json.RawMessage(`{}`)}},
		{V: 1, Type: event.TypeToolStart, Run: run, Seq: 3, TS: 1002,
			Body: &event.ToolStart{CallID: "call_1", Name: "Read", Kind: event.KindRead, Input: json.RawMessage(`{}`)}},
		{V: 1, Type: event.TypeToolEnd, Run: run, Seq: 4, TS: 1003,
			Body: &event.ToolEnd{CallID: "call_1", Name: "Read", Kind: event.KindRead, Status: event.StatusOK}},
		{V: 1, Type: event.TypeResult, Run: run, Seq: 5, TS: 1004,
			Body: &event.Result{Status: event.ResultSuccess, Stats: event.Stats{ToolCalls: 2}}},
	}
	tr := TraceOf(RunInfo{Run: run, Agent: "claude"}, false, evs, nil, "test", "")
	if len(tr.Spans) != 3 {
		t.Fatalf("%d spans, want the two calls' and the run's", len(tr.Spans))
	}
	first, second := spanAttrs(tr.Spans[0]), spanAttrs(tr.Spans[1])
	if first[AttrToolName] != "Bash" || first["harness.tool.status"] != event.StatusCancelled ||
		first["harness.tool.synthetic"] != true || tr.Spans[0].End != ms(1002) {
		t.Errorf("first call: %v, end %d: want Bash, cancelled, synthetic, ended at the second's start", first, tr.Spans[0].End)
	}
	if second[AttrToolName] != "Read" || second["harness.tool.status"] != event.StatusOK || tr.Spans[1].End != ms(1003) {
		t.Errorf("second call: %v, end %d: want Read, ok, ended at its tool_end", second, tr.Spans[1].End)
	}
	if tr.Spans[0].SpanID == tr.Spans[1].SpanID {
		t.Error("the two calls' spans have one id")
	}
}
