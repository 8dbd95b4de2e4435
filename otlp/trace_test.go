package otlp

import (
	"testing"

	"github.com/agentharness/harness/event"
	"github.com/agentharness/harness/internal/otlptest"
)

// TestTraceOfACutStream: the trace of a log with no result (its harness
// died, or the run is still going) gives the run's span the usage and
// cost its usage events add up to, as a result's would be: the chat
// spans' sum, not zero.
func TestTraceOfACutStream(t *testing.T) {
	evs := otlptest.ReadEvents(t, "../testdata/claude/edits.golden.ndjson")
	res, ok := evs[len(evs)-1].Body.(*event.Result)
	if !ok || res.Usage.IsZero() {
		t.Fatal("the golden's last event is not a result with usage")
	}
	evs = evs[:len(evs)-1]
	for i, ev := range evs {
		if u, ok := ev.Body.(*event.Usage); ok {
			c := *u
			c.CostUSD, c.CostEstimated = 0.25, true
			evs[i].Body = &c
		}
	}
	tr := TraceOf(RunInfo{Run: evs[0].Run, Agent: "claude"}, false, evs, nil, "test", "lost")
	root := tr.Spans[len(tr.Spans)-1]
	if root.ParentSpanID != (SpanID{}) {
		t.Fatalf("the last span %q is not the run's", root.Name)
	}
	got := map[string]any{}
	for _, kv := range root.Attributes {
		got[kv.Key] = kv.Value.Get()
	}
	want := map[string]any{AttrInputTokens: InputTokens(res.Usage), AttrOutputTokens: res.Usage.OutputTokens,
		AttrCacheRead: res.Usage.CacheReadTokens, "harness.result.status": "lost",
		"harness.cost_usd": 1.25, "harness.cost_estimated": true} // five usage events
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
}
