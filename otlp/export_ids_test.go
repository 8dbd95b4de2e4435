package otlp

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/agentharness/harness/internal/otlptest"
)

// TestTraceOfIsStable: the trace of a run's log is the same, ids and all,
// however often it is made, so that importing two exports of a run keeps
// one trace. Its ids were random: each export was a new trace. Another
// run's trace has other ids; a parent's trace id is kept.
func TestTraceOfIsStable(t *testing.T) {
	evs := otlptest.ReadEvents(t, "../testdata/claude/subagent-maxturns.golden.ndjson")
	of := func(info RunInfo) Traces {
		return TraceOf(info, true, evs, []KeyValue{Str("service.name", "harness")}, "test", "ok")
	}
	info := RunInfo{Run: evs[0].Run, Agent: "claude"}
	first, err := json.Marshal(of(info))
	if err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(of(info))
	if !bytes.Equal(first, again) {
		t.Fatalf("two traces of one log differ:\n%s\n%s", first, again)
	}

	tr := of(info)
	if len(tr.Spans) < 3 {
		t.Fatalf("%d spans: want the run's and its children", len(tr.Spans))
	}
	seen := map[SpanID]bool{}
	for _, s := range tr.Spans {
		if s.TraceID.IsZero() || s.SpanID.IsZero() || seen[s.SpanID] {
			t.Fatalf("span %q: trace %s span %s: want ids, each its own", s.Name, s.TraceID, s.SpanID)
		}
		seen[s.SpanID] = true
	}

	other := of(RunInfo{Run: evs[0].Run + "x", Agent: "claude"})
	if other.Spans[0].TraceID == tr.Spans[0].TraceID {
		t.Fatal("two runs share a trace id")
	}

	parent := SpanContext{TraceID: TraceID{1, 2, 3}, SpanID: SpanID{4, 5, 6}, Sampled: true}
	child := of(RunInfo{Run: evs[0].Run, Agent: "claude", Parent: parent})
	root := child.Spans[len(child.Spans)-1]
	if root.TraceID != parent.TraceID || root.ParentSpanID != parent.SpanID {
		t.Fatalf("run span in trace %s under %s: want the parent's %s", root.TraceID, root.ParentSpanID, parent.Traceparent())
	}
}
