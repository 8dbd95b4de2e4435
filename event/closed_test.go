package event

import (
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStreamRenamesAnIDReusedLongAfter: an id ended a hundred thousand
// calls ago is still known, whichever part of the set holds it.
func TestStreamRenamesAnIDReusedLongAfter(t *testing.T) {
	t.Parallel()
	var ids []string
	s := NewStream(StreamConfig{Run: testRun, Sink: func(ev Event) {
		if st, ok := ev.Body.(*ToolStart); ok && st.CallID[0] == 'x' {
			ids = append(ids, st.CallID)
		}
	}})
	require.NoError(t, s.Emit(&ToolStart{CallID: "x", Name: "n"}, &ToolEnd{CallID: "x"}))
	for i := range 100_000 {
		id := "c" + strconv.Itoa(i)
		require.NoError(t, s.Emit(&ToolStart{CallID: id, Name: "n"}, &ToolEnd{CallID: id}))
	}
	require.NoError(t, s.Emit(&ToolStart{CallID: "x", Name: "n"}, &ToolEnd{CallID: "x"}))
	require.Equal(t, []string{"x", "x#2"}, ids)
}

// TestStreamKeepsLittlePerEndedCall: what a Stream keeps of each ended
// call, to tell a reused id, is little more than its 8-byte hash (a map
// of the hashes kept 32 bytes a call at this size).
func TestStreamKeepsLittlePerEndedCall(t *testing.T) {
	const calls = 300_000
	ids := make([]string, calls)
	for i := range ids {
		ids[i] = "call_" + strconv.Itoa(i)
	}
	s := NewStream(StreamConfig{Run: testRun})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, id := range ids {
		require.NoError(t, s.Emit(&ToolStart{CallID: id, Name: "n"}, &ToolEnd{CallID: id}))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perCall := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / calls
	t.Logf("%.1f bytes kept per ended call", perCall)
	require.Less(t, perCall, 16.0, "bytes kept per ended call")
	runtime.KeepAlive(s)
	runtime.KeepAlive(ids)
}
