package benchdata

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentharness/harness/adapters"
	"github.com/agentharness/harness/adapters/claude"
	"github.com/agentharness/harness/adapters/codex"
	"github.com/agentharness/harness/adapters/cursor"
	"github.com/agentharness/harness/adapters/gemini"
	"github.com/agentharness/harness/adapters/opencode"
	"github.com/agentharness/harness/event"
)

func TestGenerateEndsInSuccessWithFreshIDs(t *testing.T) {
	t.Parallel()
	for _, a := range []adapters.Adapter{claude.New(), codex.New(), cursor.New(), gemini.New(), opencode.New()} {
		t.Run(a.Name(), func(t *testing.T) {
			t.Parallel()
			cases, err := LoadCases(filepath.Join("..", "..", "..", "testdata", a.Name()))
			require.NoError(t, err)
			var one int64
			for _, c := range cases {
				one += int64(len(c.Data))
			}
			var buf bytes.Buffer
			n, err := Generate(&buf, cases, 2*one+1)
			require.NoError(t, err)
			require.Equal(t, int64(buf.Len()), n)
			require.True(t, bytes.HasSuffix(buf.Bytes(), []byte("\n")), "whole cases only")
			require.Zero(t, bytes.Count(buf.Bytes(), []byte("\n\n")), "no empty lines")
			// Each repetition renames ids its own way.
			require.Positive(t, bytes.Count(buf.Bytes(), []byte(`_r0c0"`)))
			require.Equal(t, bytes.Count(buf.Bytes(), []byte(`_r0c0"`)), bytes.Count(buf.Bytes(), []byte(`_r1c0"`)))

			var got *event.Result
			s := event.NewStream(event.StreamConfig{Run: "r", Start: event.SessionStart{Agent: a.Name()}})
			require.NoError(t, adapters.Normalize(&buf, a.NewParser(), s, adapters.NormalizeOptions{}))
			got = s.Finish(event.Outcome{NoProcess: true})
			require.Equal(t, event.ResultSuccess, got.Status, "the stream ends with the agent's successful terminal event")
		})
	}
}

// events counts the events a's parser and event.Stream make of data, but
// for usage: Claude's default mode settles what the per-call lines lack at
// the terminal result, which a generated corpus keeps only once.
func events(t *testing.T, a adapters.Adapter, data []byte) int64 {
	t.Helper()
	var usage int64
	s := event.NewStream(event.StreamConfig{Run: "r", Start: event.SessionStart{Agent: a.Name()}, Sink: func(ev event.Event) {
		if ev.Type == event.TypeUsage {
			usage++
		}
	}})
	require.NoError(t, adapters.Normalize(bytes.NewReader(data), a.NewParser(), s, adapters.NormalizeOptions{}))
	return s.Finish(event.Outcome{NoProcess: true}).Stats.Events - usage
}

// Every repetition must count as much as the first: none of it may be
// skipped as another session's, or dropped as a duplicate.
func TestRepetitionsAreNotSkipped(t *testing.T) {
	t.Parallel()
	for _, a := range []adapters.Adapter{claude.New(), codex.New(), cursor.New(), gemini.New(), opencode.New()} {
		t.Run(a.Name(), func(t *testing.T) {
			t.Parallel()
			cases, err := LoadCases(filepath.Join("..", "..", "..", "testdata", a.Name()))
			require.NoError(t, err)
			var one, three bytes.Buffer
			_, err = Generate(&one, cases, 1)
			require.NoError(t, err)
			_, err = Generate(&three, cases, int64(2*one.Len()+1))
			require.NoError(t, err)
			e1, e3 := events(t, a, one.Bytes()), events(t, a, three.Bytes())
			require.Greater(t, e1, int64(10))
			// session_start and result come once, whatever the length.
			require.GreaterOrEqual(t, e3, 3*(e1-2), "one repetition gives %d events, three give %d", e1, e3)
		})
	}
}
