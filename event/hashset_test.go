package event

import (
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHashSetIsExact: every member added stays a member across the
// merges, and nothing else becomes one.
func TestHashSetIsExact(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	var h hashSet
	in := map[uint64]bool{}
	for i := range 100_000 {
		x := r.Uint64() % 1_000_000
		if !h.has(x) {
			h.add(x)
		}
		in[x] = true
		if i%997 == 0 {
			for y := range in {
				require.True(t, h.has(y), "member %d lost after %d adds", y, i)
				break
			}
		}
	}
	require.Equal(t, len(in), h.len())
	for x := range in {
		require.True(t, h.has(x))
	}
	for range 10_000 {
		if x := r.Uint64(); !in[x] {
			require.False(t, h.has(x))
		}
	}
}

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

// TestHashSetSpreads: members that differ only in their high bits, only
// in their low bits, or are 0, are all found, and their neighbours are
// not, across the table's growths.
func TestHashSetSpreads(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	spreads := map[string]func(i int) uint64{
		"low bits":  func(i int) uint64 { return uint64(i) * 3 },
		"high bits": func(i int) uint64 { return uint64(i) << 44 },
		"powers":    func(i int) uint64 { return 1<<(i%64) + uint64(i/64) },
		"uniform":   func(int) uint64 { return r.Uint64() },
	}
	for name, spread := range spreads {
		var h hashSet
		in := map[uint64]bool{}
		for i := range 50_000 {
			if x := spread(i); !in[x] {
				h.add(x)
				in[x] = true
			}
		}
		require.False(t, h.has(0) && !in[0], name)
		h.add(0)
		in[0] = true
		require.Equal(t, len(in), h.len(), name)
		for x := range in {
			require.True(t, h.has(x), "%s: member %d", name, x)
			for _, y := range []uint64{x - 1, x + 1} {
				require.Equal(t, in[y], h.has(y), "%s: %d", name, y)
			}
		}
	}
}
