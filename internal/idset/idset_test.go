package idset

import (
	"math/rand/v2"
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

// TestSetOfStrings: ids added are members, once (Add tells the first
// time), others are not; the zero Set is empty.
func TestSetOfStrings(t *testing.T) {
	t.Parallel()
	var s Set
	require.False(t, s.Has(""))
	require.Zero(t, s.Len())
	for i := range 20_000 {
		require.True(t, s.Add("call_"+strconv.Itoa(i)))
	}
	require.True(t, s.Add(""))
	require.False(t, s.Add(""))
	for i := range 20_000 {
		require.True(t, s.Has("call_"+strconv.Itoa(i)))
		require.False(t, s.Add("call_"+strconv.Itoa(i)))
		require.False(t, s.Has("other_"+strconv.Itoa(i)))
	}
	require.Equal(t, 20_001, s.Len())
}

// TestSetGrowsByShard: a Set's members are spread over its shards, none of
// which holds more than a small part of the set, so a growth copies a
// small part (one table of a million members grew 8 → 16 MB in one step).
func TestSetGrowsByShard(t *testing.T) {
	t.Parallel()
	var s Set
	for i := range 300_000 {
		s.Add("call_" + strconv.Itoa(i))
	}
	total, largest := 0, 0
	for _, h := range s.shards {
		total += len(h.slots)
		largest = max(largest, len(h.slots))
	}
	require.Equal(t, 300_000, s.Len())
	require.LessOrEqual(t, largest*16, total, "the largest table is %d of %d slots", largest, total)
}

// TestSetPutIsAdd: members given by Put, which the tables take later in
// batches, are members for Has, Add and Len at once, mixed with Add.
func TestSetPutIsAdd(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	var s Set
	in := map[string]bool{}
	for i := range 20_000 {
		id := "call_" + strconv.Itoa(r.IntN(15_000))
		switch r.IntN(10) {
		case 0:
			require.Equal(t, !in[id], s.Add(id), "Add(%s) after %d steps", id, i)
			in[id] = true
		case 1:
			require.Equal(t, in[id], s.Has(id), "Has(%s) after %d steps", id, i)
		case 2:
			require.Equal(t, len(in), s.Len())
		default:
			s.Put(id)
			in[id] = true
		}
	}
	for id := range in {
		require.True(t, s.Has(id))
	}
	require.False(t, s.Has("call_x"))
	var empty Set
	require.False(t, empty.Has("a"))
	require.Zero(t, empty.Len())
}
