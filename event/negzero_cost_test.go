package event

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNegativeZeroCostIsZero: an agent's cost of -0 (Claude Code's
// total_cost_usd: -0, a usage event's cost -0) is no cost to warn about,
// but it is 0: the stream and the result print "cost_usd":0, never -0,
// which a reader comparing costs as text would take for another number.
func TestNegativeZeroCostIsZero(t *testing.T) {
	t.Parallel()
	negZero := math.Copysign(0, -1)
	s, cap := newStream(t, false)
	require.NoError(t, s.Line(StreamStdout, []byte(`{"type":"init"}`), false, []Body{&SessionStart{SessionID: "s1"}}))
	require.NoError(t, s.Line(StreamStdout, []byte(`{"type":"usage"}`), false, []Body{&Usage{OutputTokens: 1, CostUSD: negZero}}))
	require.NoError(t, s.Line(StreamStdout, []byte(`{"type":"result"}`), false,
		[]Body{&Result{Status: ResultSuccess, CostUSD: Float(negZero)}}))
	r := s.Finish(Outcome{NoProcess: true})
	out := cap.buf.String()
	require.NoError(t, CheckNDJSON(cap.buf.Bytes()), "%s", out)
	require.NotContains(t, out, "-0", "a cost of -0 printed as such")
	require.False(t, math.Signbit(r.Usage.CostUSD))
	require.NotNil(t, r.CostUSD)
	require.False(t, math.Signbit(*r.CostUSD))
	for _, ev := range cap.evs {
		if w, ok := ev.Body.(*Warning); ok {
			t.Errorf("warning %q for a cost of -0", w.Code)
		}
	}
	require.True(t, strings.Contains(out, `"cost_usd":0`), "%s", out)
}
