package otlp

import (
	"maps"
	"slices"
	"time"

	"github.com/agentharness/harness/event"
)

// The metrics, and their bucket boundaries as the conventions recommend.
var (
	tokenBounds    = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
	durationBounds = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
)

const (
	MetricTokenUsage = "gen_ai.client.token.usage"
	MetricDuration   = "gen_ai.client.operation.duration"
	MetricRuns       = "harness.runs"
)

// aggregate holds the cumulative metrics of every run so far, by
// attribute set.
type aggregate struct {
	tokens   map[string]*HistogramPoint
	duration map[string]*HistogramPoint
	runs     map[string]*SumPoint
}

func newAggregate() *aggregate {
	return &aggregate{tokens: map[string]*HistogramPoint{}, duration: map[string]*HistogramPoint{}, runs: map[string]*SumPoint{}}
}

// add counts one finished run: its tokens (input and output, by the
// conventions' meanings), its duration, its status.
func (a *aggregate) add(rec *Recorder, res *event.Result, root Span) {
	common := []KeyValue{Str(AttrOperation, OpInvokeAgent), Str(AttrProvider, rec.provider)}
	common = rec.appendModelAttrs(common)
	observe(a.tokens, tokenBounds, append(slices.Clone(common), Str(AttrTokenType, "input")), float64(InputTokens(res.Usage)))
	observe(a.tokens, tokenBounds, append(slices.Clone(common), Str(AttrTokenType, "output")), float64(res.Usage.OutputTokens))
	dur := common
	if et := rec.errorType(res); et != "" {
		dur = append(slices.Clone(common), Str(AttrErrorType, et))
	}
	observe(a.duration, durationBounds, dur, float64(root.End-root.Start)/1e9)
	attrs := []KeyValue{Str(AttrAgentName, rec.info.Agent), Str("harness.result.status", res.Status)}
	k := attrKey(attrs)
	p := a.runs[k]
	if p == nil {
		p = &SumPoint{Attributes: attrs}
		a.runs[k] = p
	}
	p.Value++
}

func observe(m map[string]*HistogramPoint, bounds []float64, attrs []KeyValue, v float64) {
	k := attrKey(attrs)
	p := m[k]
	if p == nil {
		p = &HistogramPoint{Attributes: attrs, Bounds: bounds, Buckets: make([]uint64, len(bounds)+1), Min: v, Max: v}
		m[k] = p
	}
	i, _ := slices.BinarySearch(bounds, v) // buckets are (prev, bound]
	p.Buckets[i]++
	p.Count++
	p.Sum += v
	p.Min, p.Max = min(p.Min, v), max(p.Max, v)
}

func attrKey(kvs []KeyValue) string {
	var b []byte
	for _, kv := range kvs {
		b = append(b, kv.Key...)
		b = append(b, 0)
		b = appendAnyValue(b, kv.Value)
		b = append(b, 0)
	}
	return string(b)
}

// metricsRequest is the cumulative metrics now, encoded; x.mu is held.
func (x *Exporter) metricsRequest() []byte {
	now := Nanos(time.Now().UnixNano())
	hist := func(m map[string]*HistogramPoint) []HistogramPoint {
		out := make([]HistogramPoint, 0, len(m))
		for _, k := range sortedPointKeys(m) {
			p := *m[k]
			p.Start, p.Time = x.start, now
			p.Buckets = slices.Clone(p.Buckets)
			out = append(out, p)
		}
		return out
	}
	var runs []SumPoint
	for _, k := range sortedPointKeys(x.metrics.runs) {
		p := *x.metrics.runs[k]
		p.Start, p.Time = x.start, now
		runs = append(runs, p)
	}
	return Metrics{Resource: x.cfg.Resource, Scope: x.scope, Metrics: []Metric{
		{Name: MetricTokenUsage, Description: "Number of input and output tokens used.", Unit: "{token}", Histogram: hist(x.metrics.tokens)},
		{Name: MetricDuration, Description: "GenAI operation duration.", Unit: "s", Histogram: hist(x.metrics.duration)},
		{Name: MetricRuns, Description: "Runs by agent and result status.", Unit: "{run}", Sum: runs},
	}}.Protobuf()
}

func sortedPointKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
