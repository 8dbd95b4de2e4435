package event

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStreamTurnCost: a turn's cost is its part of the agent's running
// total where the agent reports one (a difference without float noise; 0
// when the total did not grow; unknown when it fell), else the sum of
// its usage events' costs, estimated as they were, else none; and the
// session's result has the agent's last total exactly, not a sum.
func TestStreamTurnCost(t *testing.T) {
	t.Parallel()
	s, c := newStream(t, false)
	turn := func(bodies ...Body) {
		t.Helper()
		require.NoError(t, s.Emit(append([]Body{&TurnStart{Prompt: "p"}}, bodies...)...))
	}
	turn(&Usage{InputTokens: 1, CostUSD: 0.05, CostEstimated: true}, &TurnEnd{Status: ResultSuccess}) // no total: the estimate
	turn(&Usage{InputTokens: 1, CostUSD: 0.5, CostEstimated: true}, &TurnEnd{Status: ResultSuccess, SessionCostUSD: Float(0.1)})
	turn(&TurnEnd{Status: ResultSuccess, SessionCostUSD: Float(0.3)}) // 0.3-0.1 in floats is 0.19999999999999998
	turn(&TurnEnd{Status: ResultCancelled, SessionCostUSD: Float(0.3)})
	turn(&TurnEnd{Status: ResultSuccess})                              // nothing known
	turn(&TurnEnd{Status: ResultSuccess, SessionCostUSD: Float(0.25)}) // fell
	turn(&TurnEnd{Status: ResultSuccess, SessionCostUSD: Float(0.3000000000000001)})
	r := s.Finish(Outcome{})
	require.NoError(t, CheckNDJSON(c.buf.Bytes()))
	var got []*float64
	var est []bool
	for _, ev := range c.evs {
		if e, ok := ev.Body.(*TurnEnd); ok {
			got, est = append(got, e.CostUSD), append(est, e.CostEstimated)
		}
	}
	require.Equal(t, []*float64{Float(0.05), Float(0.05), Float(0.2), Float(0), nil, nil, Float(0.05)}, got,
		"the growth since the cost counted before the turn")
	require.Equal(t, []bool{true, false, false, false, false, false, false}, est)
	require.Equal(t, Float(0.3000000000000001), r.CostUSD, "the agent's last total, as it said it")
	require.False(t, r.CostEstimated)
	require.Contains(t, c.buf.String(), `"cost_usd":0.2,`)
	require.NotContains(t, c.buf.String(), "session_cost", "never emitted")
}

// TestStreamSessionCostZero: an agent whose running total is 0 (a free
// model) gives the session's result cost_usd 0, as a run's result has
// it, not no cost at all.
func TestStreamSessionCostZero(t *testing.T) {
	t.Parallel()
	s, c := newStream(t, false)
	require.NoError(t, s.Emit(&TurnStart{Prompt: "p"}, &TurnEnd{Status: ResultSuccess, SessionCostUSD: Float(0)}))
	r := s.Finish(Outcome{})
	require.Equal(t, Float(0), r.CostUSD)
	require.False(t, r.CostEstimated)
	require.Contains(t, c.buf.String(), `"type":"result"`)
	require.Regexp(t, `"type":"result".*"cost_usd":0[,}]`, c.buf.String())
}

// TestUsageAllInput: every input token, summed without wrapping: counts
// near the largest int64 (garbage, but possible) stay positive.
func TestUsageAllInput(t *testing.T) {
	t.Parallel()
	require.Equal(t, int64(6), Usage{InputTokens: 1, CacheReadTokens: 2, CacheWriteTokens: 3, OutputTokens: 100}.AllInput())
	require.Equal(t, int64(math.MaxInt64), Usage{InputTokens: math.MaxInt64 - 1, CacheReadTokens: 5, CacheWriteTokens: 5}.AllInput())
}
