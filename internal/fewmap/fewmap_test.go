package fewmap

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAsAMap holds Map to a Go map through random sets, gets and deletes,
// with as many entries as to cross linear both ways.
func TestAsAMap(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	var m Map[uint64, int]
	want := map[uint64]int{}
	for step := range 40000 {
		keys := uint64(4) // drift between few and many entries
		if step/4000%2 == 1 {
			keys = 150
		}
		key := rng.Uint64N(keys)
		switch rng.IntN(3) {
		case 0, 1:
			m.Set(key, step)
			want[key] = step
		default:
			m.Delete(key)
			delete(want, key)
		}
		require.Equal(t, len(want), m.Len())
		for k, v := range want {
			got, ok := m.Get(k)
			require.True(t, ok && m.Has(k), k)
			require.Equal(t, v, got, k)
		}
		_, ok := m.Get(1000)
		require.False(t, ok)
		vals, wantVals := m.Values(), make([]int, 0, len(want))
		for _, v := range want {
			wantVals = append(wantVals, v)
		}
		slices.Sort(vals)
		slices.Sort(wantVals)
		require.Equal(t, wantVals, vals)
	}
}
