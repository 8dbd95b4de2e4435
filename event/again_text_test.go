package event

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStreamAgainText: a report with no text falls back to the answer
// that preceded it; a later report that is that one again (Result.Again,
// with more usage) keeps that answer, whatever messages came between,
// and a later report of its own takes the last message, as before.
func TestStreamAgainText(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		again bool
		want  string
	}{
		{name: "same-answer-again", again: true, want: "answer"},
		{name: "a-report-of-its-own", want: "later"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s, out := newStream(t, false)
			require.NoError(t, s.Emit(
				&Message{Role: RoleAssistant, Text: "answer"},
				&Result{Status: ResultSuccess, Usage: Usage{InputTokens: 1}},
				&Message{Role: RoleAssistant, Text: "later"},
				&Usage{InputTokens: 2},
				&Result{Status: ResultSuccess, Usage: Usage{InputTokens: 3}, Again: c.again},
			))
			r := s.Finish(Outcome{})
			require.NoError(t, CheckNDJSON(out.buf.Bytes()))
			require.Equal(t, c.want, r.Text)
			require.Equal(t, int64(3), r.Usage.InputTokens)
		})
	}
}
