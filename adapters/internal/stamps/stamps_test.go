package stamps

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSpan(t *testing.T) {
	ms := func(raw string) (int64, bool) {
		n, err := strconv.ParseInt(raw, 10, 64)
		return n, err == nil
	}
	var s Span
	_, ok := s.MS(ms)
	require.False(t, ok, "none noted")
	s.Note("100")
	got, ok := s.MS(ms)
	require.True(t, ok)
	require.Zero(t, got, "one line: a span of 0")
	for _, raw := range []string{"", "150", "", "400"} {
		s.Note(raw)
	}
	got, ok = s.MS(ms)
	require.True(t, ok)
	require.EqualValues(t, 300, got, "the first to the last; an empty one is none")
	s.Note("90")
	_, ok = s.MS(ms)
	require.False(t, ok, "the last before the first")
	s.Note("x")
	_, ok = s.MS(ms)
	require.False(t, ok, "unreadable")
}
