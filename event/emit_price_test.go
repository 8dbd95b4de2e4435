package event

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEmitPricesWhatNoCallerSaw: a usage given to Emit (a parser's Flush:
// Claude's call cut off by the end of the output) is priced by Price when
// it has no cost; one with a cost, what comes through Line (the caller
// prices those first), and a result's usage (its cost is the sum of the
// usage events') are not. Emit's usage went unpriced, and the run's cost
// left it out.
func TestEmitPricesWhatNoCallerSaw(t *testing.T) {
	t.Parallel()
	var priced []Usage
	var sent []Event
	s := NewStream(StreamConfig{Run: testRun, Sink: func(ev Event) { sent = append(sent, ev) },
		Price: func(u *Usage) {
			priced = append(priced, *u)
			u.CostUSD, u.CostEstimated = float64(u.InputTokens)/100, true
		}})
	require.NoError(t, s.Line(StreamStdout, []byte(`{}`), false, []Body{&SessionStart{Model: "m"}, &Usage{InputTokens: 1}}))
	require.NoError(t, s.Emit(&Usage{InputTokens: 2, CostUSD: 0.5}, &Usage{InputTokens: 3}))
	require.NoError(t, s.Emit(&Result{Status: ResultError, Usage: Usage{InputTokens: 6}}))
	r := s.Finish(Outcome{NoProcess: true})
	require.Equal(t, []Usage{{InputTokens: 3}}, priced)
	var costs []float64
	for _, ev := range sent {
		if u, ok := ev.Body.(*Usage); ok {
			costs = append(costs, u.CostUSD)
		}
	}
	require.Equal(t, []float64{0, 0.5, 0.03}, costs, "the line's usage is the caller's to price")
	require.True(t, r.CostEstimated)
	require.NotNil(t, r.CostUSD)
	require.InDelta(t, 0.53, *r.CostUSD, 1e-12, "the usage events' costs, summed")
}
