package otlp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/agentharness/harness/event"
)

// TestTraceOfACutStreamClosesOpenCalls: a log cut with calls in flight
// (its harness died) ends their spans cancelled and synthetic, as the
// stream's own closing of them would, in the same order at every export:
// the calls left open were ended in a map's order, so two exports of one
// log differed.
func TestTraceOfACutStreamClosesOpenCalls(t *testing.T) {
	run := "run_01JCUTCALLS0000000000000000"
	evs := []event.Event{{V: 1, Type: event.TypeSessionStart, Run: run, Seq: 1, TS: 1000,
		Body: &event.SessionStart{Agent: "claude", Model: "claude-sonnet-4-5"}}}
	for i := range 8 {
		evs = append(evs, event.Event{V: 1, Type: event.TypeToolStart, Run: run, Seq: int64(i + 2), TS: int64(1001 + i),
			Body: &event.ToolStart{CallID: fmt.Sprintf("call_%d", i), Name: "Bash", Kind: event.KindShell, Input: json.RawMessage(`{}`)}})
	}
	first, err := json.Marshal(TraceOf(RunInfo{Run: run, Agent: "claude"}, false, evs, nil, "test", "lost"))
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		again, _ := json.Marshal(TraceOf(RunInfo{Run: run, Agent: "claude"}, false, evs, nil, "test", "lost"))
		if !bytes.Equal(first, again) {
			t.Fatalf("two traces of one log differ:\n%s\n%s", first, again)
		}
	}
	tr := TraceOf(RunInfo{Run: run, Agent: "claude"}, false, evs, nil, "test", "lost")
	if len(tr.Spans) != 9 {
		t.Fatalf("%d spans, want 8 calls and the run's", len(tr.Spans))
	}
	for _, s := range tr.Spans[:8] {
		got := map[string]any{}
		for _, kv := range s.Attributes {
			got[kv.Key] = kv.Value.Get()
		}
		if got["harness.tool.status"] != event.StatusCancelled || got["harness.tool.synthetic"] != true || s.Status.Code != StatusError {
			t.Errorf("call %v: status %v, synthetic %v, span status %d: want cancelled, synthetic, ERROR",
				got[AttrToolCallID], got["harness.tool.status"], got["harness.tool.synthetic"], s.Status.Code)
		}
	}
}

// TestTraceOfACutStreamCountsItsCalls: the run's span of a log with no
// result counts the calls the log has, as a result's stats would: it
// said harness.tool_calls 0 however many were made.
func TestTraceOfACutStreamCountsItsCalls(t *testing.T) {
	run := "run_01JCUTCALLS0000000000000001"
	evs := []event.Event{{V: 1, Type: event.TypeSessionStart, Run: run, Seq: 1, TS: 1000, Body: &event.SessionStart{Agent: "claude"}}}
	for i := range 3 {
		id := fmt.Sprintf("call_%d", i)
		evs = append(evs,
			event.Event{V: 1, Type: event.TypeToolStart, Run: run, Seq: int64(2*i + 2), TS: int64(1001 + i),
				Body: &event.ToolStart{CallID: id, Name: "Read", Kind: event.KindRead, Input: json.RawMessage(`{}`)}},
			event.Event{V: 1, Type: event.TypeToolEnd, Run: run, Seq: int64(2*i + 3), TS: int64(1001 + i),
				Body: &event.ToolEnd{CallID: id, Name: "Read", Kind: event.KindRead, Status: event.StatusOK}})
	}
	tr := TraceOf(RunInfo{Run: run, Agent: "claude"}, false, evs, nil, "test", "lost")
	root := tr.Spans[len(tr.Spans)-1]
	for _, kv := range root.Attributes {
		if kv.Key == "harness.tool_calls" {
			if got := kv.Value.Get(); got != int64(3) {
				t.Fatalf("harness.tool_calls = %v, want 3", got)
			}
			return
		}
	}
	t.Fatal("no harness.tool_calls on the run's span")
}
