package otlp

import (
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/agentharness/harness/event"
)

// TestRunSpanEventsAreCapped: the run's span keeps at most
// maxSpanEvents warnings and errors, the latest (the fatal error among
// them), and counts the rest in dropped_events_count. It kept every one:
// an agent that reported errors without end grew the span without bound,
// in memory and past the 256 MiB a span's padded length can say, which
// the encoder then wrote wrong.
func TestRunSpanEventsAreCapped(t *testing.T) {
	run := "run_01JMANYERRORS0000000000000"
	evs := []event.Event{{V: 1, Type: event.TypeSessionStart, Run: run, Seq: 1, TS: 1000, Body: &event.SessionStart{Agent: "claude"}}}
	const n = 2 * maxSpanEvents
	for i := range n {
		evs = append(evs, event.Event{V: 1, Type: event.TypeError, Run: run, Seq: int64(i + 2), TS: int64(1001 + i),
			Body: &event.Error{Code: "agent_error", Message: fmt.Sprintf("retry %d", i), Fatal: i == n-1}})
	}
	evs = append(evs, event.Event{V: 1, Type: event.TypeResult, Run: run, Seq: n + 2, TS: 1001 + n,
		Body: &event.Result{Status: event.ResultError}})
	tr := TraceOf(RunInfo{Run: run, Agent: "claude"}, false, evs, nil, "test", "")
	root := tr.Spans[len(tr.Spans)-1]
	if len(root.Events) != maxSpanEvents || root.DroppedEvents != n-maxSpanEvents {
		t.Fatalf("%d events, %d dropped: want %d, %d", len(root.Events), root.DroppedEvents, maxSpanEvents, n-maxSpanEvents)
	}
	last := spanAttrs(Span{Attributes: root.Events[len(root.Events)-1].Attributes})
	if last["harness.error.fatal"] != true {
		t.Errorf("the last event kept is %v, want the fatal error", last)
	}
	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalProto(tr.Protobuf()); err != nil {
		t.Fatal(err)
	}
	s := req.Traces().ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	if s.Events().Len() != maxSpanEvents || s.DroppedEventsCount() != n-maxSpanEvents {
		t.Errorf("on the wire: %d events, %d dropped", s.Events().Len(), s.DroppedEventsCount())
	}
	js, _ := tr.MarshalJSON()
	if want := fmt.Sprintf(`"droppedEventsCount":%d`, n-maxSpanEvents); !strings.Contains(string(js), want) {
		t.Errorf("the JSON has no %s", want)
	}
}
