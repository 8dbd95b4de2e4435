package event

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNativeSpanDuration: in parse (NoProcess) the span of the lines'
// timestamps is the run's duration where the agent's terminal event gave
// none or never came; the agent's own duration, 0 included, comes first,
// and a live run keeps its wall clock. Without it a cut capture reported
// how long the parse took.
func TestNativeSpanDuration(t *testing.T) {
	t.Parallel()
	span := func(ms int64) *int64 { return &ms }
	for _, tc := range []struct {
		name   string
		result *Result // the agent's terminal report; nil: cut before it
		out    Outcome
		want   int64 // -1: the stream's clock (1 ms a reading), not the span
	}{
		{"cut", nil, Outcome{NoProcess: true, NativeSpanMS: span(2500)}, 2500},
		{"cut-one-millisecond", nil, Outcome{NoProcess: true, NativeSpanMS: span(0)}, 0},
		{"result-without-duration", &Result{Status: ResultSuccess}, Outcome{NoProcess: true, NativeSpanMS: span(2500)}, 2500},
		{"agent-duration-first", &Result{Status: ResultSuccess, DurationMS: 900}, Outcome{NoProcess: true, NativeSpanMS: span(2500)}, 900},
		{"agent-zero-first", &Result{Status: ResultSuccess, DurationNative: true}, Outcome{NoProcess: true, NativeSpanMS: span(2500)}, 0},
		{"live-keeps-wall-clock", nil, Outcome{NativeSpanMS: span(2500)}, -1},
		{"no-span", nil, Outcome{NoProcess: true}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newStream(t, false)
			require.NoError(t, s.Line(StreamStdout, []byte(`{"type":"init"}`), false, []Body{&SessionStart{SessionID: "s1"}}))
			if tc.result != nil {
				require.NoError(t, s.Line(StreamStdout, []byte(`{"type":"result"}`), false, []Body{tc.result}))
			}
			r := s.Finish(tc.out)
			if tc.want >= 0 {
				require.Equal(t, tc.want, r.DurationMS)
				return
			}
			require.Positive(t, r.DurationMS)
			require.Less(t, r.DurationMS, int64(100))
		})
	}
}
